"""The issue-16 functions of CuDNNFE.jl (src/block_scale.jl, src/moe.jl,
execute_with_overrides! in src/execute.jl) checked without Julia: the C
calls they make are replayed through ctypes with the Julia layer's
conversions written out a second time (the blocked Julia dimension `dims`
as C axis n - dims; MoE operands in Julia order; an override's Julia size
as reversed C dims with packed column-major strides), on the CPU reference,
against numpy in Julia indexing. A static part checks that
test/split_bn_block_scale_moe.jl calls every new function.
"""
import ctypes
import math
import re

import pytest

import jlcheck
from test_conventions_lib import (  # noqa: F401 (lib and g are fixtures)
    CONST, F, LIB_PATH, STRUCTS, CudnnfeError, Graph, g, lib)

np = jlcheck.require("numpy", "pip install numpy")

pytestmark = pytest.mark.skipif(LIB_PATH is None, reason="no built libcudnnfe.so (build*/ or $CUDNNFE_LIBRARY)")

I64 = ctypes.c_int64
RNG = np.random.default_rng(16)
NEW_FUNCTIONS = ["genstats!", "bn_finalize!", "dbn_weight!", "block_scale_quantize!",
                 "block_scale_dequantize!", "moe_grouped_matmul!", "moe_grouped_matmul_backward!",
                 "execute_with_overrides!", "KernelCache", "serialize_kernel_cache",
                 "deserialize_kernel_cache!"]


def build_and_execute(g, buffers, overrides=(), build=True):
    """build!(g; target = :cpu_reference[, override_shape_enabled]) unless
    built, and execute! (or execute_with_overrides! with (uid, julia_size)
    pairs)."""
    if build:
        o = g.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_CPU_REFERENCE"],
                   override_shape_enabled=1 if overrides else 0)
        g.check(g.L.cudnnfe_graph_build(g.p, None, ctypes.byref(o)))
    B = STRUCTS["cudnnfe_binding_t"] * len(buffers)
    bindings = B(*[STRUCTS["cudnnfe_binding_t"](u, a.ctypes.data) for u, a in buffers.items()])
    keep, ov = [], (STRUCTS["cudnnfe_shape_override_t"] * max(1, len(overrides)))()
    for i, (u, jsize) in enumerate(overrides):
        jstrides = [math.prod(jsize[:d]) for d in range(len(jsize))]  # _override_shape
        cd = (I64 * len(jsize))(*reversed(jsize))
        cs = (I64 * len(jsize))(*reversed(jstrides))
        keep += [cd, cs]
        ov[i] = STRUCTS["cudnnfe_shape_override_t"](u, len(jsize), ctypes.cast(cd, ctypes.c_void_p),
                                                    ctypes.cast(cs, ctypes.c_void_p))
    h = ctypes.c_void_p()
    assert g.L.cudnnfe_handle_create(ctypes.byref(h), -1) == 0
    try:
        # size_t arguments as c_size_t: a plain int would pass 32 bits only.
        n, zero = ctypes.c_size_t(len(buffers)), ctypes.c_size_t(0)
        if overrides:
            st = g.L.cudnnfe_graph_execute_with_overrides(g.p, h, bindings, n, ov, ctypes.c_size_t(len(overrides)),
                                                          None, zero, None)
        else:
            st = g.L.cudnnfe_graph_execute(g.p, h, bindings, n, None, zero, None)
        if st != 0:
            raise CudnnfeError(st, g.L.cudnnfe_handle_last_error(h).decode())
    finally:
        g.L.cudnnfe_handle_destroy(h)


def block_opts(g, n, dims, name):
    # _block_scale_options: the Julia dimension `dims` is C axis n - dims.
    return g.opts("cudnnfe_block_scale_options_t", name=name, axis=n - dims)


