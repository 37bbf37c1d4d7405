"""Static checks of the Julia sources that need no Julia:

* syntax: every .jl file parses with tree-sitter-julia, with no error node;
* the text readers of jlcheck agree with tree-sitter's syntax tree (so the
  other tests read the Julia code right);
* `fatou lint` (a Julia linter that runs without Julia) with the rules of
  bindings/julia/fatou.toml: undefined names, call arity, missing includes,
  unresolved imports; run again on a copy of the tests with @testset/@test
  stripped, since fatou does not look inside macro calls;
* Project.toml: name, a fixed UUID, the standard libraries' real UUIDs.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import uuid

import pytest

import jlcheck

JL_FILES = sorted(
    [os.path.join("src", f) for f in jlcheck.julia_sources(jlcheck.SRC_DIR)]
    + [os.path.join("test", f) for f in jlcheck.julia_sources(jlcheck.TEST_DIR)])


@pytest.fixture(scope="module")
def ts_parser():
    ts = jlcheck.require("tree_sitter", "pip install tree-sitter tree-sitter-julia")
    tsj = jlcheck.require("tree_sitter_julia", "pip install tree-sitter tree-sitter-julia")
    return ts.Parser(ts.Language(tsj.language()))


def _read(rel):
    with open(os.path.join(jlcheck.PKG, rel), "rb") as f:
        return f.read()


def _walk(node):
    yield node
    for c in node.children:
        yield from _walk(c)


@pytest.mark.parametrize("rel", JL_FILES)
def test_syntax(ts_parser, rel):
    src = _read(rel)
    tree = ts_parser.parse(src)
    bad = [n for n in _walk(tree.root_node) if n.type == "ERROR" or n.is_missing]
    where = ["line %d: %r" % (n.start_point[0] + 1, src[n.start_byte:n.end_byte][:60]) for n in bad[:5]]
    assert not bad, "%s does not parse: %s" % (rel, "; ".join(where))


def test_the_syntax_check_finds_errors(ts_parser):
    for broken in [b"function f(x)\n  x +\nend\n", b"module M\nf() = 1\n", b"a = [1, 2\n",
                   b"g(x) = (x, y\n"]:
        assert ts_parser.parse(broken).root_node.has_error, broken


def _ts_qualified_calls(tree, src, qualifier):
    """[(name, positional argument count or None)] for every `qualifier.name`."""
    out = []
    for n in _walk(tree.root_node):
        if n.type != "field_expression" or len(n.children) != 3:
            continue
        q, _, name = n.children
        if src[q.start_byte:q.end_byte].decode() != qualifier or q.type != "identifier":
            continue
        parent = n.parent
        count = None
        if parent is not None and parent.type == "call_expression" and parent.children[0] == n:
            args = parent.children[1]
            count = 0
            for c in args.children:
                if c.type == ";":
                    break
                if c.type not in ("(", ")", ",", "named_argument"):
                    count += 1
        out.append((src[name.start_byte:name.end_byte].decode(), count))
    return sorted(out, key=lambda x: (x[0], -1 if x[1] is None else x[1]))


@pytest.mark.parametrize("rel,qualifier", [(f, "Lib") for f in JL_FILES if f.startswith("src")]
                         + [(f, "LibCuDNNFE") for f in JL_FILES if f.startswith("test")]
                         + [(f, "CuDNNFE") for f in JL_FILES if f.startswith("test")])
def test_text_reader_agrees_with_the_syntax_tree(ts_parser, rel, qualifier):
    src = _read(rel)
    ts_uses = _ts_qualified_calls(ts_parser.parse(src), src, qualifier)
    text_uses = sorted(((n, None if a is None else len(a))
                        for n, a in jlcheck.qualified_uses(src.decode(), qualifier)),
                       key=lambda x: (x[0], -1 if x[1] is None else x[1]))
    assert text_uses == ts_uses


def test_generated_functions_agree_with_the_syntax_tree(ts_parser, lib):
    src = _read(os.path.join("src", "LibCuDNNFE.jl"))
    tree = ts_parser.parse(src)
    defs, ccalls = set(), []
    for n in _walk(tree.root_node):
        if n.type == "function_definition":
            sig = n.children[1]
            callee = sig.children[0] if sig.type == "signature" else sig
            while callee.type != "identifier" and callee.children:
                callee = callee.children[0]
            defs.add(src[callee.start_byte:callee.end_byte].decode())
        if n.type == "call_expression" and src[n.children[0].start_byte:n.children[0].end_byte] == b"ccall":
            ccalls.append(n)
    assert defs == set(lib.functions)
    assert len(ccalls) == len([f for f in lib.functions.values() if f.get("symbol")])


def _fatou():
    exe = shutil.which("fatou")
    if exe:
        return exe
    # pip installs console scripts next to the interpreter.
    cand = os.path.join(os.path.dirname(sys.executable), "fatou")
    return cand if os.path.isfile(cand) else None


GATED_RULES = {"undefined-name", "call-arity", "missing-include-file", "unresolved-import",
               "function-has-no-methods", "julia-version-compat", "parse-error",
               "duplicate-argument", "break-outside-loop", "include-cycle", "redefined-constant"}


def _fatou_gated_findings(pkg_dir):
    """Runs `fatou lint` on a package directory; returns (gated findings, stderr)."""
    exe = _fatou()
    if exe is None:
        jlcheck.missing_tool("fatou is not installed (pip install fatou): the Julia lint")
    r = subprocess.run([exe, "--config", os.path.join(str(pkg_dir), "fatou.toml"), "--color", "never",
                        "lint", "--output", "json", "."], cwd=str(pkg_dir), capture_output=True, text=True)
    start = r.stdout.find("[")
    assert start >= 0, "fatou printed no JSON: %s %s" % (r.stdout, r.stderr)
    findings, _ = json.JSONDecoder().raw_decode(r.stdout[start:])
    gated = [f for f in findings
             if f.get("rule") in GATED_RULES or f.get("severity") == "error"]
    return gated, r.stderr


def test_fatou_lint():
    gated, stderr = _fatou_gated_findings(jlcheck.PKG)
    assert not gated, json.dumps(gated, indent=1)[:4000]
    assert "error" not in stderr.lower(), stderr


def test_fatou_finds_a_typo_and_a_wrong_arity(tmp_path):
    # The lint is not vacuous: the same configuration flags an undefined name
    # and a call with the wrong number of arguments.
    pkg = tmp_path / "julia"
    shutil.copytree(jlcheck.PKG, pkg, ignore=shutil.ignore_patterns("tests_py", "gen", "__pycache__"))
    ops = pkg / "src" / "ops.jl"
    text = ops.read_text()
    assert "return T(values...)" in text and '_spatial(stride, n, o.stride, "stride")' in text
    ops.write_text(text.replace("return T(values...)", "return T(valuez...)")
                   .replace('_spatial(stride, n, o.stride, "stride")', "_spatial(stride, n, o.stride)"))
    gated, _ = _fatou_gated_findings(pkg)
    rules = {(f["rule"], f["path"].lstrip("./")) for f in gated}
    assert ("undefined-name", "src/ops.jl") in rules
    assert ("call-arity", "src/ops.jl") in rules
    assert any("valuez" in f["message"]["body"] for f in gated)


def _strip_test_macros(text):
    """The test files with @testset blocks turned into `let` blocks and @test
    / @test_throws removed, so that the lint sees the code inside them (it
    does not look inside macro calls)."""
    text = re.sub(r'@testset\s+"(?:[^"\\]|\\.)*"\s+begin', "let", text)
    text = re.sub(r"@test_throws\s+(\w+)\s+", r"\1, ", text)
    return re.sub(r"@test\s+", "", text)


def _package_copy_with_plain_tests(tmp_path):
    pkg = tmp_path / "julia"
    shutil.copytree(jlcheck.PKG, pkg, ignore=shutil.ignore_patterns("tests_py", "gen", "__pycache__"))
    for f in (pkg / "test").glob("*.jl"):
        f.write_text(_strip_test_macros(f.read_text()))
    return pkg


def test_fatou_lint_of_the_test_bodies(tmp_path):
    pkg = _package_copy_with_plain_tests(tmp_path)
    assert "@test " not in (pkg / "test" / "runtests.jl").read_text()
    gated, stderr = _fatou_gated_findings(pkg)
    assert not gated, json.dumps(gated, indent=1)[:4000]
    assert "error" not in stderr.lower(), stderr


def test_fatou_lint_of_the_test_bodies_finds_a_typo(tmp_path):
    pkg = _package_copy_with_plain_tests(tmp_path)
    rt = pkg / "test" / "runtests.jl"
    text = rt.read_text()
    assert "    version() >= header_version()\n" in text
    rt.write_text(text.replace("    version() >= header_version()\n", "    versionn() >= header_version()\n"))
    gated, _ = _fatou_gated_findings(pkg)
    assert any(f["rule"] == "undefined-name" and "versionn" in f["message"]["body"] for f in gated)


STDLIB_UUIDS = {
    "Libdl": "8f399da3-3557-5675-b5ff-fb832c97cbdb",
    "LinearAlgebra": "37e2e46d-f89d-539d-b4ee-838fcccc9c8e",
    "Random": "9a3f8284-a2c9-5f02-9a11-845980a1fd5c",
    "Test": "8dfed614-e22c-5e08-85e1-65c5234f0b40",
}


def test_project_toml():
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ for tomllib")
    with open(os.path.join(jlcheck.PKG, "Project.toml"), "rb") as f:
        project = tomllib.load(f)
    assert project["name"] == "CuDNNFE"
    assert str(uuid.UUID(project["uuid"])) == project["uuid"] == "1eb150ff-498e-4737-8c41-190b7bb6d46f"
    assert project["deps"] == {"Libdl": STDLIB_UUIDS["Libdl"]}
    for name, u in project.get("extras", {}).items():
        assert STDLIB_UUIDS.get(name) == u, name
    assert set(project["targets"]["test"]) == set(project["extras"])
    assert project["compat"]["julia"] == "1.6"
    # Every package the tests load is a dependency (or loaded only on demand).
    used = set()
    for text in jlcheck.julia_sources(jlcheck.TEST_DIR).values():
        used |= set(re.findall(r"^(?:using|import) (\w+)", text, re.M))
    assert used - {"CuDNNFE", "CUDA"} <= set(project["extras"])
