#!/usr/bin/env python3
"""Generate the low layer of CuDNNFE.jl from the C header.

Reads  include/cudnnfe/cudnnfe.h
Writes bindings/julia/src/LibCuDNNFE.jl   (one `ccall` wrapper per C function,
                                            a `const` per integer constant, a
                                            Julia `struct` per C struct, opaque
                                            types for the handles)
       bindings/julia/gen/manifest.json   (every function, constant and struct
                                            with C and Julia types and the C
                                            layout: read by tests_py/)

Both outputs are committed; `--check` exits 1 when they are stale, and
bindings/julia/tests_py/test_generated.py fails in that case too.

The header is preprocessed here, not by a C preprocessor, so that the integer
`#define`s survive: comments are blanked (line numbers kept), `#include`s, the
include guard and the `#ifdef __cplusplus` blocks are dropped, `#define NAME
<integer>` lines become constants, and any other directive is an error. What
remains is parsed by pycparser after a prelude of typedefs for the <stdint.h>
and <stddef.h> names, which are mapped to Julia by name, never by the
prelude's underlying type.

Usage: python3 bindings/julia/gen/generate.py [--check] [--header H]
           [--julia-out F] [--manifest-out F]
"""
import argparse
import hashlib
import json
import os
import re
import sys

try:
    from pycparser import c_ast, c_parser
except ImportError:  # pragma: no cover - exercised only without pycparser
    sys.exit("generate.py needs pycparser: python3 -m pip install pycparser")

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)  # bindings/julia
REPO = os.path.dirname(os.path.dirname(PKG))
DEFAULT_HEADER = os.path.join(REPO, "include", "cudnnfe", "cudnnfe.h")
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

# Typedefs that stand in for <stdint.h> / <stddef.h>; pycparser needs them to
# parse, the generator never looks at their right-hand sides.
PRELUDE_TYPES = {
    "int8_t": "signed char",
    "uint8_t": "unsigned char",
    "int16_t": "short",
    "uint16_t": "unsigned short",
    "int32_t": "int",
    "uint32_t": "unsigned int",
    "int64_t": "long long",
    "uint64_t": "unsigned long long",
    "size_t": "unsigned long",
}

JULIA_RESERVED = {
    "abstract", "baremodule", "begin", "break", "catch", "const", "continue",
    "do", "else", "elseif", "end", "export", "false", "finally", "for",
    "function", "global", "if", "import", "in", "isa", "let", "local", "macro",
    "module", "mutable", "primitive", "public", "quote", "return", "struct",
    "true", "try", "type", "using", "where", "while", "outer",
}


class HeaderError(Exception):
    pass


def julia_name(name):
    """A C identifier as a Julia identifier (reserved words get a `_`)."""
    return name + "_" if name in JULIA_RESERVED else name


# --------------------------------------------------------------------------
# Preprocessing
# --------------------------------------------------------------------------

_COMMENT_RE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"', re.S)


def strip_comments(text):
    """Blank out comments (newlines kept, so line numbers stay) and collect
    them as (first_line, last_line, text)."""
    comments = []

    def repl(m):
        s = m.group(0)
        if s.startswith('"'):
            return s
        first = text.count("\n", 0, m.start()) + 1
        last = first + s.count("\n")
        comments.append((first, last, s))
        return "".join("\n" if c == "\n" else " " for c in s)

    return _COMMENT_RE.sub(repl, text), comments


_DEFINE_INT_RE = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)\s+(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*$")
_DEFINE_EMPTY_RE = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)\s*$")
# The header's only function-like macros: C conveniences over the
# cudnnfe_*_init_sized functions (the package passes sizeof itself).
_DEFINE_SIZED_INIT_RE = re.compile(
    r"^#\s*define\s+(cudnnfe_\w+_init)\((\w+)\)\s+\1_sized\(\(\2\),\s*sizeof\(\*\(\2\)\)\)\s*$")


def join_continuations(code):
    """Joins backslash-continued lines, keeping one line per header line."""
    out = []
    pending, extra = "", 0
    for line in code.split("\n"):
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


