"""docs/refusals.md stays true: every refusal call in the C++ sources of the op families it
covers (attention included) and every refusal the Python binding raises is listed there by
``file:function``, and every ``file:function`` the tables list still refuses something.

A refusal call is ``fail_graph(``, ``fail_argument(``, ``fail_not_supported(`` or
``fail(CUDNNFE_STATUS_{NOT_SUPPORTED,INVALID_GRAPH,INVALID_ARGUMENT}|status, ...)`` in C++,
and ``raise NotOfferedError / GraphNotSupportedError / InvalidGraphError / _not_offered /
_refuse`` in Python. The enclosing function is found by brace depth (C++) or indentation
(Python), lambdas belonging to the function around them. No compiler involved: the scan is
plain text, so a new refusal in a new file of these families is caught too (the file lists
below are globs)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "refusals.md"

# Files the scan leaves out: none (attention included since its section was written).
_ATTENTION = re.compile(r"^$")


def cpp_files():
    globs = ["src/ops/*.cpp", "src/cpu/*.cpp", "src/backend/lower_*.cpp",
             "src/backend/lowering.cpp", "src/backend/refusal_probe.cpp",
             "src/backend/gpu_plan_build.cpp", "src/backend/norm_view.cpp",
             "src/graph/graph.cpp", "src/graph/tensor.cpp", "src/api/api_ops.cpp",
             "src/api/api_norm_ops.cpp", "src/api/api_transformer_ops.cpp",
             "src/api/api_layout_ops.cpp", "src/api/api_block_scale.cpp", "src/api/api_moe.cpp",
             "src/api/api_batchnorm_split.cpp", "src/api/norm_tensors.h",
             "src/api/api_attention.cpp", "src/api/api_score_mod.cpp"]
    files = sorted({p for g in globs for p in ROOT.glob(g)})
    return [p for p in files if not _ATTENTION.search(p.relative_to(ROOT).as_posix())]


def python_files():
    files = sorted((ROOT / "bindings" / "python" / "cudnnfe").glob("*.py"))
    return [p for p in files if not _ATTENTION.search(p.name) and p.name != "_cdef.py"]


_KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "else", "do", "try", "sizeof",
             "decltype", "defined", "static_assert"}
_CPP_REFUSAL = re.compile(
    r"\b(?:fail_graph|fail_argument|fail_not_supported)\s*\("
    r"|\brefuse\s*\(\s*node\b"  # attention's support rules (src/ops/attention_support.cpp)
    r"|\bfail\s*\(\s*(?:CUDNNFE_STATUS_(?:NOT_SUPPORTED|INVALID_GRAPH|INVALID_ARGUMENT)|status)\b")


def _blank(text):
    """``text`` with comments and string/char literals blanked (same length)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] != text[i]:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def _function_name(head):
    """The function a ``{`` opens, from the text before it; None for other blocks."""
    head = " ".join(head.split())
    if not head or re.search(r"\]\s*(\(|mutable|->|$)", head):  # a lambda
        return None
    if "=" in re.sub(r"operator\s*\S+|[=!<>]=", "", head.split("(")[0]):
        return None
    m = re.search(r"(~?[A-Za-z_]\w*)\s*\(", head)
    if not m or m.group(1) in _KEYWORDS or head.split()[0] in _KEYWORDS:
        return None
    return m.group(1) if head.count("(") == head.count(")") else None


def cpp_refusals(path):
    """(function, line) of every refusal call in a C++ file."""
    raw = path.read_text()
    text = _blank(raw)
    stack, head_start, found = [], 0, []
    for m in re.finditer(r"[{};]|" + _CPP_REFUSAL.pattern, text):
        token = m.group(0)
        if token == "{":
            stack.append(_function_name(text[head_start:m.start()]))
            head_start = m.end()
        elif token in "};":
            if token == "}" and stack:
                stack.pop()
            head_start = m.end()
        else:
            before = text[max(0, m.start() - 40):m.start()]
            if re.search(r"(void|\]\])\s*$", before):  # a definition, not a call
                continue
            names = [s for s in stack if s]
            found.append((names[-1] if names else "?", raw.count("\n", 0, m.start()) + 1))
    return found


_PY_REFUSAL = re.compile(r"raise\s+(?:\w+\.)?(?:NotOfferedError|GraphNotSupportedError|"
                         r"InvalidGraphError|_not_offered|_refuse)\b"
                         r"|self\._defer\(")  # refusals raised later, at validate()


