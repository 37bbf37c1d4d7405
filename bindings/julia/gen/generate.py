#!/usr/bin/env python3
"""Generate the low layer of CuDNNFE.jl from the ABI manifest.

Reads  abi/manifest.json                  (the one model of the C header,
                                            written by scripts/gen_abi_manifest.py;
                                            refused when older than the header)
Writes bindings/julia/src/LibCuDNNFE.jl   (one `ccall` wrapper per C function,
                                            a `const` per integer constant, a
                                            Julia `struct` per C struct, opaque
                                            types for the handles)
       bindings/julia/gen/manifest.json   (every function, constant and struct
                                            with C and Julia types and the C
                                            layout: read by tests_py/)

Both outputs are committed; `--check` exits 1 when they are stale, and
bindings/julia/tests_py/test_generated.py fails in that case too. This file
parses no C: `--header H` builds the ABI model of another header in memory
with scripts/cudnnfe_abi.py (the one parser), for tests. C types are mapped
to Julia by name, never by the underlying type of a <stdint.h> name.

Usage: python3 bindings/julia/gen/generate.py [--check] [--header H]
           [--abi-manifest F] [--julia-out F] [--manifest-out F]
"""
import argparse
import json
import os
import sys


HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)  # bindings/julia
REPO = os.path.dirname(os.path.dirname(PKG))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import cudnnfe_abi  # noqa: E402

DEFAULT_HEADER = cudnnfe_abi.DEFAULT_HEADER
DEFAULT_ABI_MANIFEST = cudnnfe_abi.DEFAULT_MANIFEST
DEFAULT_JULIA_OUT = os.path.join(PKG, "src", "LibCuDNNFE.jl")
DEFAULT_MANIFEST_OUT = os.path.join(HERE, "manifest.json")

# The C ABI this layout model describes: LP64 (Linux and macOS on x86_64 and
# aarch64), where Julia lays out an isbits struct exactly as C does.
POINTER_SIZE = 8

# Fixed-width and standard C scalar types: C name -> (Julia type, size).
# Alignment equals size for every one of these on LP64.
SCALARS = {
    "int8_t": ("Int8", 1),
    "uint8_t": ("UInt8", 1),
    "int16_t": ("Int16", 2),
    "uint16_t": ("UInt16", 2),
    "int32_t": ("Int32", 4),
    "uint32_t": ("UInt32", 4),
    "int64_t": ("Int64", 8),
    "uint64_t": ("UInt64", 8),
    "size_t": ("Csize_t", 8),
    "float": ("Cfloat", 4),
    "double": ("Cdouble", 8),
    "char": ("Cchar", 1),
    "int": ("Cint", 4),
    "unsigned int": ("Cuint", 4),
}

JULIA_RESERVED = {
    "abstract", "baremodule", "begin", "break", "catch", "const", "continue",
    "do", "else", "elseif", "end", "export", "false", "finally", "for",
    "function", "global", "if", "import", "in", "isa", "let", "local", "macro",
    "module", "mutable", "primitive", "public", "quote", "return", "struct",
    "true", "try", "type", "using", "where", "while", "outer",
}


HeaderError = cudnnfe_abi.HeaderError


def julia_name(name):
    """A C identifier as a Julia identifier (reserved words get a `_`)."""
    return name + "_" if name in JULIA_RESERVED else name


# --------------------------------------------------------------------------
# Julia types of the manifest's C types
# --------------------------------------------------------------------------

class JuliaTypes:
    """Spells the manifest's structured C types in Julia."""

    def __init__(self, abi):
        self.named = {t["name"] for t in abi["typedefs"]}
        self.named |= {o["typedef"] for o in abi["opaque"]} | {s["typedef"] for s in abi["structs"]}
        self.struct_tags = {s["name"]: s["typedef"] for s in abi["structs"]}

    def julia_type(self, t, role):
        """role: 'param', 'buffer' (a const char * followed by its size),
        'return', 'field', 'pointee'."""
        if t["kind"] == "void":
            return "Cvoid"
        if t["kind"] == "name":
            name = t["name"]
            if name in SCALARS:
                return SCALARS[name][0]
            if name in self.named:
                return name
            if name.startswith("struct ") and name[len("struct "):] in self.struct_tags:
                return self.struct_tags[name[len("struct "):]]
            raise HeaderError("no Julia mapping for C type %r" % name)
        if t["kind"] == "array":
            if role != "field":
                raise HeaderError("arrays are only supported as struct fields")
            return "NTuple{%d, %s}" % (t["length"], self.julia_type(t["of"], "field"))
        inner = t["to"]
        if inner["kind"] == "name" and inner["name"] == "char":
            if inner["const"] and role in ("param", "return", "pointee"):
                return "Cstring"  # NUL-terminated string
            return "Ptr{Cchar}"  # struct fields, byte buffers, writable buffers
        return "Ptr{%s}" % self.julia_type(inner, "pointee")


