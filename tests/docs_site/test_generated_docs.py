"""The documentation site's generated pages are current, and its getting-started code is
code the test suites run.

* docs/reference/c-api.md is what scripts/gen_c_api_docs.py makes of the header today,
  with an entry for every function of abi/manifest.json;
* docs/benchmarks/*.svg and results.md are what bench/plot_results.py draws from
  docs/benchmarks/results/*.json (with the pinned matplotlib: another release draws
  other bytes, a skip here and a failure under CI=true);
* every file a page includes with --8<-- is one that a suite runs or checks.

Run: python3 -m pytest tests/docs_site (needs matplotlib for the charts).
"""
import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DOCS = os.path.join(REPO, "docs")
GEN_C_API = os.path.join(REPO, "scripts", "gen_c_api_docs.py")
PLOT = os.path.join(REPO, "bench", "plot_results.py")
C_API_PAGE = os.path.join(DOCS, "reference", "c-api.md")

sys.path.insert(0, os.path.join(REPO, "bench"))
import plot_results  # noqa: E402


def in_ci():
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          cwd=REPO)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_c_api_reference_is_current(tmp_path):
    out = tmp_path / "c-api.md"
    r = run(GEN_C_API, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text(encoding="utf-8") == read(C_API_PAGE), \
        "docs/reference/c-api.md is stale: run python3 scripts/gen_c_api_docs.py"
    assert run(GEN_C_API, "--check").returncode == 0


def test_c_api_reference_has_every_function():
    manifest = json.loads(read(os.path.join(REPO, "abi", "manifest.json")))
    found = re.findall(r'\{#([a-z0-9_]+)\}|<a id="([a-z0-9_]+)">', read(C_API_PAGE))
    anchors = {a or b for a, b in found}
    missing = [f["name"] for f in manifest["functions"] if f["name"] not in anchors]
    assert not missing, "no entry in docs/reference/c-api.md for %s" % missing


def test_c_api_reference_check_finds_a_stale_page(tmp_path):
    stale = tmp_path / "c-api.md"
    stale.write_text(read(C_API_PAGE).replace("cudnnfe_graph_create", "cudnnfe_graph_made", 1),
                     encoding="utf-8")
    r = run(GEN_C_API, "--check", "--out", str(stale))
    assert r.returncode == 1 and "stale" in r.stderr


def _matplotlib_or_skip():
    try:
        import matplotlib
    except ImportError:
        if in_ci():
            pytest.fail("matplotlib is not installed (.ci/requirements.txt); CI must draw "
                        "the charts", pytrace=False)
        pytest.skip("matplotlib is not installed")
    if matplotlib.__version__ != plot_results.PINNED_MATPLOTLIB:
        msg = ("matplotlib %s draws other bytes than the pinned %s"
               % (matplotlib.__version__, plot_results.PINNED_MATPLOTLIB))
        if in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)


def test_the_pin_is_the_requirements_pin():
    reqs = read(os.path.join(REPO, ".ci", "requirements.txt"))
    assert re.search(r"^matplotlib==%s\b" % re.escape(plot_results.PINNED_MATPLOTLIB), reqs, re.M)


def test_benchmark_charts_are_current():
    _matplotlib_or_skip()
    r = run(PLOT, "--check")
    assert r.returncode == 0, r.stderr


def _write(dirpath, name, doc):
    with open(os.path.join(dirpath, name), "w", encoding="utf-8") as f:
        json.dump(doc, f)


def _doc(date, rows, **extra):
    doc = {"benchmark": "bench_attention", "gpu": "GPU", "cudnn_version": "9.19.0",
           "cudnn_frontend_version": "1.32.0", "torch_version": "2.11", "date": date,
           "commit": "abc", "rows": rows}
    doc.update(extra)
    return doc


def _row(name, group, unit, values, hib=True):
    return {"name": name, "group": group, "unit": unit, "higher_is_better": hib,
            "values": values}


