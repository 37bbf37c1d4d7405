"""Helpers for checking CuDNNFE.jl without Julia.

Two independent readers:

* `parse_header()` reads include/cudnnfe/cudnnfe.h a second way, unlike the
  generator (which blanks comments itself and feeds pycparser): the system C
  compiler preprocesses it (`cc -E`, keeping only the lines that come from
  the header itself; `cc -dM -E` for the integer macros) and plain regular
  expressions split the declarations.
* `parse_lib_jl()` reads the generated bindings/julia/src/LibCuDNNFE.jl as
  Julia text: `function`/`ccall` blocks, `const`s, `struct`s, `export`s.

Plus `expected_julia_type()`, the table of C -> Julia type mappings the
signatures are tested against, and `julia_layout()`, the C layout rules
applied to the Julia field types.
"""
import os
import re
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)  # bindings/julia
REPO = os.path.dirname(os.path.dirname(PKG))
HEADER = os.path.join(REPO, "include", "cudnnfe", "cudnnfe.h")
INCLUDE_DIR = os.path.join(REPO, "include")
LIB_JL = os.path.join(PKG, "src", "LibCuDNNFE.jl")
SRC_DIR = os.path.join(PKG, "src")
TEST_DIR = os.path.join(PKG, "test")
MANIFEST = os.path.join(PKG, "gen", "manifest.json")
GENERATOR = os.path.join(PKG, "gen", "generate.py")


def in_ci():
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(module_name, install_hint):
    """Imports a module the checks need: skipped when it is missing, except
    under CI (CI=true), where a missing tool fails rather than silently
    skipping a check."""
    import importlib

    import pytest

    try:
        return importlib.import_module(module_name)
    except ImportError:
        missing_tool("%s is not installed (%s)" % (module_name, install_hint))


def missing_tool(msg):
    """Skips (fails under CI) for a missing tool; usable at module level."""
    import pytest

    if in_ci():
        pytest.fail(msg + "; CI must run every check", pytrace=False)
    pytest.skip(msg, allow_module_level=True)


def c_compiler():
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    return None


# ---------------------------------------------------------------------------
# The header, read through the C preprocessor
# ---------------------------------------------------------------------------

# The header's experimental part is wrapped too: define its macro (empty, so that
# it is no integer constant to wrap).
EXPERIMENTAL = "-DCUDNNFE_EXPERIMENTAL="


def header_own_lines(header=HEADER):
    """The header after `cc -E`, keeping only lines from the header itself
    (linemarkers tell which file each line comes from)."""
    cc = c_compiler()
    out = subprocess.run([cc, "-E", "-x", "c", "-std=c99", EXPERIMENTAL, header], check=True,
                         capture_output=True, text=True).stdout
    keep = []
    current = None
    target = os.path.realpath(header)
    for line in out.split("\n"):
        m = re.match(r'^# \d+ "([^"]*)"', line)
        if m:
            name = m.group(1)
            current = os.path.realpath(name) if not name.startswith("<") else name
            continue
        if current == target:
            keep.append(line)
    return "\n".join(keep)


def header_macros(header=HEADER):
    """{name: int} for every CUDNNFE_* macro with an integer value (`cc -dM -E`)."""
    cc = c_compiler()
    out = subprocess.run([cc, "-dM", "-E", "-x", "c", "-std=c99", EXPERIMENTAL, header], check=True,
                         capture_output=True, text=True).stdout
    macros = {}
    for line in out.split("\n"):
        m = re.match(r"^#define (CUDNNFE_\w+) (.*)$", line.strip())
        if not m:
            continue
        value = m.group(2).strip()
        if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", value):
            macros[m.group(1)] = int(value.rstrip("uUlL"), 0)
    return macros


def _tokens(type_text):
    """`const char *` -> ['const', 'char', '*']."""
    return re.findall(r"[A-Za-z_]\w*|\*", type_text)


def _split_decl(text):
    """`const int64_t *dims` -> (['const', 'int64_t', '*'], 'dims', None);
    `int64_t pre_padding[3]` -> (['int64_t'], 'pre_padding', 3)."""
    text = text.strip()
    arr = None
    m = re.search(r"\[\s*(\d+)\s*\]\s*$", text)
    if m:
        arr = int(m.group(1))
        text = text[: m.start()]
    m = re.search(r"([A-Za-z_]\w*)\s*$", text)
    name = m.group(1)
    return _tokens(text[: m.start()]), name, arr


class CHeader:
    def __init__(self):
        self.functions = {}  # name -> {"ret": tokens, "params": [(tokens, name)]}
        self.function_order = []
        self.structs = {}  # typedef name -> {"tag": tag, "fields": [(tokens, name, arr)]}
        self.opaque = {}  # typedef name -> tag
        self.aliases = {}  # typedef name -> tokens of the underlying type
        self.macros = {}