def _is_size_t(t):
    return t is not None and t["kind"] == "name" and t["name"] == "size_t"


def _param_role(t, nxt):
    """A `const char *` followed by a size_t is a byte buffer, not a string."""
    if t["kind"] == "ptr" and t["to"]["kind"] == "name" and t["to"]["name"] == "char" and \
            t["to"]["const"] and _is_size_t(nxt):
        return "buffer"
    return "param"


def julia_records(abi):
    """The manifest's records with their Julia spellings: (decls, constants)
    as render_julia and render_manifest take them, decls as (line, kind,
    record) in header order."""
    jt = JuliaTypes(abi)
    decls = []
    for t in abi["typedefs"]:
        # A callback typedef is a function pointer: Julia passes a @cfunction.
        julia_type = "Ptr{Cvoid}" if t.get("callback") else SCALARS[t["c_type"]][0]
        decls.append((t["line"], "alias", {"name": t["name"], "c_type": t["c_type"],
                                "julia_type": julia_type}))
    for o in abi["opaque"]:
        decls.append((o["line"], "opaque", {"name": o["name"], "typedef": o["typedef"]}))
    for s in abi["structs"]:
        fields = [{"name": f["name"], "julia_name": julia_name(f["name"]), "c_type": f["c_type"],
                   "julia_type": jt.julia_type(f["type"], "field"), "offset": f["offset"],
                   "size": f["size"], "align": f["align"]} for f in s["fields"]]
        decls.append((s["line"], "struct", {"name": s["name"], "typedef": s["typedef"], "size": s["size"],
                                 "align": s["align"], "fields": fields}))
    for f in abi["functions"]:
        ps = f["params"]
        params = [{"name": p["name"], "julia_name": julia_name(p["name"]), "c_type": p["c_type"],
                   "julia_type": jt.julia_type(
                       p["type"], _param_role(p["type"], ps[i + 1]["type"] if i + 1 < len(ps)
                                              else None))} for i, p in enumerate(ps)]
        decls.append((f["line"], "function", {"name": f["name"], "c_return": f["c_return"],
                                   "julia_return": jt.julia_type(f["return"], "return"),
                                   "params": params, "doc": f["doc"]}))
    constants = [{"name": c["name"], "value": c["value"], "group": c["group"],
                  "julia_type": c["group"] or "Int"} for c in abi["constants"]]
    return sorted(decls, key=lambda d: d[0]), constants

# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

JULIA_PRELUDE = '''\
# This file is generated by bindings/julia/gen/generate.py from
# include/cudnnfe/cudnnfe.h. DO NOT EDIT: change the header, then run
#     python3 bindings/julia/gen/generate.py
# (bindings/julia/tests_py checks that this file is up to date).
#
# The low layer of CuDNNFE.jl: one `ccall` wrapper per C function, with the
# C names and argument order; a `const` per integer constant; a Julia
# `struct` per C struct with the C layout; opaque types for the handles.
# Status codes are returned, not thrown: see CuDNNFE for the idiomatic API.
module LibCuDNNFE

import Libdl

"""
    libcudnnfe

Path of the cudnnfe shared library that every wrapper below calls. Set once by
`__init__` from `find_libcudnnfe()`: the environment variable
`CUDNNFE_LIBRARY` (a path) if set, else `Libdl.find_library` over the system
search path and the repository's `build*/` directories.
"""
libcudnnfe = "libcudnnfe"

"""
    find_libcudnnfe() -> String

The shared library to load: `ENV["CUDNNFE_LIBRARY"]` when set (it must
exist), else the first of `libcudnnfe`, `libcudnnfe.so.<ABI major>` found
by `Libdl.find_library` on the system search path or in the repository's
`build*/` directories (for `] dev bindings/julia` in a checkout).
Returns the plain name "libcudnnfe" when nothing is found, so that loading
the package works and the first call reports the failure.
"""
function find_libcudnnfe()
    path = get(ENV, "CUDNNFE_LIBRARY", "")
    if !isempty(path)
        isfile(path) || error("CUDNNFE_LIBRARY=$(repr(path)) is not a file")
        return abspath(path)
    end
    repo = normpath(joinpath(@__DIR__, "..", "..", ".."))
    dirs = String[]
    if isdir(repo)
        for d in readdir(repo)
            startswith(d, "build") && isdir(joinpath(repo, d)) && push!(dirs, joinpath(repo, d))
        end
    end
    names = ["libcudnnfe", "libcudnnfe.so.$(CUDNNFE_ABI_VERSION)"]
    found = Libdl.find_library(names)  # system search path first
    isempty(found) && (found = Libdl.find_library(names, dirs))
    isempty(found) && return "libcudnnfe"
    # find_library returns a name or a path; make it a path where possible.
    handle = Libdl.dlopen(found; throw_error = false)
    handle === nothing && return found
    return Libdl.dlpath(handle)
end

function __init__()
    global libcudnnfe = find_libcudnnfe()
    return nothing
end
'''