def test_rows_merge_across_files_newest_value_wins(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    _write(results, "a.json", _doc("2026-01-01", [
        _row("sdpa_fwd_s2k", "attention", "TFLOP/s", {"cudnnfe": 1.0, "pytorch": 3.0}),
        _row("sdpa_bwd_s2k", "attention", "TFLOP/s", {"cudnnfe": 2.0})]))
    _write(results, "b.json", _doc("2026-02-01", [
        _row("sdpa_fwd_s2k", "attention", "TFLOP/s", {"cudnnfe": 5.0, "jax": 4.0}),
        _row("execute_dict", "host", "us/call", {"cudnn-frontend": 20.0}, hib=False)]))
    charts = plot_results.collect(plot_results.load_results(str(results)))
    assert [plot_results.chart_id(k) for k in charts] == [
        "attention-fwd-tflops", "attention-bwd-tflops", "host-uscall"]
    fwd = charts[("attention", "fwd", "TFLOP/s")]["rows"][0]["values"]
    assert fwd == {"cudnnfe": 5.0, "pytorch": 3.0, "jax": 4.0}


def test_bad_result_files_are_refused(tmp_path):
    _write(tmp_path, "x.json", _doc("2026-01-01", [
        _row("r", "gpu", "ms", {"tensorflow": 1.0})]))
    with pytest.raises(plot_results.ResultError, match="unknown implementation tensorflow"):
        plot_results.load_results(str(tmp_path))
    _write(tmp_path, "x.json", {"benchmark": "bench_same_code", "rows": []})
    with pytest.raises(plot_results.ResultError, match="missing gpu"):
        plot_results.load_results(str(tmp_path))


def test_plot_writes_charts_and_page(tmp_path):
    _matplotlib_or_skip()
    results, out = tmp_path / "results", tmp_path / "out"
    results.mkdir()
    out.mkdir()
    _write(results, "a.json", _doc("2026-01-01", [
        _row("build_first_graph", "build", "ms", {"cudnnfe": 100.0, "cudnn-frontend": 120.0},
             hib=False)]))
    (out / "old-chart.svg").write_text("<svg/>")
    assert run(PLOT, "--results", str(results), "--out", str(out)).returncode == 0
    assert sorted(os.listdir(out)) == ["build-ms.svg", "results.md"]  # the old chart removed
    svg = (out / "build-ms.svg").read_text()
    assert svg.startswith("<?xml") and "<dc:date>" not in svg
    assert "![Build time: ms (lower is better)](build-ms.svg)" in (out / "results.md").read_text()
    assert run(PLOT, "--check", "--results", str(results), "--out", str(out)).returncode == 0


# Each page's included files, and where a suite runs (or, for Julia, checks) them.
SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::[\w-]+)?"\s*$', re.M)
RUN_BY = {
    "examples/c/first_graph.c": ("examples/c/CMakeLists.txt", "foreach(example first_graph"),
    "examples/c/example_util.h": ("examples/c/first_graph.c", '#include "example_util.h"'),
    "examples/python/first_graph.py": ("bindings/python/tests/test_examples.py",
                                       '_run(["first_graph.py"])'),
    "examples/rust/matmul_bias.rs": ("examples/rust/tests/run_examples.rs",
                                     '#[path = "../matmul_bias.rs"]'),
    "examples/go/matmul_bias/main.go": ("bindings/go/test.sh", "go run ./matmul_bias"),
    "bindings/julia/test/getting_started.jl": ("bindings/julia/test/runtests.jl",
                                               'include("getting_started.jl")'),
}


def test_getting_started_code_is_code_the_suites_run():
    included = set()
    for root, _, files in os.walk(DOCS):
        for f in files:
            if f.endswith(".md"):
                included.update(SNIPPET.findall(read(os.path.join(root, f))))
    assert {"examples/c/first_graph.c", "examples/python/first_graph.py",
            "examples/rust/matmul_bias.rs", "examples/go/matmul_bias/main.go",
            "bindings/julia/test/getting_started.jl"} <= included
    for path in sorted(included):
        assert path in RUN_BY, "docs include %s, which no suite is known to run" % path
        runner, text = RUN_BY[path]
        assert text in read(os.path.join(REPO, runner)), "%s no longer runs %s" % (runner, path)