def parse_header(header=HEADER):
    text = header_own_lines(header)
    text = re.sub(r'extern\s+"C"\s*\{', "", text)
    h = CHeader()
    h.macros = header_macros(header)
    # Top-level statements end with ';' outside braces.
    statements, depth, cur = [], 0, []
    for ch in text:
        cur.append(ch)
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            statements.append(" ".join("".join(cur).split()))
            cur = []
    rest = "".join(cur).strip()
    assert not rest, "trailing text in header: %r" % rest[:80]
    for st in statements:
        st = st.rstrip(";").strip()
        m = re.fullmatch(r"typedef struct (\w+) \{(.*)\} (\w+)", st)
        if m:
            fields = [_split_decl(f) for f in m.group(2).split(";") if f.strip()]
            h.structs[m.group(3)] = {"tag": m.group(1), "fields": fields}
            continue
        m = re.fullmatch(r"typedef struct (\w+) (\w+)", st)
        if m:
            h.opaque[m.group(2)] = m.group(1)
            continue
        m = re.fullmatch(r"typedef [\w ]+? ?\(\*(\w+)\)\(.*\)", st)
        if m:  # a callback type: Julia passes a @cfunction pointer
            h.aliases[m.group(1)] = _tokens("void *")
            continue
        m = re.fullmatch(r"typedef ([\w ]+?) (\w+)", st)
        if m:
            h.aliases[m.group(2)] = _tokens(m.group(1))
            continue
        m = re.fullmatch(r"(.+?)\b(cudnnfe_\w+) ?\((.*)\)", st)
        if m:
            ret = _tokens(m.group(1))
            params_text = m.group(3).strip()
            params = []
            if params_text != "void":
                for p in params_text.split(","):
                    toks, name, arr = _split_decl(p)
                    assert arr is None, "array parameter in %s" % m.group(2)
                    params.append((toks, name))
            h.functions[m.group(2)] = {"ret": ret, "params": params}
            h.function_order.append(m.group(2))
            continue
        raise AssertionError("unrecognised declaration in the header: %r" % st[:120])
    return h


# ---------------------------------------------------------------------------
# The table of C -> Julia type mappings
# ---------------------------------------------------------------------------

# Scalars: the C type and its Julia spelling.
C_TO_JULIA = {
    "int8_t": "Int8",
    "uint8_t": "UInt8",
    "int16_t": "Int16",
    "uint16_t": "UInt16",
    "int32_t": "Int32",
    "uint32_t": "UInt32",
    "int64_t": "Int64",
    "uint64_t": "UInt64",
    "void *": "Ptr{Cvoid}",  # callback typedefs (cudnnfe_log_callback_t)
    "size_t": "Csize_t",
    "double": "Cdouble",
    "float": "Cfloat",
    "char": "Cchar",
    "int": "Cint",
    "void": "Cvoid",
}


def _base_and_stars(tokens):
    """['const', 'void', '*', 'const', '*'] -> (base 'void', base_const True,
    number of '*')."""
    stars = tokens.count("*")
    words = [t for t in tokens if t != "*"]
    base_words = []
    for t in tokens:
        if t == "*":
            break
        base_words.append(t)
    const = "const" in base_words
    base = " ".join(w for w in base_words if w != "const")
    del words
    return base, const, stars


def expected_julia_type(tokens, header, role, next_tokens=None):
    """The Julia type a C type must have in the generated layer.

    role: 'param', 'return' or 'field'. Rules:
      scalar               -> C_TO_JULIA (int32_t -> Int32, size_t -> Csize_t, ...)
      typedef / struct name -> the same name (defined in LibCuDNNFE.jl)
      const char *  (param, return) -> Cstring, a NUL-terminated string;
                    except a parameter followed by a size_t parameter, a
                    byte buffer with its length -> Ptr{Cchar}
      char *, and const char * struct fields -> Ptr{Cchar}
      T *  -> Ptr{T'} with T' the mapping of T; so void * -> Ptr{Cvoid},
              void *const * -> Ptr{Ptr{Cvoid}}, const char ** -> Ptr{Cstring}
    """
    base, const, stars = _base_and_stars(tokens)
    if base in C_TO_JULIA:
        inner = C_TO_JULIA[base]
    elif base in header.aliases or base in header.structs or base in header.opaque:
        inner = base
    else:
        raise AssertionError("no mapping for C type %r" % " ".join(tokens))
    if stars == 0:
        return inner
    if base == "char":
        if const and role in ("param", "return"):
            is_buffer = (role == "param" and stars == 1 and next_tokens is not None
                         and _base_and_stars(next_tokens) == ("size_t", False, 0))
            inner = "Ptr{Cchar}" if is_buffer else "Cstring"
        else:
            inner = "Ptr{Cchar}"
        stars -= 1
    for _ in range(stars):
        inner = "Ptr{%s}" % inner
    return inner