def preprocess(text):
    """Returns (code, constants, comments). `code` keeps one line per header
    line; `constants` is [(name, value, line)] in header order."""
    code, comments = strip_comments(text)
    code = join_continuations(code)
    out = []
    constants = []
    guard = None
    skip_depth = 0  # > 0 inside an #ifdef __cplusplus block
    depth = 0
    for lineno, raw in enumerate(code.split("\n"), start=1):
        line = raw.strip()
        if not line.startswith("#"):
            out.append("" if skip_depth else raw)
            continue
        out.append("")
        directive = line[1:].strip()
        word = directive.split()[0] if directive else ""
        if skip_depth:
            if word in ("if", "ifdef", "ifndef"):
                skip_depth += 1
            elif word == "endif":
                skip_depth -= 1
            continue
        if word == "ifdef" and directive.split()[1:] == ["__cplusplus"]:
            skip_depth = 1
        elif word == "ifndef" and guard is None and depth == 0:
            guard = directive.split()[1]
            depth += 1
        elif word == "endif":
            if depth == 0:
                raise HeaderError("line %d: unmatched #endif" % lineno)
            depth -= 1
        elif word == "include":
            pass
        elif word == "define":
            m = _DEFINE_INT_RE.match(line)
            if m:
                constants.append((m.group(1), int(m.group(2), 0), lineno))
            elif _DEFINE_EMPTY_RE.match(line) and _DEFINE_EMPTY_RE.match(line).group(1) == guard:
                pass
            elif _DEFINE_SIZED_INIT_RE.match(line):
                pass
            else:
                raise HeaderError("line %d: unsupported macro (only integer constants are "
                                  "wrapped): %s" % (lineno, line))
        else:
            raise HeaderError("line %d: unsupported preprocessor directive: %s" % (lineno, line))
    if depth or skip_depth:
        raise HeaderError("unterminated conditional block")
    return "\n".join(out), constants, comments


# --------------------------------------------------------------------------
# C types
# --------------------------------------------------------------------------

class CType:
    """kind: 'name' (scalar or typedef), 'ptr', 'array', 'void'."""

    def __init__(self, kind, name=None, inner=None, const=False, length=None):
        self.kind, self.name, self.inner, self.const, self.length = kind, name, inner, const, length

    def c_str(self):
        """Canonical C spelling: `const char *`, `void *const *`, `int64_t[3]`."""
        if self.kind == "ptr":
            s = self.inner.c_str()
            s = s + ("*" if s.endswith("*") else " *")
            return s + "const" if self.const else s
        if self.kind == "array":
            return "%s[%d]" % (self.inner.c_str(), self.length)
        return ("const " if self.const else "") + self.name


def convert_type(node):
    if isinstance(node, c_ast.TypeDecl):
        quals = node.quals or []
        t = node.type
        if isinstance(t, c_ast.IdentifierType):
            name = " ".join(t.names)
            return CType("void" if name == "void" else "name", name=name, const="const" in quals)
        if isinstance(t, c_ast.Struct):
            return CType("name", name="struct " + t.name, const="const" in quals)
        raise HeaderError("unsupported type node %s" % type(t).__name__)
    if isinstance(node, c_ast.PtrDecl):
        return CType("ptr", inner=convert_type(node.type), const="const" in (node.quals or []))
    if isinstance(node, c_ast.ArrayDecl):
        if not isinstance(node.dim, c_ast.Constant):
            raise HeaderError("array dimension must be an integer literal")
        return CType("array", inner=convert_type(node.type), length=int(node.dim.value, 0))
    raise HeaderError("unsupported declarator %s" % type(node).__name__)


