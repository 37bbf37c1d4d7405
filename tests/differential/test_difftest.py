"""Smoke tests of the differential tester on the CPU target (no GPU, no cudnn-frontend needed):
the generators are deterministic, every family builds and runs, and the comparisons catch a
wrong value, a wrong user layout and an error; the command line's exit status follows
--expect-clean. With NVIDIA's cudnn-frontend importable, every builder is also checked to
construct its graph with NVIDIA's API objects.

    CUDNNFE_LIBRARY=build/libcudnnfe.so PYTHONPATH=bindings/python \\
        python3 -m pytest -q tests/differential
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from difftest import case, compare, impls, layout, runner  # noqa: E402
from difftest.builder import Builder, Ragged  # noqa: E402
from difftest.families import FAMILIES  # noqa: E402
import run as cli  # noqa: E402


@pytest.fixture(scope="module")
def cpu():
    return impls.make("cpu")


def evaluate(cpu, family, seed):
    return case.evaluate(case.make(family, seed), cpu[0], cpu[1], "cpu")


def test_generation_is_deterministic():
    for fam in FAMILIES:
        a, b = case.make(fam, 7), case.make(fam, 7)
        assert a.params == b.params
        da = FAMILIES[fam].make_inputs(a.params, np.random.default_rng(7))
        db = FAMILIES[fam].make_inputs(b.params, np.random.default_rng(7))
        for name in da.bind:
            np.testing.assert_array_equal(np.asarray(da.bind[name], np.float64),
                                          np.asarray(db.bind[name], np.float64))
    assert case.make("conv", 7).params != case.make("conv", 8).params


def test_degenerate_fraction():
    assert [case.make("matmul", s).params["degenerate"] for s in range(8)] == \
        [True, False, False, False] * 2


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_runs_and_matches(cpu, family):
    """Graphs whose outputs are allocated from cudnnfe's own strides agree with NumPy."""
    verdicts = []
    for seed in range(1, 13):
        r = evaluate(cpu, family, seed)
        assert r["records"]["cudnnfe"]["status"] in ("ok", "refused"), r
        assert not [f for f in r["findings"] if f["variant"] == "own"], r["findings"]
        verdicts.append(r["verdict"])
    assert "agree" in verdicts


def test_wrong_reference_is_a_mismatch(cpu, monkeypatch):
    fam = FAMILIES["matmul"]
    real = fam.reference

    def off_by_one(p, data, target):
        out = real(p, data, target)
        out["C"].values = out["C"].values + 1.0
        return out

    monkeypatch.setattr(fam, "reference", off_by_one)
    r = evaluate(cpu, "matmul", 3)
    assert r["verdict"] == "mismatch"
    assert r["findings"][0]["output"] == "C" and r["findings"][0]["variant"] == "own"
    assert "--family matmul --seed 3 --count 1 --target cpu" in r["repro"]


def test_user_layout_mismatch_is_caught(cpu):
    """An output read from an allocation in another layout than the graph's strides is wrong,
    and the user-layout run says so (the mechanism that finds wrong stride inference)."""
    impl = cpu[0][0]
    c = case.make("conv", 1)
    c.params.update(op="fprop", layout="NHWC", epilogue="none", explicit=True, C=4, K=6,
                    groups=1, N=2)
    fam = FAMILIES["conv"]
    data = fam.make_inputs(c.params, np.random.default_rng(1))

    class Nchw:  # user code allocating NCHW outputs for an NHWC graph
        def __getattr__(self, name):
            return getattr(fam, name)

        @staticmethod
        def build(b, p):
            fam.build(b, p)
            y = b.outputs["Y"]
            y.user_strides = layout.contiguous(y.dims)

    rec = runner.run(impl, Nchw(), c, data)
    assert rec["status"] == "ok" and rec["user_layout_outputs"] == ["Y"]
    want = fam.reference(c.params, data, "cpu")["Y"].values
    assert compare.check(rec["outputs"]["Y"], want, c.params["dtype"]) is None
    bad = compare.check(rec["user_outputs"]["Y"], want, c.params["dtype"])
    assert bad and bad["bad"] > 0


