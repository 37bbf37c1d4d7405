#!/usr/bin/env python3
"""Writes src/backend/nvidia_api_lists.h: the part of the cuDNN backend API and the CUDA
runtime API that cudnnfe's sources name (enum values, handle types, function types), as
X-macro lists, so that cudnnfe builds with a C++ compiler alone (it loads both libraries
with dlopen and needs their ABI facts, not NVIDIA's files).

The facts come from NVIDIA's headers (the pinned wheels of .ci/header-wheels.txt, or a CUDA
toolkit / cuDNN install): the C preprocessor expands them, this script finds the enums,
typedefs and prototypes that src/ uses, and a compiled program prints the enum values.
tests/nvidia_api_check.cpp checks the result against the headers it was made from (and any
others found at build time); `--check` says whether the committed file is current.

usage: scripts/gen_nvidia_api.py [--check] [--cudnn-include DIR] [--cuda-include DIR]
  (default include dirs: CUDNN_INCLUDE_DIR / CUDA_INCLUDE_DIR, else build-deps/headers)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "backend" / "nvidia_api_lists.h"
DECLARATIONS = ROOT / "src" / "backend" / "nvidia_api.h"  # the hand-written half
IDENT = re.compile(r"\b(CUDNN_[A-Z0-9_]+|cudnn[A-Z][A-Za-z0-9_]*|cuda[A-Z][A-Za-z0-9_]*)\b")
# Names of the sources that are cudnnfe's own, not NVIDIA's.
OWN = re.compile(r"^(cudnnfe|cuda_|CUDNNFE_)")


def used_identifiers():
    """Every cuDNN / CUDA runtime identifier src/ names outside the declarations."""
    names = set()
    for path in sorted((ROOT / "src").rglob("*")):
        if path.suffix not in (".h", ".cpp") or path in (OUT, DECLARATIONS):
            continue
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", path.read_text(), flags=re.S)
        text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
        names.update(IDENT.findall(text))
    return sorted(n for n in names if not OWN.match(n))


def preprocess(cudnn_inc, cuda_inc):
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "inc.c"
        src.write_text("#include <cudnn_graph.h>\n#include <cuda_runtime_api.h>\n")
        return subprocess.run(["cc", "-E", "-P", f"-I{cudnn_inc}", f"-I{cuda_inc}", str(src)],
                              check=True, capture_output=True, text=True).stdout


def parse_enums(text):
    """[(tag, typedef name, [enumerator, ...])] of every enum declaration."""
    blocks = []
    for m in re.finditer(r"(typedef\s+)?enum\s*(\w*)\s*\{(.*?)\}\s*(\w*)\s*;", text, re.S):
        members = [e.split("=")[0].strip() for e in m.group(3).split(",")]
        blocks.append([m.group(2), m.group(4) if m.group(1) else "", [e for e in members if e]])
    for m in re.finditer(r"typedef\s+enum\s+(\w+)\s+(\w+)\s*;", text):
        for b in blocks:
            if b[0] == m.group(1) and not b[1]:
                b[1] = m.group(2)
    return blocks


def parse_prototypes(text, names):
    """{function: (return type, parameter list)} for the functions in ``names``."""
    flat = re.sub(r"\s+", " ", text)
    out = {}
    for name in names:
        m = re.search(r"(?:^|[;}] )(?:extern )?([\w ]+?\**) ?\b" + name + r" ?\(([^)]*)\) ?;",
                      flat)
        if m:
            out[name] = (_pointers(m.group(1).replace("extern ", "")), _pointers(m.group(2)))
    return out


def macro_names(args):
    """Every name NVIDIA's headers #define (CUDNN_VERSION, cudaStreamNonBlocking, ...)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "inc.c"
        src.write_text("#include <cudnn_graph.h>\n#include <cuda_runtime_api.h>\n")
        out = subprocess.run(["cc", "-E", "-dM", f"-I{args.cudnn_include}",
                              f"-I{args.cuda_include}", str(src)],
                             check=True, capture_output=True, text=True).stdout
    return {line.split()[1].split("(")[0] for line in out.splitlines()
            if line.startswith("#define ")}


def _pointers(decl):
    """``type *name`` spacing: one space before a run of stars, none after it."""
    decl = re.sub(r"\s*\*\s*", "*", decl.strip())
    decl = re.sub(r"(?<=[\w)])\*", " *", decl)
    return re.sub(r"\s*,\s*", ", ", decl)