class Model:
    def __init__(self):
        self.aliases = {}  # typedef name -> CType (scalar typedefs)
        self.opaque = {}  # typedef name -> struct tag
        self.structs = {}  # typedef name -> struct record
        self.struct_tags = {}  # struct tag -> typedef name

    # ---- Julia spelling -------------------------------------------------
    def julia_type(self, t, role):
        """role: 'param', 'buffer' (a const char * followed by its size),
        'return', 'field', 'pointee'."""
        if t.kind == "void":
            return "Cvoid"
        if t.kind == "name":
            if t.name in SCALARS:
                return SCALARS[t.name][0]
            if t.name in self.aliases or t.name in self.opaque or t.name in self.structs:
                return t.name
            if t.name.startswith("struct "):
                tag = t.name[len("struct "):]
                if tag in self.struct_tags:
                    return self.struct_tags[tag]
            raise HeaderError("no Julia mapping for C type %r" % t.name)
        if t.kind == "array":
            if role != "field":
                raise HeaderError("arrays are only supported as struct fields")
            return "NTuple{%d, %s}" % (t.length, self.julia_type(t.inner, "field"))
        # pointers
        inner = t.inner
        if inner.kind == "name" and inner.name == "char":
            if inner.const and role in ("param", "return", "pointee"):
                return "Cstring"  # NUL-terminated string
            return "Ptr{Cchar}"  # struct fields, byte buffers, writable buffers
        return "Ptr{%s}" % self.julia_type(inner, "pointee")

    # ---- C layout (LP64) --------------------------------------------------
    def layout(self, t):
        """(size, align) of a C type."""
        if t.kind == "ptr":
            return POINTER_SIZE, POINTER_SIZE
        if t.kind == "array":
            size, align = self.layout(t.inner)
            return size * t.length, align
        if t.kind == "name":
            if t.name in SCALARS:
                size = SCALARS[t.name][1]
                return size, size
            if t.name in self.aliases:
                return self.layout(self.aliases[t.name])
            if t.name in self.structs:
                s = self.structs[t.name]
                return s["size"], s["align"]
            if t.name.startswith("struct ") and t.name[7:] in self.struct_tags:
                s = self.structs[self.struct_tags[t.name[7:]]]
                return s["size"], s["align"]
        raise HeaderError("cannot lay out C type %r" % t.c_str())


def doc_comment_above(comments, line):
    """The comment block that ends on the line just above `line` (or on it)."""
    for first, last, text in comments:
        if last == line - 1 or (last == line and first == line):
            body = text
            if body.startswith("/*"):
                body = body[2:-2]
                lines = [re.sub(r"^\s*\* ?", "", ln).rstrip() for ln in body.split("\n")]
            else:
                lines = [body[2:].strip()]
            while lines and not lines[0].strip():
                lines.pop(0)
            while lines and not lines[-1].strip():
                lines.pop()
            if any(set(ln.strip()) <= set("-") and ln.strip() for ln in lines):
                return None  # a section banner, not a doc comment
            text = "\n".join(lines)
            # Doc comments of a group of declarations start right above the
            # first one; a trailing comment block of a multi-line comment is
            # returned only when contiguous.
            return text.strip() or None
    return None


