#!/usr/bin/env python3
"""Generate ``cudnnfe/_cdef.py`` (the cffi declarations) from the C header.

The C header ``include/cudnnfe/cudnnfe.h`` is the single source of truth. This
script turns it into a string that ``cffi.FFI.cdef`` accepts in ABI mode:

* comments are removed;
* ``#include`` lines, the include guard and the ``extern "C"`` block markers
  (everything inside ``#ifdef __cplusplus`` ... ``#endif``) are dropped;
* the ``#ifdef CUDNNFE_EXPERIMENTAL`` block (the header's experimental part) is
  kept, as if the macro were defined: the package offers those functions;
* ``#define NAME <integer>`` lines are kept (cffi exposes them as integer
  constants on the loaded library);
* the C convenience macros ``#define cudnnfe_X_init(o) cudnnfe_X_init_sized((o),
  sizeof(*(o)))`` are dropped (the package calls the ``_sized`` functions
  with cffi's own struct sizes); any other macro is an error, because the
  header promises to contain none.

The output also lists every integer constant in a ``CONSTANTS`` dict, which
the package uses to check that its Python enumerations are complete.

Usage::

    python3 bindings/python/tools/gen_cdef.py            # rewrite _cdef.py and _cffi_abi.py
    python3 bindings/python/tools/gen_cdef.py --check    # exit 1 when stale
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
PACKAGE_DIR = HERE.parent / "cudnnfe"
DEFAULT_HEADER = HERE.parent.parent.parent / "include" / "cudnnfe" / "cudnnfe.h"
DEFAULT_OUTPUT = PACKAGE_DIR / "_cdef.py"

_DEFINE_INT = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)\s+(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*$")
_DEFINE_BARE = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)\s*$")
# The header's only function-like macros: init functions passing sizeof.
_DEFINE_SIZED_INIT = re.compile(
    r"^#\s*define\s+(cudnnfe_\w+_init)\((\w+)\)\s+\1_sized\(\(\2\),\s*sizeof\(\*\(\2\)\)\)\s*$")


def _join_continuations(text: str) -> str:
    """Join backslash-continued lines, keeping the line count."""
    out: List[str] = []
    pending = ""
    extra = 0
    for line in text.split("\n"):
        if line.endswith("\\"):
            pending += line[:-1] + " "
            extra += 1
            continue
        out.append(pending + line)
        out.extend([""] * extra)
        pending, extra = "", 0
    if pending:
        out.append(pending)
    return "\n".join(out)


class HeaderError(Exception):
    """The header contains something the generator cannot translate."""


def _strip_comments(text: str) -> str:
    """Remove /* */ and // comments, keeping line breaks so line numbers hold."""
    out: List[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise HeaderError("unterminated /* comment")
            out.append("\n" * text.count("\n", i, end))
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def generate(header_text: str) -> Tuple[str, Dict[str, int]]:
    """Return (cdef string, integer constants) for the given header text."""
    text = _join_continuations(_strip_comments(header_text))
    lines: List[str] = []
    constants: Dict[str, int] = {}
    guard: str = ""
    skip_depth = 0  # >0 while inside #ifdef __cplusplus ... #endif
    cond_depth = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].strip()
            word = directive.split(None, 1)[0] if directive else ""
            if word in ("ifdef", "ifndef", "if"):
                cond_depth += 1
                if skip_depth:
                    skip_depth += 1
                elif word == "ifdef" and directive.split()[1:] == ["__cplusplus"]:
                    skip_depth = 1
                elif word == "ifndef" and not guard and cond_depth == 1:
                    guard = directive.split()[1]
                elif word == "ifdef" and directive.split()[1:] == ["CUDNNFE_EXPERIMENTAL"]:
                    pass  # the experimental part: the package offers it, so it is kept
                elif word != "ifndef" or cond_depth != 1:
                    raise HeaderError(f"line {lineno}: unsupported conditional {stripped!r}")
                continue
            if word in ("else", "elif"):
                if not skip_depth:
                    raise HeaderError(f"line {lineno}: #{word} outside a __cplusplus block")
                continue
            if word == "endif":
                cond_depth -= 1
                if skip_depth:
                    skip_depth -= 1
                continue
            if skip_depth:
                continue
            if word == "include":
                continue
            if word == "define":
                m = _DEFINE_INT.match(stripped)
                if m:
                    name, value = m.group(1), int(m.group(2), 0)
                    if name in constants:
                        raise HeaderError(f"line {lineno}: {name} defined twice")
                    constants[name] = value
                    lines.append(f"#define {name} {value}")
                    continue
                m = _DEFINE_BARE.match(stripped)
                if m and m.group(1) == guard:
                    continue
                if _DEFINE_SIZED_INIT.match(stripped):
                    continue
                raise HeaderError(
                    f"line {lineno}: macro is not an integer constant: {stripped!r}")
            raise HeaderError(f"line {lineno}: unsupported directive {stripped!r}")
        if skip_depth:
            continue
        if not stripped:
            if lines and lines[-1] != "":
                lines.append("")
            continue
        lines.append(line)
    if cond_depth != 0:
        raise HeaderError("unbalanced #if/#endif")
    while lines and lines[-1] == "":
        lines.pop()
    while lines and lines[0] == "":
        lines.pop(0)
    return "\n".join(lines) + "\n", constants


