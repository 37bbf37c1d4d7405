"""The one parser of the C header: include/cudnnfe/cudnnfe.h as a language-neutral ABI model.

Every binding generator reads what this module produces (abi/manifest.json,
written by scripts/gen_abi_manifest.py), never the header itself: functions
with their parameters, structs with C field types, offsets, sizes and the
defaults the header states, integer constants grouped by their enumeration
typedef, opaque handles. It does not spell any language's types; each
generator maps the C types it reads here.

The header is preprocessed here, not by a C preprocessor, so that the integer
`#define`s survive: comments are blanked (line numbers kept), `#include`s, the
include guard and the `#ifdef __cplusplus` blocks are dropped, `#define NAME
<integer>` lines become constants, the `#ifdef CUDNNFE_EXPERIMENTAL` block is
kept (the ABI includes it; its declarations are marked `"experimental": true`),
and any other directive is an error. What
remains is parsed by pycparser after a prelude of typedefs for the <stdint.h>
and <stddef.h> names, which are kept by name, never by the prelude's type.
"""
import hashlib
import json
import os
import re
import sys

try:
    from pycparser import c_ast, c_parser
except ImportError:  # pragma: no cover - exercised only without pycparser
    c_ast = c_parser = None  # reading a manifest needs no parser; parse_header says so

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_HEADER = os.path.join(REPO, "include", "cudnnfe", "cudnnfe.h")
DEFAULT_MANIFEST = os.path.join(REPO, "abi", "manifest.json")
GENERATOR = "scripts/gen_abi_manifest.py"
# The macro that shows the header's experimental part (declared only where it
# is defined, as zstd's ZSTD_STATIC_LINKING_ONLY). Every generator here sees it.
EXPERIMENTAL_MACRO = "CUDNNFE_EXPERIMENTAL"

# The C ABI this layout model describes: LP64 (Linux and macOS on x86_64 and
# aarch64).
POINTER_SIZE = 8

# Fixed-width and standard C scalar types and their sizes; alignment equals
# size for every one of these on LP64.
SCALAR_SIZES = {
    "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
    "int64_t": 8, "uint64_t": 8, "size_t": 8, "float": 4, "double": 8, "char": 1, "int": 4,
    "unsigned int": 4,
}

# Typedefs that stand in for <stdint.h> / <stddef.h>; pycparser needs them to
# parse, nothing looks at their right-hand sides.
PRELUDE_TYPES = {
    "int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short",
    "uint16_t": "unsigned short", "int32_t": "int", "uint32_t": "unsigned int",
    "int64_t": "long long", "uint64_t": "unsigned long long", "size_t": "unsigned long",
}


class HeaderError(Exception):
    pass


ParseError = c_parser.ParseError if c_parser else HeaderError

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
# cudnnfe_*_init_sized functions (bindings pass sizeof themselves).
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


def _directive(line, lineno, state, constants):
    """Handles one preprocessor line; `state` holds guard, depth, skip_depth."""
    directive = line[1:].strip()
    word = directive.split()[0] if directive else ""
    if state["skip"]:
        if word in ("if", "ifdef", "ifndef"):
            state["skip"] += 1
        elif word == "endif":
            state["skip"] -= 1
        return
    if word == "ifdef" and directive.split()[1:] == ["__cplusplus"]:
        state["skip"] = 1
    elif word == "ifdef" and directive.split()[1:] == [EXPERIMENTAL_MACRO]:
        if state["gate"] is not None:
            raise HeaderError("line %d: nested #ifdef %s" % (lineno, EXPERIMENTAL_MACRO))
        state["gate"] = (lineno, state["depth"])
        state["depth"] += 1
    elif word == "ifndef" and state["guard"] is None and state["depth"] == 0:
        state["guard"] = directive.split()[1]
        state["depth"] += 1
    elif word == "endif":
        if state["depth"] == 0:
            raise HeaderError("line %d: unmatched #endif" % lineno)
        state["depth"] -= 1
        if state["gate"] is not None and state["gate"][1] == state["depth"]:
            state["gates"].append((state["gate"][0], lineno))
            state["gate"] = None
    elif word == "include":
        pass
    elif word == "define":
        m = _DEFINE_INT_RE.match(line)
        empty = _DEFINE_EMPTY_RE.match(line)
        if m:
            constants.append((m.group(1), int(m.group(2), 0), lineno))
        elif not (empty and empty.group(1) == state["guard"]) and \
                not _DEFINE_SIZED_INIT_RE.match(line):
            raise HeaderError("line %d: unsupported macro (only integer constants are "
                              "wrapped): %s" % (lineno, line))
    else:
        raise HeaderError("line %d: unsupported preprocessor directive: %s" % (lineno, line))