def julia_doc(text):
    return text.replace("\\", "\\\\").replace("$", "\\$").replace('"""', '\\"\\"\\"')


def render_julia(decls, constants):
    out = [JULIA_PRELUDE]
    by_group = {}
    for c in constants:
        by_group.setdefault(c["group"], []).append(c)

    out.append("\n# ---- Constants " + "-" * 62 + "\n\n")
    for c in by_group.get(None, []):
        out.append("const %s = %d\n" % (c["name"], c["value"]))

    out.append("\n# ---- Enumerations (fixed 32-bit integers) and other scalar typedefs " + "-" * 9 + "\n")
    for line, kind, rec in decls:
        if kind != "alias":
            continue
        out.append("\n# C: typedef %s %s;\n" % (rec["c_type"], rec["name"]))
        out.append("const %s = %s\n" % (rec["name"], rec["julia_type"]))
        for c in by_group.get(rec["name"], []):
            out.append("const %s = %s(%d)\n" % (c["name"], rec["name"], c["value"]))

    out.append("\n# ---- Opaque objects " + "-" * 57 + "\n")
    for line, kind, rec in decls:
        if kind != "opaque":
            continue
        out.append("\n# C: typedef struct %s %s; (only ever used through pointers)\n"
                   % (rec["name"], rec["typedef"]))
        out.append("mutable struct %s end\n" % rec["name"])
        out.append("const %s = %s\n" % (rec["typedef"], rec["name"]))

    out.append("\n# ---- Structs (same layout as C: %d-byte pointers) " % POINTER_SIZE + "-" * 29 + "\n")
    for line, kind, rec in decls:
        if kind != "struct":
            continue
        out.append('\n"""\nC: `typedef struct %s {...} %s;` (%d bytes, alignment %d).\n"""\n'
                   % (rec["name"], rec["typedef"], rec["size"], rec["align"]))
        out.append("struct %s\n" % rec["name"])
        for f in rec["fields"]:
            out.append("    %s::%s  # %s at %d\n" % (f["julia_name"], f["julia_type"], f["c_type"], f["offset"]))
        out.append("end\n")
        out.append("const %s = %s\n" % (rec["typedef"], rec["name"]))

    out.append("\n# ---- Functions " + "-" * 61 + "\n")
    for line, kind, rec in decls:
        if kind != "function":
            continue
        cparams = ", ".join(
            p["c_type"] + ("" if p["c_type"].endswith("*") else " ") + p["name"]
            for p in rec["params"]) or "void"
        proto = "%s %s(%s)" % (rec["c_return"], rec["name"], cparams)
        argnames = ", ".join(p["julia_name"] for p in rec["params"])
        doc = "    %s(%s) -> %s\n\nC: `%s`" % (rec["name"], argnames, rec["julia_return"], proto)
        if rec["doc"]:
            doc += "\n\n" + rec["doc"]
        out.append('\n"""\n%s\n"""\n' % julia_doc(doc))
        out.append("function %s(%s)\n" % (rec["name"], argnames))
        types = ", ".join(p["julia_type"] for p in rec["params"])
        if len(rec["params"]) == 1:
            types += ","
        call = "    ccall((:%s, libcudnnfe), %s, (%s)" % (rec["name"], rec["julia_return"], types)
        if len(call) > 92:
            call = "    ccall((:%s, libcudnnfe), %s,\n          (%s)" % (
                rec["name"], rec["julia_return"], types)
        if rec["params"]:
            call += ",\n          " + argnames
        out.append(call + ")\n")
        out.append("end\n")

    names = [c["name"] for c in constants]
    for line, kind, rec in decls:
        if kind in ("alias", "function"):
            names.append(rec["name"])
        elif kind in ("opaque", "struct"):
            names.extend([rec["name"], rec["typedef"]])
    out.append("\n# ---- Exports " + "-" * 63 + "\n\n")
    line = "export"
    lines = []
    for i, n in enumerate(names):
        piece = " " + n + ("," if i + 1 < len(names) else "")
        if len(line) + len(piece) > 92:
            lines.append(line)
            line = "      "
            piece = piece.lstrip(" ")
            line += piece
        else:
            line += piece
    lines.append(line)
    out.append("\n".join(lines) + "\n")
    out.append("\nend # module LibCuDNNFE\n")
    return "".join(out)