def python_refusals(path):
    lines = path.read_text().split("\n")
    found = []
    for i, line in enumerate(lines):
        if not _PY_REFUSAL.search(line):
            continue
        indent = len(line) - len(line.lstrip())
        name = "?"
        for j in range(i, -1, -1):
            m = re.match(r"^(\s*)def\s+(\w+)", lines[j])
            if m and len(m.group(1)) < indent:
                name = m.group(2)
                break
        found.append((name, i + 1))
    return found


def scanned():
    """{"file:function": [line, ...]} over every covered file."""
    keys = {}
    for path in cpp_files():
        for name, line in cpp_refusals(path):
            keys.setdefault(f"{path.relative_to(ROOT).as_posix()}:{name}", []).append(line)
    for path in python_files():
        for name, line in python_refusals(path):
            keys.setdefault(f"{path.relative_to(ROOT).as_posix()}:{name}", []).append(line)
    return keys


def documented():
    """The ``file:function`` keys the document's tables name (rows of removed rules, under
    the "Removed" heading, name no key)."""
    text = DOC.read_text()
    return set(re.findall(r"`((?:src|bindings)/[\w/.-]+\.(?:cpp|h|py):~?\w+)`", text))


def test_the_scan_finds_what_it_should():
    """The scanner itself: it sees a known refusal in each kind of file, with its function."""
    keys = scanned()
    assert "src/ops/norm_shapes.cpp:require_norm_param" in keys
    assert "src/backend/lower_layout.cpp:lower_reshape" in keys
    assert "src/backend/gpu_plan_build.cpp:build_plan_set_from_config" in keys  # in a lambda
    assert "src/graph/graph.cpp:validate" in keys
    assert "bindings/python/cudnnfe/_norms.py:instancenorm_backward" in keys
    assert "src/ops/attention_support.cpp:check_graph_rules" in keys  # refuse(node, ...)
    assert "bindings/python/cudnnfe/_attention.py:sdpa_fp8" in keys  # self._defer(...)
    assert not any(k.endswith(":?") for k in keys), [k for k in keys if k.endswith(":?")]


def test_every_refusal_is_in_the_inventory():
    missing = sorted(k for k in scanned() if f"`{k}`" not in DOC.read_text())
    assert not missing, ("refusals not listed in docs/refusals.md (add a row: rule, where, "
                         "class, evidence, status):\n  " +
                         "\n  ".join(f"{k} (line {', '.join(map(str, scanned()[k]))})"
                                     for k in missing))


def test_every_listed_rule_still_exists():
    stale = sorted(documented() - set(scanned()))
    assert not stale, ("docs/refusals.md lists rules the sources no longer have (move them to "
                       "the Removed section, or fix the name):\n  " + "\n  ".join(stale))


def test_the_attention_section_is_left_for_the_lead():
    text = DOC.read_text()
    assert "## Attention (sdpa, sdpa_backward, sdpa_fp8, sdpa_fp8_backward)" in text


def table_rows():
    """(class, status, row) of every rule row above the "Removed" section."""
    text = DOC.read_text().split("\n## Removed")[0]
    rows = []
    for line in text.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 5 or cells[0] in ("rule (message, short)",):
            continue
        if set(cells[0]) <= set("-"):
            continue
        rows.append((cells[2], cells[4], line))
    return rows


def test_each_class_has_its_status():
    """The principle as a check: malformed graphs (1) are INVALID_*, everything cudnnfe cannot
    run (2 cudnn-frontend or cuDNN refuses, 3 cuDNN computes wrong, C the CPU reference's limit,
    L cudnnfe's limit) is NOT_SUPPORTED, and the Python binding's API gaps (N) raise
    NotOfferedError (a GraphNotSupportedError)."""
    rows = table_rows()
    assert len(rows) > 80
    allowed = {"1": ("INVALID_GRAPH", "INVALID_ARGUMENT"), "2": ("NOT_SUPPORTED",),
               "3": ("NOT_SUPPORTED",), "C": ("NOT_SUPPORTED",), "L": ("NOT_SUPPORTED",),
               "N": ("NotOfferedError",), "—": ("INVALID_GRAPH",)}
    wrong = [line for cls, status, line in rows
             if cls not in allowed or not status.startswith(allowed[cls])]
    assert not wrong, "rows whose status does not fit their class:\n" + "\n".join(wrong)