def preprocess(text, gates=None):
    """Returns (code, constants, comments). `code` keeps one line per header
    line; `constants` is [(name, value, line)] in header order. The line
    ranges (first, last) of the experimental blocks are appended to `gates`."""
    code, comments = strip_comments(text)
    code = join_continuations(code)
    out, constants = [], []
    state = {"guard": None, "depth": 0, "skip": 0, "gate": None,
             "gates": gates if gates is not None else []}
    for lineno, raw in enumerate(code.split("\n"), start=1):
        line = raw.strip()
        if not line.startswith("#"):
            out.append("" if state["skip"] else raw)
            continue
        out.append("")
        _directive(line, lineno, state, constants)
    if state["depth"] or state["skip"]:
        raise HeaderError("unterminated conditional block")
    return "\n".join(out), constants, comments


# --------------------------------------------------------------------------
# C types: {"kind": "name"|"ptr"|"array"|"void", "name", "const", "to", "length"}
# --------------------------------------------------------------------------

def c_str(t):
    """Canonical C spelling: `const char *`, `void *const *`, `int64_t[3]`."""
    if t["kind"] == "ptr":
        s = c_str(t["to"])
        s = s + ("*" if s.endswith("*") else " *")
        return s + "const" if t["const"] else s
    if t["kind"] == "array":
        return "%s[%d]" % (c_str(t["of"]), t["length"])
    return ("const " if t["const"] else "") + t["name"]


def convert_type(node):
    if isinstance(node, c_ast.TypeDecl):
        const = "const" in (node.quals or [])
        t = node.type
        if isinstance(t, c_ast.IdentifierType):
            name = " ".join(t.names)
            return {"kind": "void" if name == "void" else "name", "name": name, "const": const}
        if isinstance(t, c_ast.Struct):
            return {"kind": "name", "name": "struct " + t.name, "const": const}
        raise HeaderError("unsupported type node %s" % type(t).__name__)
    if isinstance(node, c_ast.PtrDecl):
        return {"kind": "ptr", "to": convert_type(node.type),
                "const": "const" in (node.quals or [])}
    if isinstance(node, c_ast.ArrayDecl):
        if not isinstance(node.dim, c_ast.Constant):
            raise HeaderError("array dimension must be an integer literal")
        return {"kind": "array", "of": convert_type(node.type), "length": int(node.dim.value, 0)}
    raise HeaderError("unsupported declarator %s" % type(node).__name__)


class Model:
    def __init__(self):
        self.aliases = {}  # typedef name -> type (scalar typedefs)
        self.opaque = {}  # typedef name -> struct tag
        self.structs = {}  # typedef name -> struct record
        self.struct_tags = {}  # struct tag -> typedef name

    def check_known(self, t):
        """Refuses a type no binding can map (long double, unions, ...)."""
        if t["kind"] == "ptr":
            return self.check_known(t["to"])
        if t["kind"] == "array":
            return self.check_known(t["of"])
        if t["kind"] == "void":
            return
        name = t["name"]
        if name in SCALAR_SIZES or name in self.aliases or name in self.opaque or \
                name in self.structs or name[len("struct "):] in self.struct_tags:
            return
        raise HeaderError("no mapping for C type %r" % name)

    def scalar_of(self, t):
        """The scalar a name type stands for (`cudnnfe_dtype_t` -> `int32_t`)."""
        name = t["name"]
        while name in self.aliases:
            if self.aliases[name]["kind"] != "name":
                return None  # a callback: a pointer, not a scalar
            name = self.aliases[name]["name"]
        return name if name in SCALAR_SIZES else None

    def layout(self, t):
        """(size, align) of a C type (LP64)."""
        if t["kind"] == "ptr":
            return POINTER_SIZE, POINTER_SIZE
        if t["kind"] == "array":
            size, align = self.layout(t["of"])
            return size * t["length"], align
        if t["kind"] == "name":
            scalar = self.scalar_of(t)
            if scalar:
                return SCALAR_SIZES[scalar], SCALAR_SIZES[scalar]
            if self.aliases.get(t["name"], {}).get("kind") == "ptr":
                return POINTER_SIZE, POINTER_SIZE
            tdef = self.structs.get(t["name"]) or self.structs.get(
                self.struct_tags.get(t["name"][len("struct "):], ""))
            if tdef:
                return tdef["size"], tdef["align"]
        raise HeaderError("cannot lay out C type %r" % c_str(t))


# --------------------------------------------------------------------------
# Doc comments
# --------------------------------------------------------------------------