def enum_values(enumerators, cudnn_inc, cuda_inc):
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "values.c"
        lines = ["#include <stdio.h>", "#include <cudnn_graph.h>",
                 "#include <cuda_runtime_api.h>", "int main(void) {"]
        lines += [f'  printf("%s %lld\\n", "{e}", (long long){e});' for e in enumerators]
        src.write_text("\n".join(lines + ["  return 0;", "}"]) + "\n")
        exe = Path(tmp) / "values"
        subprocess.run(["cc", f"-I{cudnn_inc}", f"-I{cuda_inc}", str(src), "-o", str(exe)],
                       check=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


HANDLES = {  # opaque handle types: what they point to never matters to cudnnfe
    "cudnnHandle_t": "struct cudnnContext *",
    "cudnnBackendDescriptor_t": "void *",
    "cudaStream_t": "struct CUstream_st *",
    "cudaEvent_t": "struct CUevent_st *",
    "cudaGraph_t": "struct CUgraph_st *",
    "cudaGraphExec_t": "struct CUgraphExec_st *",
}
STRUCTS = {"cudaDeviceProp"}  # used through pointers only (device.cpp reads `name` at 0)
OTHER_TYPES = {"cudnnFraction_t"}  # declared by hand in backend/nvidia_api.h, checked there


def render(used, blocks, prototypes, values, macros, versions):
    lines = [
        "// Generated by scripts/gen_nvidia_api.py from NVIDIA's headers; do not edit.",
        f"// Read from: {versions}.",
        "// The cuDNN backend API and CUDA runtime API facts cudnnfe's sources use,",
        "// as X-macro lists: backend/nvidia_api.h declares them, tests/nvidia_api_check.cpp",
        "// checks them against NVIDIA's headers. Regenerate after naming a new one in src/.",
        "#pragma once", "", "// One list entry a line, as generated:", "// clang-format off", "",
        "// The cuDNN release these facts were read from (its CUDNN_VERSION).",
        f"#define CUDNNFE_DECLARED_CUDNN_VERSION {values['CUDNN_VERSION']}", ""]
    wanted = set(used) - set(macros) - {"CUDNN_VERSION"}
    table = []
    for tag, typedef, members in blocks:
        mine = sorted((m for m in members if m in wanted), key=lambda m: (values[m], m))
        if not mine and tag not in wanted and typedef not in wanted:
            continue
        # Every enum gets a tag (invented where NVIDIA's has none) and a type name (the tag
        # where NVIDIA declares none), so one declaration form serves all.
        name = typedef or tag
        tag = tag or f"cudnnfe_{name}_tag"
        macro = "CUDNNFE_ENUM_" + name
        lines.append(f"#define {macro}(X) \\")
        lines += [f"  X({m}, {values[m]}) \\" for m in mine]
        lines.append("")
        table.append((tag, name, macro))
    lines.append("// The enums: X(tag, type name, enumerator list).")
    lines.append("#define CUDNNFE_NVIDIA_ENUMS(X) \\")
    lines += [f"  X({t}, {n}, {m}) \\" for t, n, m in table]
    lines.append("")
    lines.append("// Constants NVIDIA's headers define as macros: X(name, value).")
    lines.append("#define CUDNNFE_NVIDIA_CONSTANTS(X) \\")
    lines += [f"  X({m}, {values[m]}) \\" for m in macros if m != "CUDNN_VERSION"]
    lines.append("")
    lines.append("// The functions cudnnfe loads: X(return type, name, (parameters)).")
    lines.append("#define CUDNNFE_NVIDIA_FUNCTIONS(X) \\")
    for name in sorted(prototypes):
        ret, params = prototypes[name]
        lines.append(f"  X({ret}, {name}, ({params})) \\")
    lines.append("")
    return "\n".join(lines) + "\n"


def versions_of(cudnn_inc, cuda_inc):
    out = []
    for path, keys in ((Path(cudnn_inc) / "cudnn_version.h",
                        ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL")),
                       (Path(cuda_inc) / "cuda_runtime_api.h", ("CUDART_VERSION",))):
        text = path.read_text() if path.exists() else ""
        got = [re.search(rf"#define\s+{k}\s+(\d+)", text) for k in keys]
        out.append(".".join(m.group(1) for m in got if m) or "?")
    return f"cuDNN {out[0]}, CUDA runtime {out[1]}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the committed file differs from what would be written")
    deps = ROOT / "build-deps" / "headers" / "nvidia"
    ap.add_argument("--cudnn-include", default=os.environ.get("CUDNN_INCLUDE_DIR",
                                                              str(deps / "cudnn" / "include")))
    ap.add_argument("--cuda-include", default=os.environ.get("CUDA_INCLUDE_DIR",
                                                             str(deps / "cu13" / "include")))
    args = ap.parse_args(argv)
    used = used_identifiers()
    text = preprocess(args.cudnn_include, args.cuda_include)
    blocks = parse_enums(text)
    members = {m for _, _, ms in blocks for m in ms}
    types = {n for t, d, _ in blocks for n in (t, d) if n}
    enumerators = [n for n in used if n in members]
    functions = [n for n in used if n not in members and n not in types and n not in HANDLES
                 and n not in STRUCTS and n not in OTHER_TYPES]
    prototypes = parse_prototypes(text, functions)
    macros = [n for n in functions if n not in prototypes and n in macro_names(args)]
    missing = [n for n in functions if n not in prototypes and n not in macros]
    if missing:
        print(f"not found in NVIDIA's headers: {', '.join(missing)}", file=sys.stderr)
        return 2
    values = enum_values(enumerators + macros + ["CUDNN_VERSION"], args.cudnn_include,
                         args.cuda_include)
    result = render(used, blocks, prototypes, values, macros,
                    versions_of(args.cudnn_include, args.cuda_include))
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        if current != result:
            print(f"{OUT.relative_to(ROOT)} is stale: run scripts/gen_nvidia_api.py")
            return 1
        print(f"{OUT.relative_to(ROOT)} is current")
        return 0
    OUT.write_text(result)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(enumerators)} enumerators, "
          f"{len(prototypes)} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