def render(header_text: str) -> str:
    """Return the full text of _cdef.py for the given header text."""
    cdef, constants = generate(header_text)
    if '"""' in cdef or "\\" in cdef:
        raise HeaderError("declarations contain a triple quote or a backslash")
    width = max(len(k) for k in constants) if constants else 0
    const_lines = "".join(f"    {k!r}:{' ' * (width - len(k))} {v},\n" for k, v in constants.items())
    return (
        "# Generated by bindings/python/tools/gen_cdef.py from include/cudnnfe/cudnnfe.h.\n"
        "# Do not edit: run `python3 bindings/python/tools/gen_cdef.py` after changing the header.\n"
        '"""cffi declarations of the cudnnfe C ABI (generated)."""\n'
        "from typing import Dict\n\n"
        f"HEADER_VERSION = {constants.get('CUDNNFE_VERSION', 0)}\n"
        f"HEADER_ABI_VERSION = {constants.get('CUDNNFE_ABI_VERSION', 0)}\n\n"
        'CDEF = """\n' + cdef + '"""\n\n'
        "CONSTANTS: Dict[str, int] = {\n" + const_lines + "}\n"
    )


def render_abi_module(header_text: str) -> str:
    """Return the text of _cffi_abi.py: the declarations compiled by cffi's out-of-line ABI
    mode, so that importing cudnnfe parses no C (pycparser on the whole header took most of
    the import time)."""
    import contextlib
    import io
    import tempfile

    import cffi

    cdef, _ = generate(header_text)
    builder = cffi.FFI()
    builder.cdef(cdef)
    builder.set_source("cudnnfe._cffi_abi", None)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "_cffi_abi.py"
        with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating ..."
            builder.emit_python_code(str(path))
        body = path.read_text(encoding="utf-8")
    return (
        "# Generated by bindings/python/tools/gen_cdef.py (cffi's out-of-line ABI mode) from\n"
        "# include/cudnnfe/cudnnfe.h. Do not edit: run the tool after changing the header.\n"
        + body)


def main(argv: "List[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--header", type=Path, default=DEFAULT_HEADER)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the output file differs from what would be generated")
    args = parser.parse_args(argv)
    abi_output = args.output.with_name("_cffi_abi.py")
    try:
        header = args.header.read_text(encoding="utf-8")
        outputs = {args.output: render(header), abi_output: render_abi_module(header)}
    except HeaderError as exc:
        print(f"gen_cdef: {args.header}: {exc}", file=sys.stderr)
        return 2
    if args.check:
        stale = [p for p, text in outputs.items()
                 if (p.read_text(encoding="utf-8") if p.exists() else "") != text]
        for p in stale:
            print(f"gen_cdef: {p} is stale; run {Path(__file__).name}", file=sys.stderr)
        return 1 if stale else 0
    for p, text in outputs.items():
        p.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