def _comment_lines(text):
    if text.startswith("/*"):
        body = text[2:-2]
        lines = [re.sub(r"^\s*\* ?", "", ln).rstrip() for ln in body.split("\n")]
    else:
        lines = [text[2:].strip()]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def doc_comment_above(comments, line, code_lines=()):
    """The comment block that ends on the line just above `line` (or on it);
    not a comment that trails the code of one of `code_lines`."""
    for first, last, text in comments:
        if first in code_lines and first != line:
            continue
        if last == line - 1 or (last == line and first == line):
            lines = _comment_lines(text)
            if any(set(ln.strip()) <= set("-") and ln.strip() for ln in lines):
                return None  # a section banner, not a doc comment
            return "\n".join(lines).strip() or None
    return None


def trailing_comment(comments, line):
    """A one-line comment that starts on `line` after code (`int x; /* default 1 */`)."""
    for first, last, text in comments:
        if first == line and last == line:
            return " ".join(_comment_lines(text)).strip() or None
    return None


_DEFAULT_RE = re.compile(r"\bdefault:?\s+(-?\d[\d.]*(?:[eE][-+]?\d+)?|[A-Za-z_]\w*)")


def stated_default(comment):
    """The default a field's own trailing comment states (`default -1; else >= 1`)."""
    m = _DEFAULT_RE.search(comment or "")
    return m.group(1) if m else None


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------

def _struct_record(model, ext, comments, line):
    st = ext.type.type
    fields = []
    offset, max_align = 0, 1
    code_lines = {d.coord.line for d in st.decls if d.coord}
    for d in st.decls:
        if d.bitsize is not None:
            raise HeaderError("line %d: bitfield %s.%s" % (line, st.name, d.name))
        ct = convert_type(d.type)
        model.check_known(ct)
        size, align = model.layout(ct)
        offset = (offset + align - 1) // align * align
        fline = d.coord.line if d.coord else 0
        trailing = trailing_comment(comments, fline)
        field = {"name": d.name, "c_type": c_str(ct), "type": ct, "offset": offset, "size": size,
                 "align": align, "default": stated_default(trailing),
                 "doc": trailing or doc_comment_above(comments, fline, code_lines)}
        if ct["kind"] == "name":
            field["scalar"] = model.scalar_of(ct)
        fields.append(field)
        offset += size
        max_align = max(max_align, align)
    size = (offset + max_align - 1) // max_align * max_align
    return {"name": st.name, "typedef": ext.name, "size": size, "align": max_align,
            "fields": fields, "doc": doc_comment_above(comments, line), "line": line}


def _typedef(model, ext, comments, line, decls):
    t = ext.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Struct):
        st = t.type
        if st.decls is None:
            model.opaque[ext.name] = st.name
            decls.append((line, "opaque", {"name": st.name, "typedef": ext.name, "line": line}))
            return
        rec = _struct_record(model, ext, comments, line)
        model.structs[ext.name] = rec
        model.struct_tags[st.name] = ext.name
        decls.append((line, "struct", rec))
    elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        ct = convert_type(t)
        model.check_known(ct)
        model.aliases[ext.name] = ct
        decls.append((line, "alias", {"name": ext.name, "c_type": c_str(ct), "line": line}))
    elif isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.FuncDecl):
        # A callback type (cudnnfe_log_callback_t): bindings pass a function
        # pointer, laid out as a `void *`.
        fd = t.type
        args = [c_str(convert_type(p.type)) for p in (fd.args.params if fd.args else [])]
        c_type = "%s (*)(%s)" % (c_str(convert_type(fd.type)), ", ".join(args) or "void")
        model.aliases[ext.name] = {"kind": "ptr", "const": False,
                                   "to": {"kind": "void", "name": "void", "const": False}}
        decls.append((line, "alias", {"name": ext.name, "c_type": c_type, "callback": True,
                                      "line": line}))
    else:
        raise HeaderError("line %d: unsupported typedef %s" % (line, ext.name))


def _function(model, ext, comments, line):
    fd = ext.type
    ret = convert_type(fd.type)
    model.check_known(ret)
    plist = fd.args.params if fd.args else []
    if len(plist) == 1 and isinstance(plist[0], c_ast.Typename) and \
            convert_type(plist[0].type)["kind"] == "void":
        plist = []
    params = []
    for p in plist:
        if isinstance(p, c_ast.EllipsisParam) or not getattr(p, "name", None):
            raise HeaderError("line %d: %s: unnamed or variadic parameter" % (line, ext.name))
        ct = convert_type(p.type)
        model.check_known(ct)
        params.append({"name": p.name, "c_type": c_str(ct), "type": ct})
    return {"name": ext.name, "c_return": c_str(ret), "return": ret, "params": params,
            "doc": doc_comment_above(comments, line), "line": line}


