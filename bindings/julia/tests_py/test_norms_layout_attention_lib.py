"""The ops of the norms / layout / attention-options release as CuDNNFE.jl
makes them (src/ops.jl), checked without Julia.

As in test_conventions_lib.py, numpy arrays in Fortran order stand in for
Julia arrays and the C calls the Julia functions make are replayed through
ctypes, with the Julia layer's conversions (sizes reversed, 1-based ranges
and dims, the `transpose!` permutation, the pooling index as a column-major
window position) written out here a second time; results are compared with
numpy computations in Julia indexing, on the CPU reference. A static part
checks that every new option field is set by src/ops.jl and that
test/runtests.jl exercises every new function.
"""
import ctypes
import math
import pathlib
import re

import pytest

import jlcheck
from test_conventions_lib import (  # noqa: F401 (lib and g are fixtures)
    CONST, F, LIB_PATH, NP_DTYPE, STRUCTS, CudnnfeError, Graph, g, lib)

np = jlcheck.require("numpy", "pip install numpy")

pytestmark = pytest.mark.skipif(LIB_PATH is None, reason="no built libcudnnfe.so (build*/ or $CUDNNFE_LIBRARY)")

NP_DTYPE.setdefault(np.int64, CONST["CUDNNFE_DTYPE_INT64"])
NP_DTYPE.setdefault(np.int8, CONST["CUDNNFE_DTYPE_INT8"])

SRC = jlcheck.julia_sources(jlcheck.SRC_DIR)
RUNTESTS = jlcheck.julia_sources(jlcheck.TEST_DIR)["runtests.jl"]
RNG = np.random.default_rng(11)
I64 = ctypes.c_int64


def outs(n):
    return [I64() for _ in range(n)]


def refs(xs):
    return [ctypes.byref(x) if x is not None else None for x in xs]


def scalar(g, value, dtype="FLOAT"):
    u = I64()
    g.check(g.L.cudnnfe_graph_add_scalar(g.p, None, CONST["CUDNNFE_DTYPE_" + dtype], value, ctypes.byref(u)))
    return u.value


# ---------------------------------------------------------------- norms

def test_batchnorm_with_running_statistics(g, lib):
    # batchnorm!(g, x, scale, bias; running_mean, running_var, momentum, epsilon):
    # x (W, H, C, N); per-channel tensors (1, 1, C, 1).
    W, H, C, N = 3, 2, 4, 2
    eps, momentum = 1e-3, 0.25
    x = F((RNG.standard_normal((W, H, C, N)) * 2 + 0.5).astype(np.float32))
    scale, bias = (F(RNG.standard_normal((1, 1, C, 1)).astype(np.float32)) for _ in range(2))
    rm = F(RNG.standard_normal((1, 1, C, 1)).astype(np.float32))
    rv = F((RNG.random((1, 1, C, 1)) + 0.5).astype(np.float32))
    tx, ts, tb, tm, tv = (g.array_tensor(a) for a in (x, scale, bias, rm, rv))
    o = g.opts("cudnnfe_norm_options_t", name="bn", epsilon=eps, momentum=momentum)
    res = outs(5)
    g.check(lib.cudnnfe_graph_add_batchnorm(g.p, *[I64(u) for u in (tx, ts, tb, tm, tv)],
                                            ctypes.byref(o), *refs(res)))
    u = [r.value for r in res]
    assert g.jsize(u[1])[0] == (1, 1, C, 1) == g.jsize(u[4])[0]
    assert g.name(u[2]) == "bn::inv_variance"
    y, mean, iv, nm, nv = g.run({tx: x, ts: scale, tb: bias, tm: rm, tv: rv}, [g.output(t) for t in u])
    X = x.astype(np.float64)
    mu = X.mean(axis=(0, 1, 3), keepdims=True)
    var = ((X - mu) ** 2).mean(axis=(0, 1, 3), keepdims=True)
    M = W * H * N
    np.testing.assert_allclose(y, (X - mu) / np.sqrt(var + eps) * scale + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(iv, 1 / np.sqrt(var + eps), rtol=1e-5)
    np.testing.assert_allclose(nm, (1 - momentum) * rm + momentum * mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nv, (1 - momentum) * rv + momentum * var * M / (M - 1), rtol=1e-5)


def test_batchnorm_without_running_statistics_has_no_next_outputs(g, lib):
    x = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (3, 2, 4, 2))
    p = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (1, 1, 4, 1))
    o = g.opts("cudnnfe_norm_options_t")
    res = outs(5)
    g.check(lib.cudnnfe_graph_add_batchnorm(g.p, I64(x), I64(p), I64(p), I64(0), I64(0),
                                            ctypes.byref(o), *refs(res)))
    # batchnorm! returns `nothing` for UID 0.
    assert res[3].value == 0 and res[4].value == 0