@pytest.mark.parametrize("dims", [1, 2])
def test_block_scale_round_trip_along_a_julia_dimension(g, lib, dims):
    # block_scale_quantize!(g, x; dims) then block_scale_dequantize!(g, y, scale; dims).
    jsize = (64, 96) if dims == 1 else (3, 64)
    x = F((RNG.standard_normal(jsize) * 3).astype(np.float32))
    tx = g.array_tensor(x, "x")
    y, s = I64(), I64()
    g.check(lib.cudnnfe_graph_add_block_scale_quantize(g.p, I64(tx), ctypes.byref(block_opts(g, 2, dims, "q")),
                                                       ctypes.byref(y), ctypes.byref(s)))
    want_scale = tuple(n // 32 if d == dims - 1 else n for d, n in enumerate(jsize))
    assert g.jsize(s.value)[0] == want_scale
    z = I64()
    g.check(lib.cudnnfe_graph_add_block_scale_dequantize(g.p, y, s, ctypes.byref(block_opts(g, 2, dims, "dq")),
                                                         ctypes.byref(z)))
    g.check(lib.cudnnfe_tensor_set_dtype(g.p, z, CONST["CUDNNFE_DTYPE_FLOAT"]))
    for u in (y.value, s.value, z.value):
        g.output(u)
    yb = np.zeros(jsize, np.uint8, order="F")
    sb = np.zeros(want_scale, np.uint8, order="F")
    back = np.zeros(jsize, np.float32, order="F")
    build_and_execute(g, {tx: x, y.value: yb, s.value: sb, z.value: back})
    # Blocks run along Julia dimension `dims`.
    blocks = np.moveaxis(x, dims - 1, 0).reshape(jsize[dims - 1] // 32, 32, -1)
    amax = np.abs(blocks).max(axis=1)
    want = (np.ceil(np.log2(amax.astype(np.float64) / 448)) + 127).astype(np.uint8)
    np.testing.assert_array_equal(np.moveaxis(sb, dims - 1, 0).reshape(want.shape), want)
    step = np.exp2(sb.astype(np.float64) - 127).repeat(32, axis=dims - 1)
    tol = np.maximum(np.abs(x) / 16, step * 2.0 ** -10) * 1.0001
    assert np.all(np.abs(back - x) <= tol)


def test_moe_grouped_matmul_in_julia_order(g, lib):
    # moe_grouped_matmul!(g, token (K, T, 1), weight (N, K, E) strides (K, 1, K*N), offsets (1, 1, G)).
    K, T, E, N = 5, 10, 3, 4
    token = F(RNG.integers(-3, 4, (K, T, 1)).astype(np.float32))
    w = F(RNG.integers(-3, 4, (K, N, E)).astype(np.float32))  # w[k, n, e], packed
    offsets = F(np.array([0, 2, 2], np.int32).reshape(1, 1, 3))
    tt = g.array_tensor(token, "token")
    tw = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (N, K, E), (K, 1, K * N), "weight")
    to = g.array_tensor(offsets, "first_token_offset")
    o = g.opts("cudnnfe_moe_grouped_matmul_options_t", name="moe",
               mode=CONST["CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE"])
    out = I64()
    g.check(lib.cudnnfe_graph_add_moe_grouped_matmul(g.p, I64(tt), I64(tw), I64(to), I64(0), I64(0),
                                                     ctypes.byref(o), ctypes.byref(out)))
    assert g.jsize(out.value)[0] == (N, T, 1)
    g.check(lib.cudnnfe_tensor_set_dtype(g.p, out, CONST["CUDNNFE_DTYPE_FLOAT"]))
    got = np.full((N, T, 1), np.nan, np.float32, order="F")
    build_and_execute(g, {tt: token, tw: w, to: offsets, g.output(out.value): got})
    bounds = [0, 2, 2, T]
    want = np.zeros((N, T, 1), np.float32)
    for grp in range(E):
        for r in range(bounds[grp], bounds[grp + 1]):
            want[:, r, 0] = w[:, :, grp].T @ token[:, r, 0]
    np.testing.assert_array_equal(got, want)


def test_execute_with_overrides_of_a_julia_size(g, lib):
    # matmul!(g, a, b) built for a (6, 4), run with a (2, 4): overrides a => (2, 4), c => (2, 3).
    a = F(RNG.standard_normal((2, 4)).astype(np.float32))
    b = F(RNG.standard_normal((4, 3)).astype(np.float32))
    ta = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (6, 4), None, "a")
    tb = g.array_tensor(b, "b")
    tc = g.output(g.matmul(ta, tb))
    c = np.full((2, 3), np.nan, np.float32, order="F")
    build_and_execute(g, {ta: a, tb: b, tc: c}, overrides=[(ta, (2, 4)), (tc, (2, 3))])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    with pytest.raises(CudnnfeError, match="give it an override too"):
        build_and_execute(g, {ta: a, tb: b, tc: np.zeros((6, 3), np.float32, order="F")},
                          overrides=[(ta, (2, 4))], build=False)


def test_the_julia_tests_call_every_new_function():
    text = jlcheck.julia_sources(jlcheck.TEST_DIR)["split_bn_block_scale_moe.jl"]
    code = jlcheck.strip_julia_comments(text)
    missing = [f for f in NEW_FUNCTIONS if not re.search(re.escape(f) + r"\(", code)]
    assert not missing, "test/split_bn_block_scale_moe.jl never calls %s" % missing
    assert re.search(r"kernel_cache\s*=", code) and re.search(r"override_shape_enabled\s*=\s*true", code)