# ---------------------------------------------------------------------------
# The generated Julia layer, read as text
# ---------------------------------------------------------------------------

_CHAR_RE = re.compile(r"'(\\.|[^'\\])'")


def _string_end(text, i, interpolations=None):
    """Index just past the string literal starting at text[i] (`"` or
    `\"\"\"`), following `$(...)` interpolations, which may hold strings;
    their code spans are appended to `interpolations`."""
    quote = '\"\"\"' if text.startswith('\"\"\"', i) else '"'
    j = i + len(quote)
    while True:
        if text.startswith(quote, j):
            return j + len(quote)
        c = text[j]
        if c == "\\":
            j += 2
        elif text.startswith("$(", j):
            end = _code_end(text, j + 2)
            if interpolations is not None:
                interpolations.append((j + 1, end))
            j = end
        else:
            j += 1


def _code_end(text, i):
    """Index just past the `)` closing an interpolation whose code starts at i."""
    depth = 1
    while True:
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            continue
        m = _CHAR_RE.match(text, i) if c == "'" else None
        if m:
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def strip_julia_comments(text, blank_strings=False):
    """Removes `#` comments and `#= =#` blocks; strings are kept, or replaced
    by `""` with blank_strings."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            spans = []
            j = _string_end(text, i, spans)
            if blank_strings:
                # Keep the code of interpolations: `"a $(f(x))"` -> `"" (f(x))`.
                out.append('""')
                for a, b in spans:
                    out.append(" " + strip_julia_comments(text[a:b], True))
            else:
                out.append(text[i:j])
            i = j
        elif c == "'" and _CHAR_RE.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in ")]}_'")):
            j = _CHAR_RE.match(text, i).end()
            out.append(text[i:j])
            i = j
        elif text.startswith("#=", i):
            i = text.index("=#", i) + 2
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_docstrings(text):
    return re.sub(r'"""(.*?)"""', '""', text, flags=re.S)


def split_top_level(s, sep=","):
    """Splits on `sep` outside (), [], {} and strings."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = _string_end(s, i)
            cur.append(s[i:j])
            i = j
            continue
        m = _CHAR_RE.match(s, i) if c == "'" else None
        if m:
            cur.append(m.group(0))
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    last = "".join(cur).strip()
    if last:
        parts.append(last)
    return parts