def test_an_exception_is_an_error_with_its_stage(cpu):
    fam = FAMILIES["norms"]

    class Broken:
        def __getattr__(self, name):
            return getattr(fam, name)

        @staticmethod
        def build(b, p):
            raise KeyError("no such port")

    c = case.make("norms", 2)
    rec = runner.run(cpu[0][0], Broken(), c, fam.make_inputs(c.params,
                                                             np.random.default_rng(2)))
    assert rec["status"] == "error" and rec["stage"] == "construct"
    assert "KeyError" in rec["message"]
    assert case.verdict({"cudnnfe": rec}, []) == "error"


def test_verdicts():
    ok, refused = {"status": "ok"}, {"status": "refused"}
    assert case.verdict({"cudnnfe": refused, "cudnn-frontend": ok}, []) == "refused-cudnnfe"
    assert case.verdict({"cudnnfe": ok, "cudnn-frontend": refused}, []) == "refused-frontend"
    assert case.verdict({"cudnnfe": refused, "cudnn-frontend": refused}, []) == "refused-both"
    assert case.verdict({"cudnnfe": ok}, [{"explained": "a known defect"}]) == "explained"
    assert case.verdict({"cudnnfe": ok}, [{"explained": None}]) == "mismatch"


def test_compare_tolerances():
    want = np.array([1.0, -2.0, 100.0])
    assert compare.check(want * (1 + 1e-3), want, "HALF") is None
    assert compare.check(want * (1 + 1e-2), want, "HALF") is not None
    assert compare.check(want * (1 + 1e-2), want, "BFLOAT16") is None
    got = want.copy()
    got[1] = np.nan
    assert compare.check(got, want, "FLOAT")["nan"] == 1
    assert compare.check(got, want, "FLOAT", mask=np.array([True, False, True])) is None
    assert compare.check(np.array([np.inf]), np.array([np.inf]), "FLOAT") is None


def test_unpack_ragged():
    dims, strides = [2, 1, 3, 2], [6, 2, 2, 1]
    flat = np.arange(10, dtype=np.float64)
    out = runner.unpack_ragged(flat, dims, strides, Ragged([0, 4], [2, 3]))
    np.testing.assert_array_equal(out[0, 0, :2], [[0, 1], [2, 3]])
    assert np.isnan(out[0, 0, 2]).all()
    np.testing.assert_array_equal(out[1, 0], [[4, 5], [6, 7], [8, 9]])


def test_cli_expect_clean(monkeypatch, capsys):
    assert cli.main(["--family", "pointwise,matmul", "--count", "6", "--jobs", "1",
                     "--expect-clean"]) == 0
    out = capsys.readouterr().out
    assert "checked 6 graphs" in out and "pointwise" in out
    fam = FAMILIES["pointwise"]
    real = fam.reference

    def wrong(p, data, target):
        out = real(p, data, target)
        out["Y"].values = -out["Y"].values - 1
        return out

    monkeypatch.setattr(fam, "reference", wrong)
    assert cli.main(["--family", "pointwise", "--seed", "5", "--count", "1", "--jobs", "1",
                     "--expect-clean"]) == 1
    out = capsys.readouterr().out
    assert "reproduce: python3 tests/differential/run.py --family pointwise --seed 5" in out


def test_cli_rejects_unknown_family():
    with pytest.raises(SystemExit):
        cli.main(["--family", "nope"])


def _nvidia_cudnn():
    try:
        return impls.import_frontend()
    except impls.Unavailable as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_builders_construct_with_nvidia_api(family):
    """Every builder makes its graph with NVIDIA's cudnn-frontend objects (up to validate,
    which needs a GPU there)."""
    cudnn = _nvidia_cudnn()
    fam = FAMILIES[family]
    for seed in range(1, 41):
        c = case.make(family, seed)
        t = fam.graph_types(c.params)
        g = cudnn.pygraph(io_data_type=getattr(cudnn.data_type, t["io"]),
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
        data = fam.make_inputs(c.params, np.random.default_rng(seed))
        b = Builder(cudnn, g, data, bool(c.params.get("explicit")))
        fam.build(b, c.params)
        assert b.outputs