def test_batchnorm_inference_and_backward(g, lib):
    W, C, N = 5, 2, 3
    x = F(RNG.standard_normal((W, C, N)).astype(np.float32))
    dy = F(RNG.standard_normal((W, C, N)).astype(np.float32))
    scale = F(np.array([1.5, -0.5], np.float32).reshape(1, C, 1))
    bias = F(np.array([0.25, 1.0], np.float32).reshape(1, C, 1))
    X = x.astype(np.float64)
    mu = X.mean(axis=(0, 2), keepdims=True)
    iv = 1 / np.sqrt(((X - mu) ** 2).mean(axis=(0, 2), keepdims=True) + 1e-5)
    m32, iv32 = F(mu.astype(np.float32)), F(iv.astype(np.float32))
    ts = [g.array_tensor(a) for a in (x, dy, scale, bias, m32, iv32)]
    tx, tdy, tsc, tb, tm, tiv = ts
    o = g.opts("cudnnfe_norm_options_t")
    y = I64()
    g.check(lib.cudnnfe_graph_add_batchnorm_inference(g.p, *[I64(u) for u in (tx, tsc, tb, tm, tiv)],
                                                      ctypes.byref(o), ctypes.byref(y)))
    grads = outs(3)
    g.check(lib.cudnnfe_graph_add_batchnorm_backward(g.p, *[I64(u) for u in (tdy, tx, tsc, tm, tiv)],
                                                     ctypes.byref(o), *refs(grads)))
    assert g.jsize(grads[1].value)[0] == (1, C, 1)
    got = g.run(dict(zip(ts, (x, dy, scale, bias, m32, iv32))),
                [g.output(u.value) for u in [y] + grads])
    xhat = (X - m32) * iv32
    M = W * N
    db = dy.sum(axis=(0, 2), keepdims=True, dtype=np.float64)
    ds = (dy * xhat).sum(axis=(0, 2), keepdims=True)
    dx = scale * iv32 / M * (M * dy - db - xhat * ds)
    np.testing.assert_allclose(got[0], xhat * scale + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], ds, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[3], db, rtol=1e-4, atol=1e-5)