def matching_paren(s, open_index):
    """Index of the bracket closing the one at `open_index`."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    i = open_index
    while i < len(s):
        c = s[i]
        if c == '"':
            i = _string_end(s, i)
            continue
        m = _CHAR_RE.match(s, i) if c == "'" else None
        if m:
            i = m.end()
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                raise ValueError("unbalanced brackets at %d" % i)
            if not stack:
                return i
        i += 1
    raise ValueError("no closing bracket for %d" % open_index)


class JuliaLib:
    def __init__(self):
        self.functions = {}  # name -> {"args": [...], "symbol", "library", "ret", "types": [...], "passed": [...]}
        self.consts = {}  # name -> right-hand side text
        self.structs = {}  # name -> {"mutable": bool, "fields": [(name, type)]}
        self.exports = []
        self.module = None


def parse_lib_jl(path=LIB_JL):
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    text = strip_docstrings(strip_julia_comments(raw))
    lib = JuliaLib()
    m = re.search(r"^module (\w+)", text, re.M)
    lib.module = m.group(1) if m else None
    for m in re.finditer(r"^const (\w+) = (.+)$", text, re.M):
        lib.consts[m.group(1)] = m.group(2).strip()
    for m in re.finditer(r"^(mutable )?struct (\w+)( end|\n(.*?)^end)", text, re.M | re.S):
        body = m.group(4) or ""
        fields = []
        for line in body.split("\n"):
            line = line.strip()
            if not line:
                continue
            fm = re.fullmatch(r"(\w+)::(.+)", line)
            assert fm, "unexpected line in struct %s: %r" % (m.group(2), line)
            fields.append((fm.group(1), fm.group(2).strip()))
        lib.structs[m.group(2)] = {"mutable": bool(m.group(1)), "fields": fields}
    for m in re.finditer(r"^function (\w+)\(([^)]*)\)\n", text, re.M):
        name = m.group(1)
        body_start = m.end()
        end = re.compile(r"^end$", re.M).search(text, body_start).start()
        body = text[body_start:end].strip()
        args = [a.strip() for a in m.group(2).split(",") if a.strip()]
        rec = {"args": args, "body": body}
        cm = re.match(r"ccall\(", body)
        if cm:
            close = matching_paren(body, cm.end() - 1)
            parts = split_top_level(body[cm.end():close])
            target = parts[0]
            tm = re.fullmatch(r"\(:(\w+),\s*(\w+)\)", target)
            rec["symbol"] = tm.group(1) if tm else None
            rec["library"] = tm.group(2) if tm else None
            rec["ret"] = parts[1]
            types = parts[2]
            assert types.startswith("(") and types.endswith(")"), types
            rec["types"] = split_top_level(types[1:-1])
            rec["passed"] = parts[3:]
            rec["only_ccall"] = close == len(body) - 1
        lib.functions[name] = rec
    for m in re.finditer(r"^export (.*?)(?=\n\S|\Z)", text, re.M | re.S):
        lib.exports.extend(n.strip() for n in m.group(1).replace("\n", " ").split(",") if n.strip())
    return lib


def resolve_alias(lib, t):
    """Follows `const X = Y` type aliases in the Julia layer."""
    seen = set()
    while t in lib.consts and t not in seen:
        seen.add(t)
        t = lib.consts[t]
    return t


# ---------------------------------------------------------------------------
# Layout of Julia isbits structs (Julia lays them out with the C rules)
# ---------------------------------------------------------------------------

JULIA_SCALAR_SIZES = {
    "Int8": 1, "UInt8": 1, "Cchar": 1, "Bool": 1,
    "Int16": 2, "UInt16": 2,
    "Int32": 4, "UInt32": 4, "Cint": 4, "Cuint": 4, "Cfloat": 4, "Float32": 4,
    "Int64": 8, "UInt64": 8, "Cdouble": 8, "Float64": 8,
}


def julia_layout(lib, t, pointer_size):
    """(size, alignment) of Julia type `t` as a field of an isbits struct."""
    t = resolve_alias(lib, t.strip())
    if t in JULIA_SCALAR_SIZES:
        s = JULIA_SCALAR_SIZES[t]
        return s, s
    if t in ("Csize_t", "Cssize_t", "UInt", "Int", "Cstring", "Cwstring") or t.startswith("Ptr{"):
        return pointer_size, pointer_size
    m = re.fullmatch(r"NTuple\{(\d+),\s*(.+)\}", t)
    if m:
        size, align = julia_layout(lib, m.group(2), pointer_size)
        return int(m.group(1)) * size, align
    if t in lib.structs and not lib.structs[t]["mutable"]:
        return julia_struct_layout(lib, t, pointer_size)[1:]
    raise AssertionError("no layout rule for Julia type %r" % t)


def julia_struct_layout(lib, name, pointer_size):
    """([(field, offset, size)], struct size, struct alignment)."""
    offset, max_align, fields = 0, 1, []
    for fname, ftype in lib.structs[name]["fields"]:
        size, align = julia_layout(lib, ftype, pointer_size)
        offset = (offset + align - 1) // align * align
        fields.append((fname, offset, size))
        offset += size
        max_align = max(max_align, align)
    return fields, (offset + max_align - 1) // max_align * max_align, max_align


# ---------------------------------------------------------------------------
# The idiomatic layer, read as text
# ---------------------------------------------------------------------------

def julia_sources(directory):
    out = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".jl"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                out[name] = f.read()
    return out


def qualified_uses(text, qualifier):
    """Every `qualifier.name` in `text` (comments and docstrings removed):
    [(name, args or None)], args being the top-level argument list when the
    use is a call."""
    code = strip_julia_comments(text, blank_strings=True)
    uses = []
    for m in re.finditer(r"(?<![\w.])%s\.(\w+)" % re.escape(qualifier), code):
        args = None
        if m.end() < len(code) and code[m.end()] == "(":
            close = matching_paren(code, m.end())
            inner = code[m.end() + 1:close]
            args = [a for a in split_top_level(inner.split(";")[0])] if inner.strip() else []
        uses.append((m.group(1), args))
    return uses


def find_library():
    """The built shared library, if any: $CUDNNFE_LIBRARY or build*/libcudnnfe.so."""
    path = os.environ.get("CUDNNFE_LIBRARY")
    if path and os.path.isfile(path):
        return path
    candidates = []
    for d in sorted(os.listdir(REPO)):
        p = os.path.join(REPO, d, "libcudnnfe.so")
        if d.startswith("build") and os.path.isfile(p):
            candidates.append(p)
    # The most recently built one.
    return max(candidates, key=os.path.getmtime) if candidates else None