def parse_header(text):
    code, defines, comments = preprocess(text)
    prelude = "".join("typedef %s %s;" % (v, k) for k, v in PRELUDE_TYPES.items())
    # The prelude sits on line 0's prefix so header line numbers stay exact.
    ast = c_parser.CParser().parse(prelude + code, filename="cudnnfe.h")
    model = Model()
    decls = []  # (line, kind, record) in header order
    for ext in ast.ext:
        line = ext.coord.line if ext.coord else 0
        if isinstance(ext, c_ast.Typedef):
            if ext.name in PRELUDE_TYPES:
                continue
            t = ext.type
            if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Struct):
                st = t.type
                if st.decls is None:
                    model.opaque[ext.name] = st.name
                    decls.append((line, "opaque", {"name": st.name, "typedef": ext.name}))
                    continue
                fields = []
                offset, max_align = 0, 1
                for d in st.decls:
                    if d.bitsize is not None:
                        raise HeaderError("line %d: bitfield %s.%s" % (line, st.name, d.name))
                    ct = convert_type(d.type)
                    size, align = model.layout(ct)
                    offset = (offset + align - 1) // align * align
                    fields.append({
                        "name": d.name,
                        "julia_name": julia_name(d.name),
                        "c_type": ct.c_str(),
                        "julia_type": model.julia_type(ct, "field"),
                        "offset": offset,
                        "size": size,
                        "align": align,
                    })
                    offset += size
                    max_align = max(max_align, align)
                size = (offset + max_align - 1) // max_align * max_align
                rec = {"name": st.name, "typedef": ext.name, "size": size, "align": max_align,
                       "fields": fields, "line": line}
                model.structs[ext.name] = rec
                model.struct_tags[st.name] = ext.name
                decls.append((line, "struct", rec))
            elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
                ct = convert_type(t)
                model.aliases[ext.name] = ct
                decls.append((line, "alias", {"name": ext.name, "c_type": ct.c_str(),
                                              "julia_type": model.julia_type(ct, "field")}))
            elif isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.FuncDecl):
                # A callback type: Julia passes a @cfunction pointer.
                fd = t.type
                args = [convert_type(p.type).c_str() for p in (fd.args.params if fd.args else [])]
                c_type = "%s (*)(%s)" % (convert_type(fd.type).c_str(), ", ".join(args) or "void")
                decls.append((line, "alias", {"name": ext.name, "c_type": c_type,
                                              "julia_type": "Ptr{Cvoid}"}))
                model.aliases[ext.name] = CType("ptr", inner=CType("void", name="void"))
            else:
                raise HeaderError("line %d: unsupported typedef %s" % (line, ext.name))
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            fd = ext.type
            ret = convert_type(fd.type)
            params = []
            plist = fd.args.params if fd.args else []
            if len(plist) == 1 and isinstance(plist[0], c_ast.Typename) and \
                    convert_type(plist[0].type).kind == "void":
                plist = []
            for p in plist:
                if isinstance(p, c_ast.EllipsisParam) or not getattr(p, "name", None):
                    raise HeaderError("line %d: %s: unnamed or variadic parameter" % (line, ext.name))
            ctypes = [convert_type(p.type) for p in plist]
            for i, p in enumerate(plist):
                ct = ctypes[i]
                role = "param"
                nxt = ctypes[i + 1] if i + 1 < len(ctypes) else None
                if ct.kind == "ptr" and ct.inner.kind == "name" and ct.inner.name == "char" \
                        and ct.inner.const and nxt is not None and nxt.kind == "name" \
                        and nxt.name == "size_t":
                    role = "buffer"
                params.append({
                    "name": p.name,
                    "julia_name": julia_name(p.name),
                    "c_type": ct.c_str(),
                    "julia_type": model.julia_type(ct, role),
                })
            rec = {
                "name": ext.name,
                "c_return": ret.c_str(),
                "julia_return": model.julia_type(ret, "return"),
                "params": params,
                "doc": doc_comment_above(comments, line),
                "line": line,
            }
            decls.append((line, "function", rec))
        else:
            raise HeaderError("line %d: unsupported top-level declaration" % line)

    # Constants: an enumeration's values follow its `typedef int32_t X_t;`
    # and are named CUDNNFE_X_* (or, for X = *_mode, CUDNNFE_*_* without
    # MODE: CUDNNFE_POINTWISE_ADD for cudnnfe_pointwise_mode_t).
    enum_typedefs = sorted(
        (line, rec["name"]) for line, kind, rec in decls
        if kind == "alias" and rec["c_type"] == "int32_t")
    constants = []
    for name, value, line in defines:
        group = None
        preceding = [n for l, n in enum_typedefs if l < line]
        if preceding:
            tname = preceding[-1]
            stem = tname[: -len("_t")].upper()
            prefixes = [stem + "_"]
            if stem.endswith("_MODE"):
                prefixes.append(stem[: -len("_MODE")] + "_")
            if any(name.startswith(p) for p in prefixes):
                group = tname
        constants.append({"name": name, "value": value, "group": group,
                          "julia_type": group or "Int", "line": line})
    return model, decls, constants


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


def render_julia(model, decls, constants):
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


def render_manifest(model, decls, constants, header_text, header_rel):
    def strip(rec, drop=("line",)):
        return {k: v for k, v in rec.items() if k not in drop}

    manifest = {
        "generator": "bindings/julia/gen/generate.py",
        "header": header_rel,
        "header_sha256": hashlib.sha256(header_text.encode("utf-8")).hexdigest(),
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


def generate(header_path):
    with open(header_path, encoding="utf-8") as f:
        text = f.read()
    model, decls, constants = parse_header(text)
    rel = os.path.relpath(os.path.abspath(header_path), REPO).replace(os.sep, "/")
    return render_julia(model, decls, constants), render_manifest(model, decls, constants, text, rel)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", default=DEFAULT_HEADER)
    ap.add_argument("--julia-out", default=DEFAULT_JULIA_OUT)
    ap.add_argument("--manifest-out", default=DEFAULT_MANIFEST_OUT)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if the outputs are missing or stale")
    args = ap.parse_args(argv)
    try:
        julia, manifest = generate(args.header)
    except (HeaderError, c_parser.ParseError) as e:
        print("generate.py: %s: %s" % (args.header, e), file=sys.stderr)
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