def _group_constants(decls, defines):
    """An enumeration's values follow its `typedef int32_t X_t;` and are
    named CUDNNFE_X_* (or, for X = *_mode, CUDNNFE_*_* without MODE:
    CUDNNFE_POINTWISE_ADD for cudnnfe_pointwise_mode_t)."""
    enum_typedefs = sorted((line, rec["name"]) for line, kind, rec in decls
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
        constants.append({"name": name, "value": value, "group": group, "line": line})
    return constants


def parse_header(text):
    """Returns (model, decls, constants): decls are (line, kind, record) in
    header order, kind one of 'alias', 'opaque', 'struct', 'function'."""
    if c_parser is None:
        raise HeaderError("parsing the header needs pycparser: python3 -m pip install pycparser")
    gates = []
    code, defines, comments = preprocess(text, gates)
    prelude = "".join("typedef %s %s;" % (v, k) for k, v in PRELUDE_TYPES.items())
    # The prelude sits on line 1's prefix so header line numbers stay exact.
    ast = c_parser.CParser().parse(prelude + code, filename="cudnnfe.h")
    model = Model()
    decls = []
    for ext in ast.ext:
        line = ext.coord.line if ext.coord else 0
        if isinstance(ext, c_ast.Typedef):
            if ext.name not in PRELUDE_TYPES:
                _typedef(model, ext, comments, line, decls)
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            decls.append((line, "function", _function(model, ext, comments, line)))
        else:
            raise HeaderError("line %d: unsupported top-level declaration" % line)
    constants = _group_constants(decls, defines)
    for record in [r for _, _, r in decls] + constants:
        if any(first < record["line"] < last for first, last in gates):
            record["experimental"] = True
    return model, decls, constants


# --------------------------------------------------------------------------
# The manifest
# --------------------------------------------------------------------------

def _options_info(structs, functions):
    """Per struct: its sized init function, and the functions taking it."""
    names = {f["name"] for f in functions}
    for s in structs:
        init = s["typedef"][: -len("_t")] + "_init_sized"
        sized = bool(s["fields"]) and s["fields"][0]["name"] == "struct_size"
        s["init"] = init if sized and init in names else None
        s["options"] = s["typedef"].endswith("_options_t")
        s["used_by"] = [f["name"] for f in functions if f["name"] != init and any(
            p["type"]["kind"] == "ptr" and p["type"]["to"].get("name") == s["typedef"]
            for p in f["params"])]


def build_manifest(text, header_rel):
    """The manifest as a dict; every declaration keeps its header `line`
    (generators that interleave kinds sort on it)."""
    model, decls, constants = parse_header(text)
    structs = [r for _, k, r in decls if k == "struct"]
    functions = [r for _, k, r in decls if k == "function"]
    _options_info(structs, functions)
    enums = {}
    for c in constants:
        if c["group"]:
            enums.setdefault(c["group"], []).append(c["name"])
    return {
        "generator": GENERATOR,
        "header": header_rel,
        "header_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "abi": {"data_model": "LP64", "pointer_size": POINTER_SIZE},
        "scalars": sorted(SCALAR_SIZES),
        "constants": constants,
        "typedefs": [dict(r, enum=r["name"] in enums) for _, k, r in decls if k == "alias"],
        "enums": enums,
        "opaque": [r for _, k, r in decls if k == "opaque"],
        "structs": structs,
        "functions": functions,
    }


def render(manifest):
    return json.dumps(manifest, indent=1, ensure_ascii=True) + "\n"


def manifest_from_header(header_path=DEFAULT_HEADER):
    with open(header_path, encoding="utf-8") as f:
        text = f.read()
    rel = os.path.relpath(os.path.abspath(header_path), REPO).replace(os.sep, "/")
    return build_manifest(text, rel)


def load(path=DEFAULT_MANIFEST, header=DEFAULT_HEADER):
    """The committed manifest; refuses one older than the header, so that no
    generator runs from a stale model."""
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    with open(header, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if manifest["header_sha256"] != digest:
        raise HeaderError("%s is stale (the header changed): run python3 %s"
                          % (os.path.relpath(path, REPO), GENERATOR))
    return manifest


def options_structs(manifest):
    """The `cudnnfe_*_options_t` structs, in header order."""
    return [s for s in manifest["structs"] if s["options"]]


def write_generated(path, text, check, regen_command, announce=False):
    """Writes a generator's output, or with `check` writes nothing and says
    whether the committed file is stale. Returns the exit code: 0 when the file
    holds `text` (or was written), 1 when `check` finds it missing or stale."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            current = f.read()
    except FileNotFoundError:
        current = None
    if current == text:
        return 0
    if check:
        print("stale: %s (run %s)" % (path, regen_command), file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    if announce:
        print("wrote %s" % os.path.relpath(path, REPO))
    return 0
