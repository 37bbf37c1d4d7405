"""Verify mode in CuDNNFE.jl (build!'s `verify`, `verify_samples` and
`verify_rtol` keywords, docs/verify.md), checked without Julia.

The C calls build! makes with those keywords are made here through ctypes
on the CPU reference, with the graph, options and environment of
test/runtests.jl's "verify mode" testset, and the results compared with
what it expects: a right result passes, the library's test hook
(CUDNNFE_VERIFY_TEST_CORRUPT=1) makes execute fail with
CUDNNFE_STATUS_VERIFY_FAILED (`:verify_failed`) and the message the testset
matches, `verify = false` wins over CUDNNFE_VERIFY=1, and a negative
tolerance is refused. A static part checks the keyword mapping.
"""
import ctypes
import os
import re

import pytest

import jlcheck
from test_plans_lib import CONST, RUNTESTS, SRC, _build, _mm_graph, _symbols, clib  # noqa: F401


def _testset():
    m = re.search(r'@testset "verify mode: [^"]*" begin\n(.*?)\n@testset "', RUNTESTS, re.S)
    assert m, "test/runtests.jl has no verify mode testset"
    return m.group(1)


def test_build_maps_the_verify_keywords():
    graph = SRC["graph.jl"]
    assert '_prefixed_constants("CUDNNFE_VERIFY_")' in graph
    assert set(_symbols("CUDNNFE_VERIFY_")) == {"from_env", "on", "off"}
    assert "_verify_code(v::Nothing) = VERIFY_CODES[:from_env]" in graph
    assert "_verify_code(v::Bool) = VERIFY_CODES[v ? :on : :off]" in graph
    for kw in ("verify = _verify_code(verify)", "verify_samples = Int32(verify_samples)",
               "verify_rtol = Float64(verify_rtol)"):
        assert kw in graph
    # :verify_failed comes from the status table the testset matches.
    assert "verify_failed" in _symbols("CUDNNFE_STATUS_")
    body = _testset()
    for part in ("verify = true", "verify = :on", "verify = false", ":verify_failed",
                 "CUDNNFE_VERIFY_TEST_CORRUPT", "verify_rtol = -1.0"):
        assert part in body


def _run(L, **fields):
    """run_mm(fields...) of the testset: build, execute; (status, message)."""
    g = _mm_graph(L, name=b"verified", cols=5)
    try:
        status = _build(g, **fields)
        if status:
            return status, g.message()
        uids = (ctypes.c_int64 * 8)()
        n = ctypes.c_size_t()
        g.ok("cudnnfe_graph_get_bound_uids", uids, 8, ctypes.byref(n))
        bufs = [(ctypes.c_float * 20)(*[0.25 * (i % 7) - 0.5 for i in range(20)]) for _ in range(n.value)]
        data = (ctypes.c_void_p * n.value)(*[ctypes.cast(b, ctypes.c_void_p) for b in bufs])
        h = ctypes.c_void_p()
        assert L.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
        status = L.cudnnfe_graph_execute_ordered(g.p, h, data, n.value, None, 0, None)
        message = L.cudnnfe_handle_last_error(h).decode() if status else ""
        L.cudnnfe_handle_destroy(h)
        return status, message
    finally:
        g.close()


@pytest.fixture
def env(monkeypatch):
    monkeypatch.delenv("CUDNNFE_VERIFY", raising=False)
    monkeypatch.delenv("CUDNNFE_VERIFY_TEST_CORRUPT", raising=False)
    return monkeypatch


def test_verify_keywords_reach_the_library(clib, env):
    on, off = CONST["CUDNNFE_VERIFY_ON"], CONST["CUDNNFE_VERIFY_OFF"]
    assert _run(clib, verify=on, verify_samples=4, verify_rtol=0.01) == (0, "")
    env.setenv("CUDNNFE_VERIFY_TEST_CORRUPT", "1")
    status, message = _run(clib, verify=on, verify_rtol=0.01)
    assert status == CONST["CUDNNFE_STATUS_VERIFY_FAILED"], message
    for part in ('verify: graph "verified"', 'matmul "mm"', "rtol 0.01", "cpu_reference"):
        assert part in message
    env.setenv("CUDNNFE_VERIFY", "1")
    assert _run(clib)[0] == CONST["CUDNNFE_STATUS_VERIFY_FAILED"]  # verify = nothing: the environment
    assert _run(clib, verify=off) == (0, "")
    env.delenv("CUDNNFE_VERIFY")
    env.delenv("CUDNNFE_VERIFY_TEST_CORRUPT")
    status, message = _run(clib, verify_rtol=-1.0)
    assert status == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"] and "verify_rtol" in message