def test_instance_and_adaptive_layer_norm(g, lib):
    # instancenorm!: x (S, C, N), statistics (1, C, N). adalayernorm!: x (F, T, B),
    # per-sample scale and bias (F, 1, B), statistics (1, T, B), 1 + scale.
    S, C, N = 4, 3, 2
    x = F((RNG.standard_normal((S, C, N)) * 3).astype(np.float32))
    scale = F(RNG.standard_normal((1, C, 1)).astype(np.float32))
    bias = F(RNG.standard_normal((1, C, 1)).astype(np.float32))
    ascale = F(RNG.standard_normal((S, 1, N)).astype(np.float32))
    abias = F(RNG.standard_normal((S, 1, N)).astype(np.float32))
    ts = [g.array_tensor(a) for a in (x, scale, bias, ascale, abias)]
    o = g.opts("cudnnfe_norm_options_t")
    inst = outs(3)
    g.check(lib.cudnnfe_graph_add_instancenorm(g.p, *[I64(u) for u in ts[:3]], ctypes.byref(o), *refs(inst)))
    assert g.jsize(inst[1].value)[0] == (1, C, N)
    oi = g.opts("cudnnfe_norm_options_t", phase=CONST["CUDNNFE_NORM_PHASE_INFERENCE"], zero_centered_gamma=1)
    ada = outs(3)
    g.check(lib.cudnnfe_graph_add_adalayernorm(g.p, I64(ts[0]), I64(ts[3]), I64(ts[4]), ctypes.byref(oi),
                                               *refs(ada)))
    assert ada[1].value == 0 and ada[2].value == 0  # inference: `nothing`
    got = g.run(dict(zip(ts, (x, scale, bias, ascale, abias))),
                [g.output(u.value) for u in inst + ada[:1]])
    X = x.astype(np.float64)
    mu = X.mean(axis=0, keepdims=True)
    iv = 1 / np.sqrt(((X - mu) ** 2).mean(axis=0, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got[0], (X - mu) * iv * scale + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], iv, rtol=1e-5)
    np.testing.assert_allclose(got[3], (X - mu) * iv * (1 + ascale) + abias, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------ attention

def alibi_slope(h, heads):
    n = 1 << (heads.bit_length() - 1)
    return 2.0 ** (-8 * (h + 1) / n) if h < n else 2.0 ** (-4 * (2 * (h - n) + 1) / n)


def ref_attention(q, k, v, scale, seq_q=None, seq_kv=None, causal=False, left=None, right=None,
                  bottom_right=False, alibi=False, bias=None):
    """Julia order: q (d, s_q, h_q, b), k (d, s_kv, h_kv, b), v (d_v, s_kv, h_kv, b);
    0-based loops over the documented rules. Returns o, stats and P[j, i, h, b]."""
    d, sq, hq, B = q.shape
    skv, hkv = k.shape[1], k.shape[2]
    o = np.zeros((v.shape[0], sq, hq, B))
    stats = np.full((1, sq, hq, B), -np.inf)
    P = np.zeros((skv, sq, hq, B))
    for b in range(B):
        lq = sq if seq_q is None else int(seq_q[b])
        lkv = skv if seq_kv is None else int(seq_kv[b])
        for h in range(hq):
            hk = h // (hq // hkv)
            for i in range(lq):
                diag = i + lkv - lq if bottom_right else i
                s = np.full(skv, -np.inf)
                for j in range(lkv):
                    if (causal and j > diag) or (left is not None and j <= diag - left) or \
                            (right is not None and j > diag + right):
                        continue
                    s[j] = scale * float(q[:, i, h, b].astype(np.float64) @ k[:, j, hk, b])
                    if alibi:
                        s[j] += alibi_slope(h, hq) * (j - i)
                    if bias is not None:
                        s[j] += bias[j, i, h, 0]
                if np.isneginf(s).all():
                    continue
                m = s.max()
                p = np.exp(s - m)
                stats[0, i, h, b] = m + math.log(p.sum())
                p /= p.sum()
                P[:, i, h, b] = p
                o[:, i, h, b] = v[:, :, hk, b].astype(np.float64) @ p
    return o, stats, P


def _sdpa(g, lib, q, k, v, **fields):
    tq, tk, tv = g.array_tensor(q), g.array_tensor(k), g.array_tensor(v)
    o = g.opts("cudnnfe_sdpa_options_t", generate_stats=1, **fields)
    out, st = I64(), I64()
    g.check(lib.cudnnfe_graph_add_sdpa(g.p, I64(tq), I64(tk), I64(tv), ctypes.byref(o), ctypes.byref(out),
                                       ctypes.byref(st)))
    return tq, tk, tv, g.output(out.value), g.output(st.value)


def _attention_data(d, sq, skv, hq, hkv, B):
    q = F(RNG.standard_normal((d, sq, hq, B)).astype(np.float32))
    k = F(RNG.standard_normal((d, skv, hkv, B)).astype(np.float32))
    v = F(RNG.standard_normal((d, skv, hkv, B)).astype(np.float32))
    return q, k, v


@pytest.mark.parametrize("bottom_right", [False, True])
def test_attention_with_padding(g, lib, bottom_right):
    # sdpa!(...; seq_len_q, seq_len_kv, causal = :bottom_right): lengths (1, 1, 1, b) INT32,
    # padding_mask set because they are given.
    d, sq, skv, hq, hkv, B = 4, 5, 6, 2, 1, 2
    q, k, v = _attention_data(d, sq, skv, hq, hkv, B)
    lq = F(np.array([3, 5], np.int32).reshape(1, 1, 1, B))
    lkv = F(np.array([4, 6], np.int32).reshape(1, 1, 1, B))
    tlq, tlkv = g.array_tensor(lq), g.array_tensor(lkv)
    assert g.jsize(tlq)[0] == (1, 1, 1, B)
    tq, tk, tv, to, ts = _sdpa(g, lib, q, k, v, padding_mask=1, seq_len_q=tlq, seq_len_kv=tlkv,
                               causal_mask_bottom_right=int(bottom_right))
    o, st = g.run({tq: q, tk: k, tv: v, tlq: lq, tlkv: lkv}, [to, ts])
    oref, sref, _ = ref_attention(q, k, v, 1 / math.sqrt(d), lq.ravel(), lkv.ravel(), causal=bottom_right,
                                  bottom_right=bottom_right)
    np.testing.assert_allclose(o, oref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(st, sref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("left,right,alignment,sq,skv", [(2, 1, "TOP_LEFT", 6, 6), (3, 0, "BOTTOM_RIGHT", 4, 7),
                                                         (2, None, "TOP_LEFT", 5, 5)])
def test_attention_with_a_diagonal_band(g, lib, left, right, alignment, sq, skv):
    # sdpa!(...; window_left, window_right, diagonal_alignment): `nothing` is -1.
    d = 3
    q, k, v = _attention_data(d, sq, skv, 2, 2, 1)
    tq, tk, tv, to, ts = _sdpa(g, lib, q, k, v, window_left=left, window_right=-1 if right is None else right,
                               diagonal_alignment=CONST["CUDNNFE_DIAGONAL_" + alignment])
    o, st = g.run({tq: q, tk: k, tv: v}, [to, ts])
    oref, sref, _ = ref_attention(q, k, v, 1 / math.sqrt(d), left=left, right=right,
                                  bottom_right=alignment == "BOTTOM_RIGHT")
    np.testing.assert_allclose(o, oref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(st, sref, rtol=1e-4, atol=1e-5)


def test_attention_with_alibi_and_a_scale_tensor(g, lib):
    # sdpa!(...; causal = true, alibi = true, scale = <Tensor>): attn_scale_tensor.
    assert [alibi_slope(h, 6) for h in range(6)] == [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3]
    d, s = 4, 5
    q, k, v = _attention_data(d, s, s, 6, 3, 1)
    sc = F(np.array([0.3], np.float32).reshape(1, 1, 1, 1))
    tsc = g.array_tensor(sc)
    tq, tk, tv, to, ts = _sdpa(g, lib, q, k, v, causal_mask=1, alibi_mask=1, attn_scale_tensor=tsc)
    o, st = g.run({tq: q, tk: k, tv: v, tsc: sc}, [to, ts])
    oref, sref, _ = ref_attention(q, k, v, float(sc[0, 0, 0, 0]), causal=True, alibi=True)
    np.testing.assert_allclose(o, oref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(st, sref, rtol=1e-4, atol=1e-5)


def test_attention_backward_with_dbias(g, lib):
    # sdpa_backward!(...; bias, dbias = true): cudnnfe_graph_add_sdpa_backward_ex;
    # bias (s_kv, s_q, h_q, 1), dbias shaped as bias, the sum over the batch of dS.
    d, sq, skv, hq, B = 3, 3, 4, 2, 2
    q, k, v = _attention_data(d, sq, skv, hq, hq, B)
    bias = F(RNG.standard_normal((skv, sq, hq, 1)).astype(np.float32))
    dO = F(RNG.standard_normal((d, sq, hq, B)).astype(np.float32))
    scale = 1 / math.sqrt(d)
    oref, sref, P = ref_attention(q, k, v, scale, bias=bias)
    o32, s32 = F(oref.astype(np.float32)), F(sref.astype(np.float32))
    ts = [g.array_tensor(a) for a in (q, k, v, o32, dO, s32, bias)]
    bo = g.opts("cudnnfe_sdpa_backward_options_t", bias=ts[6], name="bwd")
    grads = outs(4)
    g.check(lib.cudnnfe_graph_add_sdpa_backward_ex(g.p, *[I64(u) for u in ts[:6]], ctypes.byref(bo),
                                                   *refs(grads)))
    assert g.name(grads[3].value) == "bwd::dBias"
    assert g.jsize(grads[3].value)[0] == (skv, sq, hq, 1)
    got = g.run(dict(zip(ts, (q, k, v, o32, dO, s32, bias))), [g.output(u.value) for u in grads])
    dq, dk, dv, db = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape), np.zeros(bias.shape)
    for b in range(B):
        for h in range(hq):
            p = P[:, :, h, b]                               # [j, i]
            dP = v[:, :, h, b].astype(np.float64).T @ dO[:, :, h, b]
            dS = p * (dP - (p * dP).sum(axis=0, keepdims=True))
            dv[:, :, h, b] = dO[:, :, h, b] @ p.T
            dq[:, :, h, b] = scale * (k[:, :, h, b] @ dS)
            dk[:, :, h, b] = scale * (q[:, :, h, b] @ dS.T)
            db[:, :, h, 0] += dS
    for a, b in zip(got, (dq, dk, dv, db)):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


def test_fp8_attention(g, lib):
    # sdpa_fp8!(g, q, k, v; descale_q = one, ..., causal = true, stats = true); o set to HALF.
    d, s, h = 8, 4, 2
    tq, tk, tv = (g.tensor(CONST["CUDNNFE_DTYPE_FP8_E4M3"], (d, s, h, 1)) for _ in range(3))
    one = scalar(g, 1.0)
    o = g.opts("cudnnfe_sdpa_fp8_options_t", generate_stats=1, causal_mask=1)
    res = outs(4)
    g.check(lib.cudnnfe_graph_add_sdpa_fp8(g.p, I64(tq), I64(tk), I64(tv), *[I64(one)] * 6, ctypes.byref(o),
                                           *refs(res)))
    out, st, amax_s, amax_o = (r.value for r in res)
    assert g.jsize(out)[0] == (d, s, h, 1) and g.jsize(amax_s)[0] == (1, 1, 1, 1)
    g.check(lib.cudnnfe_tensor_set_dtype(g.p, I64(out), CONST["CUDNNFE_DTYPE_HALF"]))
    for t in (out, st, amax_s, amax_o):
        g.output(t)
    bo = g.opts("cudnnfe_build_options_t", target=CONST["CUDNNFE_TARGET_CPU_REFERENCE"])
    g.check(lib.cudnnfe_graph_build(g.p, None, ctypes.byref(bo)))
    zeros = F(np.zeros((d, s, h, 1), np.uint8))
    ones = F(np.full((d, s, h, 1), 0x38, np.uint8))  # 1.0 in E4M3
    o16 = F(np.zeros((d, s, h, 1), np.float16))
    st32, as32, ao32 = F(np.zeros((1, s, h, 1), np.float32)), np.zeros(1, np.float32), np.zeros(1, np.float32)
    pairs = [(tq, zeros), (tk, zeros), (tv, ones), (out, o16), (st, st32), (amax_s, as32), (amax_o, ao32)]
    B = STRUCTS["cudnnfe_binding_t"] * len(pairs)
    bindings = B(*[STRUCTS["cudnnfe_binding_t"](u, a.ctypes.data) for u, a in pairs])
    hd = ctypes.c_void_p()
    assert lib.cudnnfe_handle_create(ctypes.byref(hd), -1) == 0
    try:
        status = lib.cudnnfe_graph_execute(g.p, hd, bindings, len(pairs), None, 0, None)
        assert status == 0, lib.cudnnfe_handle_last_error(hd)
    finally:
        lib.cudnnfe_handle_destroy(hd)
    # Zero scores: P = 1/i over the i causal keys of query i (1-based), cast
    # to E4M3 before P·V: 1/3 becomes 0.34375, so query 3's output is 1.03125.
    rows = np.array([1, 1, 1.03125, 1])
    np.testing.assert_array_equal(o16[:, :, :, 0], np.broadcast_to(rows[None, :, None], (d, s, h)))
    np.testing.assert_allclose(st32[0, :, :, 0], np.log(np.arange(1, s + 1))[:, None] * np.ones((1, h)), rtol=1e-6)
    assert (as32[0], ao32[0]) == (1.0, 1.03125)


def test_fp8_attention_backward_shapes(g, lib):
    d, s, h = 8, 4, 2
    fp8 = CONST["CUDNNFE_DTYPE_FP8_E4M3"]
    t = [g.tensor(fp8, (d, s, h, 1)) for _ in range(5)]
    st = g.tensor(CONST["CUDNNFE_DTYPE_FLOAT"], (1, s, h, 1))
    one = scalar(g, 1.0)
    o = g.opts("cudnnfe_sdpa_fp8_backward_options_t", causal_mask=1)
    res = outs(7)
    g.check(lib.cudnnfe_graph_add_sdpa_fp8_backward(g.p, *[I64(u) for u in t + [st]], *[I64(one)] * 12,
                                                    ctypes.byref(o), *refs(res)))
    assert [g.jsize(r.value)[0] for r in res] == [(d, s, h, 1)] * 3 + [(1, 1, 1, 1)] * 4


# ---------------------------------------------------- layout ops, pooling, rng

def julia_transpose_perm(perm):
    """transpose!'s conversion: C permutation[k] = n - perm[n - k] (perm 1-based)."""
    n = len(perm)
    return [n - perm[n - k - 1] for k in range(n)]


def julia_slice(indices, size):
    """slice!'s conversion of Julia indices (ranges as (first, step, last), None for `:`,
    ints) to C (start, end, step), reversed."""
    start, end, step = [], [], []
    for r, n in zip(indices, size):
        if r is None:
            a, e, s = 0, n, 1
        elif isinstance(r, int):
            a, e, s = r - 1, r, 1
        else:
            first, st, last = r
            last = first + (last - first) // st * st   # Julia normalizes a StepRange's stop
            a, e, s = first - 1, last, st
        start.append(a)
        end.append(e)
        step.append(s)
    return start[::-1], end[::-1], step[::-1]


def layout_opts(g, name=None):
    return g.opts("cudnnfe_layout_options_t", **({"name": name} if name else {}))


def test_reshape_transpose_slice_concatenate(g, lib):
    x = F(RNG.standard_normal((4, 6, 2)).astype(np.float32))
    y = F(RNG.standard_normal((4, 3, 2)).astype(np.float32))
    tx, ty = g.array_tensor(x), g.array_tensor(y)
    lo = layout_opts(g)
    # reshape!(g, x, (8, 6)): C dims reversed; Julia's column-major reshape.
    r = I64()
    cd = (I64 * 2)(6, 8)
    g.check(lib.cudnnfe_graph_add_reshape(g.p, I64(tx), 2, cd, ctypes.byref(lo), ctypes.byref(r)))
    assert g.jsize(r.value)[0] == (8, 6)
    # transpose!(g, x, (3, 1, 2)) == permutedims(x, (3, 1, 2)).
    perm = julia_transpose_perm([3, 1, 2])
    t = I64()
    g.check(lib.cudnnfe_graph_add_transpose(g.p, I64(tx), 3, (ctypes.c_int32 * 3)(*perm), ctypes.byref(lo),
                                            ctypes.byref(t)))
    assert g.jsize(t.value)[0] == (2, 4, 6)
    tid = g.pointwise("identity", t.value)
    g.check(lib.cudnnfe_tensor_set_strides(g.p, I64(tid), 3, (I64 * 3)(8, 2, 1)))  # packed (2, 4, 6)
    # slice!(g, x, 2:3, 1:2:6, :) -> (2, 3, 2), a view fed to an identity.
    start, end, step = julia_slice([(2, 1, 3), (1, 2, 6), None], x.shape)
    s = I64()
    arr = lambda v: (I64 * 3)(*v)  # noqa: E731
    g.check(lib.cudnnfe_graph_add_slice(g.p, I64(tx), 3, arr(start), arr(end), arr(step), ctypes.byref(lo),
                                        ctypes.byref(s)))
    assert g.jsize(s.value)[0] == (2, 3, 2)
    sid = g.pointwise("identity", s.value)
    # concatenate!(g, x, y; dims = 2) == cat(x, y; dims = 2): C axis n - dims.
    c = I64()
    g.check(lib.cudnnfe_graph_add_concatenate(g.p, 2, (I64 * 2)(tx, ty), 3 - 2, ctypes.byref(lo),
                                              ctypes.byref(c)))
    assert g.jsize(c.value)[0] == (4, 9, 2)
    re_, tr, sl, cat = g.run({tx: x, ty: y}, [g.output(r.value), g.output(tid), g.output(sid),
                                               g.output(c.value)])
    np.testing.assert_array_equal(re_, x.reshape((8, 6), order="F"))
    np.testing.assert_array_equal(tr, np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(sl, x[1:3, 0:6:2, :])
    np.testing.assert_array_equal(cat, np.concatenate([x, y], axis=1))


@pytest.mark.parametrize("mode", ["MAXPOOL", "AVGPOOL_INCLUDE_PADDING", "AVGPOOL_EXCLUDE_PADDING"])
def test_pooling_in_whcn(g, lib, mode):
    # resample!(g, x; mode, window = (3, 2), stride = (2, 1), padding = (1, 0), index)
    # with x (W, H, C, N): spatial values reversed into the C struct.
    W, H, C, N = 6, 5, 2, 1
    win, stride, pad = (3, 2), (2, 1), (1, 0)
    x = F(RNG.standard_normal((W, H, C, N)).astype(np.float32))
    tx = g.array_tensor(x)
    c3 = lambda v, dflt: (I64 * 3)(*(list(reversed(v)) + [dflt]))  # noqa: E731
    o = g.opts("cudnnfe_resample_options_t", mode=CONST["CUDNNFE_RESAMPLE_" + mode], spatial_dims=2,
               window=c3(win, 2), stride=c3(stride, 2), pre_padding=c3(pad, 0), post_padding=c3(pad, 0),
               generate_index=int(mode == "MAXPOOL"))
    y, idx = I64(), I64()
    g.check(lib.cudnnfe_graph_add_resample(g.p, I64(tx), ctypes.byref(o), ctypes.byref(y), ctypes.byref(idx)))
    ow = [(n + 2 * p - w) // s + 1 for n, p, w, s in zip((W, H), pad, win, stride)]
    assert g.jsize(y.value)[0] == (ow[0], ow[1], C, N)
    outputs = [g.output(y.value)] + ([g.output(idx.value)] if mode == "MAXPOOL" else [])
    if mode == "MAXPOOL":
        assert g.dtype(idx.value) == CONST["CUDNNFE_DTYPE_INT8"]
    got = g.run({tx: x}, outputs)
    ref, ref_idx = np.zeros((ow[0], ow[1], C, N)), np.zeros((ow[0], ow[1], C, N), np.int8)
    for c in range(C):
        for i in range(ow[0]):
            for j in range(ow[1]):
                best, at, total, count = -np.inf, 0, 0.0, 0
                # C order over the window: H offsets outer, W offsets inner, so the
                # index is the column-major position in the (W, H) window.
                for b in range(win[1]):
                    for a in range(win[0]):
                        wi, hi = i * stride[0] + a - pad[0], j * stride[1] + b - pad[1]
                        if not (0 <= wi < W and 0 <= hi < H):
                            continue
                        val = float(x[wi, hi, c, 0])
                        if val > best:
                            best, at = val, a + b * win[0]
                        total += val
                        count += 1
                ref[i, j, c, 0] = {"MAXPOOL": best, "AVGPOOL_INCLUDE_PADDING": total / (win[0] * win[1]),
                                   "AVGPOOL_EXCLUDE_PADDING": total / count}[mode]
                ref_idx[i, j, c, 0] = at
    np.testing.assert_allclose(got[0], ref, rtol=1e-6, atol=1e-6)
    if mode == "MAXPOOL":
        np.testing.assert_array_equal(got[1], ref_idx)


def _mix(z):
    m = (1 << 64) - 1
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & m
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def _u(seed, counter):
    m = (1 << 64) - 1
    w = _mix((_mix(seed) + (counter + 1) * 0x9E3779B97F4A7C15) & m)
    return ((w >> 11) + 0.5) / 2.0 ** 53


def test_rng_in_julia_linear_order(g, lib):
    # rng!(g, (3, 4); distribution = :uniform, uniform_min = -2, uniform_max = 3,
    #      seed = <Tensor>, offset = <Tensor>): element i (Julia linear index) is
    # the generator's element i.
    seed, offset = F(np.array([1234], np.int64)), F(np.array([7], np.int64))
    ts, to = g.array_tensor(seed), g.array_tensor(offset)
    o = g.opts("cudnnfe_rng_options_t", distribution=CONST["CUDNNFE_RNG_UNIFORM"], uniform_min=-2.0,
               uniform_max=3.0)
    y = I64()
    g.check(lib.cudnnfe_graph_add_rng(g.p, 2, (I64 * 2)(4, 3), I64(ts), I64(to), ctypes.byref(o),
                                      ctypes.byref(y)))
    assert g.jsize(y.value)[0] == (3, 4)
    (got,) = g.run({ts: seed, to: offset}, [g.output(y.value)])
    want = np.array([-2 + 5 * _u(1234, 2 * (7 + i)) for i in range(12)]).reshape((3, 4), order="F")
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------- bad input

def test_bad_input_gives_the_library_message(g, lib):
    f32 = CONST["CUDNNFE_DTYPE_FLOAT"]
    x, y = g.tensor(f32, (10, 4), name="x"), g.tensor(f32, (3, 5), name="y")
    lo = layout_opts(g, "sl")
    s = I64()
    start, end, step = julia_slice([None, (3, 1, 11)], (4, 10))  # slice!(g, x, :, 3:11): past the end
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_add_slice(g.p, I64(x), 2, (I64 * 2)(*start), (I64 * 2)(*end), (I64 * 2)(*step),
                                            ctypes.byref(lo), ctypes.byref(s)))
    assert e.value.status == CONST["CUDNNFE_STATUS_INVALID_GRAPH"]
    assert 'slice "sl"' in e.value.message and '"x"' in e.value.message
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_add_concatenate(g.p, 2, (I64 * 2)(x, y), 1, ctypes.byref(layout_opts(g, "cat")),
                                                  ctypes.byref(s)))
    assert 'concatenate "cat"' in e.value.message and "only the axis" in e.value.message
    q = g.tensor(f32, (8, 4, 2, 1), name="q")
    o = g.opts("cudnnfe_sdpa_options_t", name="attn", window_left=0)  # window_left = 0
    st = I64()
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_add_sdpa(g.p, I64(q), I64(q), I64(q), ctypes.byref(o), ctypes.byref(s),
                                           ctypes.byref(st)))
    assert 'sdpa "attn"' in e.value.message and "window_left" in e.value.message
    img = g.tensor(f32, (4, 4, 1, 1), name="img")
    c3 = (I64 * 3)(2, 2, 2)
    o = g.opts("cudnnfe_resample_options_t", name="pool", spatial_dims=2, window=c3, pre_padding=c3)
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_add_resample(g.p, I64(img), ctypes.byref(o), ctypes.byref(s), None))
    assert 'resample "pool"' in e.value.message and "smaller than the window" in e.value.message
    o = g.opts("cudnnfe_norm_options_t", name="bn")
    with pytest.raises(CudnnfeError) as e:
        g.check(lib.cudnnfe_graph_add_batchnorm(g.p, I64(img), I64(img), I64(img), I64(0), I64(0),
                                                ctypes.byref(o), *refs(outs(5))))
    assert 'batchnorm "bn"' in e.value.message and "one value per channel" in e.value.message


# ------------------------------------------------------------- static part

NEW_FUNCTIONS = ["batchnorm!", "batchnorm_inference!", "batchnorm_backward!", "instancenorm!",
                 "instancenorm_backward!", "adalayernorm!", "adalayernorm_backward!", "sdpa_fp8!",
                 "sdpa_fp8_backward!", "reshape!", "transpose!", "slice!", "concatenate!", "resample!", "rng!"]


def test_runtests_exercises_every_new_function():
    code = jlcheck.strip_julia_comments(RUNTESTS)
    missing = [f for f in NEW_FUNCTIONS + ["sdpa_backward!"] if not re.search(re.escape(f) + r"\(", code)]
    assert not missing, "test/runtests.jl never calls %s" % missing
    for kw in ("seq_len_q", "window_left", "window_right", "diagonal_alignment", "alibi", "dbias",
               "dropout_mask", "running_mean", "momentum", "index"):
        assert re.search(r"\b%s\s*=" % kw, code), "test/runtests.jl never passes %s" % kw


def test_every_options_field_is_set_by_the_idiomatic_layer():
    # Every field of every options struct (struct_size aside) is written by
    # src/ (a `field = ...` keyword of _with, a NamedTuple or a struct field).
    from test_conventions_lib import MANIFEST
    code = "\n".join(jlcheck.strip_julia_comments(t) for n, t in SRC.items() if n != "LibCuDNNFE.jl")
    # Options of functions not wrapped yet (bindings/PENDING_IDIOMATIC.txt)
    # have no Julia function to set them.
    # Fields listed for "julia" under [fields] ("julia S.f: reason") are
    # accepted as unset, exactly those (as the Go, Rust and Python tests do).
    pending_file = pathlib.Path(__file__).resolve().parents[2] / "PENDING_IDIOMATIC.txt"
    functions_part, _, fields_part = pending_file.read_text().partition("\n[fields]\n")
    pending = {l.strip() for l in functions_part.splitlines()
               if l.strip() and not l.startswith("#")}
    pending_fields = {l.split(":")[0].split()[1] for l in fields_part.splitlines()
                      if l.startswith("julia ")}
    missing, stale = [], []
    for s in MANIFEST["structs"]:
        if not s["typedef"].endswith("_options_t"):
            continue
        if s["typedef"][:-len("_t")] + "_init_sized" in pending:
            continue
        for f in s["fields"]:
            if f["name"] == "struct_size":
                continue
            key = "%s.%s" % (s["typedef"], f["name"])
            is_set = re.search(r"\b%s\s*=" % re.escape(f["name"]), code) is not None
            if not is_set and key not in pending_fields:
                missing.append(key)
            if is_set and key in pending_fields:
                stale.append(key)
            pending_fields.discard(key)
    assert not missing, "option fields no Julia function sets: %s" % missing
    assert not stale and not pending_fields, \
        "PENDING_IDIOMATIC.txt lists Julia fields that are settable or gone: %s" % (
            stale + sorted(pending_fields))
