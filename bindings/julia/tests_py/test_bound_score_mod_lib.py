"""Bound executions, device properties, set_ragged_offset! and score
modifiers of CuDNNFE.jl (src/bound.jl, src/device_properties.jl,
src/score_mod.jl, src/ops.jl) checked without Julia: the C calls they make
are replayed through ctypes with the Julia layer's conversions (bound
buffers in bound_tensors order, a score placeholder's Julia size as
reversed C dims, the `:off`/`:capture` symbols as lower-cased constant
names), on the CPU reference, and the messages the Julia tests match are
checked. A static part checks that test/bound_device_properties_score_mod.jl
calls every new function.
"""
import ctypes
import re

import pytest

import jlcheck
from test_conventions_lib import (  # noqa: F401 (lib and g are fixtures)
    CONST, F, LIB_PATH, STRUCTS, CudnnfeError, Graph, g, lib)

np = jlcheck.require("numpy", "pip install numpy")

pytestmark = pytest.mark.skipif(LIB_PATH is None, reason="no built libcudnnfe.so (build*/ or $CUDNNFE_LIBRARY)")

I64 = ctypes.c_int64
RNG = np.random.default_rng(18)
NEW_FUNCTIONS = ["bind_execution", "execute!", "cuda_graph_mode", "DeviceProperties",
                 "serialize_device_properties", "set_ragged_offset!", "begin_score_mod!",
                 "end_score_mod!", "score_mod!"]


@pytest.fixture
def handle(lib):
    h = ctypes.c_void_p()
    assert lib.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
    yield h
    lib.cudnnfe_handle_destroy(h)


def bound_uids(g):
    n = ctypes.c_size_t()
    g.check(g.L.cudnnfe_graph_get_bound_uids(g.p, None, 0, ctypes.byref(n)))
    uids = (I64 * n.value)()
    g.check(g.L.cudnnfe_graph_get_bound_uids(g.p, uids, n, ctypes.byref(n)))
    return list(uids)


def bind(g, h, addresses, mode="off"):
    """bind_execution(g, h, buffers; cuda_graph = mode): (status, bound)."""
    o = g.opts("cudnnfe_bind_options_t", cuda_graph=CONST["CUDNNFE_CUDA_GRAPH_" + mode.upper()])
    data = (ctypes.c_void_p * len(addresses))(*addresses)
    out = ctypes.c_void_p()
    status = g.L.cudnnfe_graph_bind(ctypes.byref(out), g.p, h, data, ctypes.c_size_t(len(addresses)),
                                    None, ctypes.c_size_t(0), ctypes.byref(o))
    return status, out


def test_the_cuda_graph_symbols_are_the_constants_lower_cased():
    modes = {n[len("CUDNNFE_CUDA_GRAPH_"):].lower() for n in CONST if n.startswith("CUDNNFE_CUDA_GRAPH_")}
    assert modes == {"off", "native", "capture", "auto"}


def test_bound_matmul_reads_its_arrays_at_each_run(g, lib, handle):
    a, b = F(RNG.standard_normal((3, 4)).astype(np.float32)), F(RNG.standard_normal((4, 5)).astype(np.float32))
    ta, tb = g.array_tensor(a, "a"), g.array_tensor(b, "b")
    tc = g.output(g.matmul(ta, tb))
    o = g.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_CPU_REFERENCE"])
    g.check(lib.cudnnfe_graph_build(g.p, None, ctypes.byref(o)))
    c = np.full((3, 5), np.nan, np.float32, order="F")
    arrays = {ta: a, tb: b, tc: c}
    order = bound_uids(g)
    status, bound = bind(g, handle, [arrays[u].ctypes.data for u in order])
    assert status == 0, lib.cudnnfe_handle_last_error(handle)
    try:
        mode = ctypes.c_int32(-1)
        assert lib.cudnnfe_bound_get_cuda_graph_mode(bound, ctypes.byref(mode)) == 0
        assert mode.value == CONST["CUDNNFE_CUDA_GRAPH_OFF"]
        assert lib.cudnnfe_bound_execute(bound, None) == 0
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
        a *= -2
        assert lib.cudnnfe_bound_execute(bound, None) == 0
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    finally:
        assert lib.cudnnfe_bound_destroy(bound) == 0

    for mode in ("native", "capture", "auto"):
        status, _ = bind(g, handle, [arrays[u].ctypes.data for u in order], mode)
        assert status == CONST["CUDNNFE_STATUS_NOT_SUPPORTED"]
        assert "CPU reference" in lib.cudnnfe_handle_last_error(handle).decode()
    addresses = [arrays[u].ctypes.data for u in order]
    addresses[1] = None
    status, _ = bind(g, handle, addresses)
    assert status == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]
    assert 'data[1] for tensor "%s"' % g.name(order[1]) in lib.cudnnfe_handle_last_error(handle).decode()