def render_manifest(decls, constants, abi):
    def strip(rec, drop=("line",)):
        return {k: v for k, v in rec.items() if k not in drop}

    manifest = {
        "generator": "bindings/julia/gen/generate.py",
        "source": "abi/manifest.json (from %s)" % abi["generator"],
        "header": abi["header"],
        "header_sha256": abi["header_sha256"],
        "abi": {"data_model": "LP64", "pointer_size": POINTER_SIZE},
        "julia_module": "LibCuDNNFE",
        "library_variable": "libcudnnfe",
        "type_rules": {
            "const char * parameter or return": "Cstring (NUL-terminated string)",
            "const char * parameter followed by a size_t parameter": "Ptr{Cchar} (byte buffer)",
            "char * or const char * struct field": "Ptr{Cchar}",
            "T * (any other pointer)": "Ptr{T}",
            "T[N] struct field": "NTuple{N, T}",
        },
        "scalars": {k: v[0] for k, v in SCALARS.items()},
        "constants": [strip(c) for c in constants],
        "typedefs": [strip(r) for _, k, r in decls if k == "alias"],
        "opaque": [strip(r) for _, k, r in decls if k == "opaque"],
        "structs": [strip(r) for _, k, r in decls if k == "struct"],
        "functions": [strip(r, ("line", "doc")) for _, k, r in decls if k == "function"],
    }
    return json.dumps(manifest, indent=1, ensure_ascii=True) + "\n"


def load_abi(header=None, abi_manifest=DEFAULT_ABI_MANIFEST):
    """The ABI model: of `header` when given (parsed in memory), else the
    committed abi/manifest.json, refused when the header has changed since."""
    if header is not None:
        return cudnnfe_abi.manifest_from_header(header)
    return cudnnfe_abi.load(abi_manifest, DEFAULT_HEADER)


def generate(abi):
    decls, constants = julia_records(abi)
    return render_julia(decls, constants), render_manifest(decls, constants, abi)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", default=None,
                    help="parse this header instead of reading abi/manifest.json")
    ap.add_argument("--abi-manifest", default=DEFAULT_ABI_MANIFEST)
    ap.add_argument("--julia-out", default=DEFAULT_JULIA_OUT)
    ap.add_argument("--manifest-out", default=DEFAULT_MANIFEST_OUT)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if the outputs are missing or stale")
    args = ap.parse_args(argv)
    try:
        julia, manifest = generate(load_abi(args.header, args.abi_manifest))
    except (HeaderError, cudnnfe_abi.ParseError) as e:
        print("generate.py: %s: %s" % (args.header or args.abi_manifest, e), file=sys.stderr)
        return 2
    stale = []
    for path, content in ((args.julia_out, julia), (args.manifest_out, manifest)):
        try:
            with open(path, encoding="utf-8", newline="") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == content:
            continue
        stale.append(path)
        if not args.check:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(content)
    if args.check:
        for path in stale:
            print("stale: %s (run python3 bindings/julia/gen/generate.py)" % path, file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        print("wrote %s" % os.path.relpath(path, REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