@pytest.mark.parametrize("bad, what", [(b"deviceVer=900", "not JSON"), (b"[900, 132]", "not an object"),
                                       (b'{"maxGridSize":[2147483647,65535,65535],"ma', "not JSON")])
def test_bad_device_properties_json(lib, bad, what):
    out = ctypes.c_void_p()
    status = lib.cudnnfe_device_properties_create_from_json(ctypes.byref(out), bad, ctypes.c_size_t(len(bad)))
    assert status == CONST["CUDNNFE_STATUS_BAD_SERIALIZED_DATA"]
    assert what in lib.cudnnfe_last_error().decode()
    assert not out.value


def test_score_placeholder_has_the_julia_size_reversed(g, lib):
    jsize = (5, 3, 2, 1)  # (s_kv, s_q, h_q, b)
    cd = (I64 * 4)(*reversed(jsize))
    score = I64()
    g.check(lib.cudnnfe_graph_begin_score_mod(g.p, b"score", 4, cd, ctypes.byref(score)))
    assert g.jsize(score.value)[0] == jsize
    again = I64()
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_begin_score_mod(g.p, None, 4, cd, ctypes.byref(again)))
    assert e.value.status == CONST["CUDNNFE_STATUS_WRONG_STATE"]
    x = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], jsize, name="x")
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_end_score_mod(g.p, score, I64(g.pointwise("neg", x))))
    assert e.value.status == CONST["CUDNNFE_STATUS_INVALID_GRAPH"]
    g.check(lib.cudnnfe_graph_end_score_mod(g.p, score, I64(g.pointwise("neg", score.value))))


def test_three_score_dims_are_refused(g, lib):
    cd = (I64 * 3)(2, 3, 5)
    with pytest.raises(CudnnfeError, match="4 dims") as e:
        g.check(lib.cudnnfe_graph_begin_score_mod(g.p, None, 3, cd, ctypes.byref(I64())))
    assert e.value.status == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]


def test_set_ragged_offset_of_a_tensor_no_attention_uses(g, lib):
    x = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (4, 4, 2, 2), name="lonely")
    off = g.tensor(CONST["CUDNNFE_DTYPE_INT32"], (1, 1, 1, 3), name="offsets")
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_set_ragged_offset(g.p, I64(x), I64(off)))
    assert e.value.status == CONST["CUDNNFE_STATUS_INVALID_ARGUMENT"]


def test_the_julia_tests_call_every_new_function():
    text = jlcheck.julia_sources(jlcheck.TEST_DIR)["bound_device_properties_score_mod.jl"]
    code = jlcheck.strip_julia_comments(text)
    missing = [f for f in NEW_FUNCTIONS if not re.search(re.escape(f) + r"\(", code)]
    assert not missing, "test/bound_device_properties_score_mod.jl never calls %s" % missing
    for keyword in ("device_properties", "score_mod", "score_mod_bprop", "cuda_graph"):
        assert re.search(keyword + r"\s*=", code), keyword
    runtests = jlcheck.julia_sources(jlcheck.TEST_DIR)["runtests.jl"]
    assert 'include("bound_device_properties_score_mod.jl")' in runtests
