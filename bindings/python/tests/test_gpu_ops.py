"""The attention options, batch norm, pooling and the other new ops on the GPU, through the
Python API, against the NumPy references (float64 on host copies).

Skipped, with the reason shown, when torch is not installed or sees no CUDA device. On a
machine with a GPU these tests run and must pass; a refusal by cuDNN fails them, except
where docs/attention.md or docs/layout-ops.md documents it (then the message is printed
and checked). Outputs are pre-filled with NaN so that an element left unwritten fails.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="GPU tests need torch, which is not installed")
if not torch.cuda.is_available():
    pytest.skip("GPU tests need a CUDA device; torch sees none", allow_module_level=True)

import cudnnfe  # noqa: E402
from cudnnfe import data_type  # noqa: E402
import numpy_ref_ops as ref  # noqa: E402

DEV = torch.device("cuda")
GPU = cudnnfe.target.GPU
TOL = dict(atol=2e-2, rtol=2e-2)  # bf16 / fp16 outputs


@pytest.fixture(scope="module")
def handle():
    h = cudnnfe.create_handle()
    yield h
    cudnnfe.destroy_handle(h)


def _nan_like(t):
    from cudnnfe import _arrays

    dt = _arrays.torch_dtype(t.get_data_type())
    out = torch.empty_strided(t.get_dim(), t.get_stride(), dtype=dt, device=DEV)
    if dt.is_floating_point:
        out.fill_(float("nan"))
    return out


def _run(g, handle, inputs, outputs):
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    assert g.get_target() == GPU
    outs = [_nan_like(t) for t in outputs]
    pack = dict(inputs)
    pack.update(zip(outputs, outs))
    ws = torch.empty(g.get_workspace_size(), device=DEV, dtype=torch.uint8)
    g.execute(pack, ws, handle=handle)
    torch.cuda.synchronize()
    return outs


def _np(t):
    return t.detach().float().cpu().numpy().astype(np.float64)


def _close(actual, expected, atol=TOL["atol"], rtol=TOL["rtol"], what=""):
    got = _np(actual) if isinstance(actual, torch.Tensor) else np.asarray(actual, np.float64)
    assert np.isfinite(got).all(), f"{what}: NaN or inf (unwritten elements?)"
    err = np.abs(got - expected).max()
    print(f"  {what}: max abs error {err:.3g}")
    np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol)


# ---------------------------------------------------------------------------
# attention options
# ---------------------------------------------------------------------------

B, D = 2, 64
SEQ_Q, SEQ_KV = [100, 37], [128, 61]


def _attention_graph(dtype, hq, hkv, sq, skv, **options):
    io = data_type.BFLOAT16 if dtype == torch.bfloat16 else data_type.HALF
    g = cudnnfe.pygraph(io_data_type=io, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT)
    q = torch.randn(B, hq, sq, D, device=DEV, dtype=dtype)
    k = torch.randn(B, hkv, skv, D, device=DEV, dtype=dtype)
    v = torch.randn(B, hkv, skv, D, device=DEV, dtype=dtype)
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    return g, (q, k, v), {tq: q, tk: k, tv: v}, (tq, tk, tv)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.half])
@pytest.mark.parametrize("case", [
    dict(padding=True),
    dict(padding=True, causal=True, hq=4),
    dict(left=32, causal=True),
    dict(left=48, right=16),
    dict(alibi=True, causal=True, hq=6, hkv=3),
    dict(scale_tensor=True, causal=True),
], ids=["padding", "padding-causal-gqa", "causal-window32", "band48-16", "alibi-6heads",
        "scale-tensor"])
def test_sdpa_options_forward_and_backward(handle, dtype, case):
    hq, hkv, s = case.get("hq", 2), case.get("hkv", 2), 128
    scale = 0.11
    g, (q, k, v), inputs, (tq, tk, tv) = _attention_graph(dtype, hq, hkv, s, s)
    kw = dict(use_causal_mask=case.get("causal", False), use_alibi_mask=case.get("alibi", False))
    if "left" in case:
        kw["diagonal_band_left_bound"] = case["left"]
    if "right" in case:
        kw["diagonal_band_right_bound"] = case["right"]
    seq_q = torch.tensor(SEQ_Q, dtype=torch.int32, device=DEV).reshape(B, 1, 1, 1)
    seq_kv = torch.tensor(SEQ_KV, dtype=torch.int32, device=DEV).reshape(B, 1, 1, 1)
    extra = {}
    if case.get("padding"):
        extra = {"seq_len_q": seq_q, "seq_len_kv": seq_kv}
        kw["use_padding_mask"] = True
    if case.get("scale_tensor"):
        extra["attn_scale"] = torch.full((1, 1, 1, 1), scale, device=DEV)
    else:
        kw["attn_scale"] = scale
    for name, value in extra.items():
        t = g.tensor_like(value)
        inputs[t] = value
        kw[name] = t
    o, stats = g.sdpa(tq, tk, tv, generate_stats=True, name="attn", **kw)
    out_o, out_stats = _run(g, handle, inputs, [o.set_output(True), stats.set_output(True)])

    right = 0 if case.get("causal") else case.get("right", -1)
    mask = ref.visible(B, s, s, SEQ_Q if case.get("padding") else None,
                       SEQ_KV if case.get("padding") else None, left=case.get("left", -1),
                       right=right)
    want_o, want_stats, _ = ref.attention(_np(q), _np(k), _np(v), scale, mask,
                                          alibi=case.get("alibi", False))
    rows = [slice(None)] * B if not case.get("padding") else [slice(0, n) for n in SEQ_Q]
    for n in range(B):  # padding rows are unspecified on the GPU (docs/attention.md)
        _close(out_o[n, :, rows[n]], want_o[n, :, rows[n]], what=f"O[{n}]")
        _close(out_stats[n, :, rows[n]], want_stats[n, :, rows[n]], what=f"stats[{n}]")

    # The backward reads the reference forward's O and stats (0 and -inf on padding rows,
    # which the GPU forward leaves unspecified), as tests/test_gpu_attention_options.cpp does.
    ref_o = torch.tensor(want_o, dtype=dtype, device=DEV)
    ref_stats = torch.tensor(want_stats, dtype=torch.float32, device=DEV)
    do = torch.randn_like(q)
    gb = cudnnfe.pygraph(io_data_type=dtype, intermediate_data_type=data_type.FLOAT,
                         compute_data_type=data_type.FLOAT)
    arrays = [q, k, v, ref_o, do, ref_stats]
    ts = [gb.tensor_like(a) for a in arrays]
    binputs = dict(zip(ts, arrays))
    for name, value in extra.items():
        t = gb.tensor_like(value)
        binputs[t] = value
        kw[name] = t
    dq, dk, dv = gb.sdpa_backward(*ts, name="attn_bwd", **kw)
    got = _run(gb, handle, binputs, [dq.set_output(True), dk.set_output(True),
                                     dv.set_output(True)])
    want = ref.attention_backward(_np(q), _np(k), _np(v), _np(do), scale, mask,
                                  alibi=case.get("alibi", False))
    for n in range(B):
        kv_rows = slice(None) if not case.get("padding") else slice(0, SEQ_KV[n])
        _close(got[0][n, :, rows[n]], want[0][n, :, rows[n]], atol=5e-2, what=f"dQ[{n}]")
        _close(got[1][n, :, kv_rows], want[1][n, :, kv_rows], atol=5e-2, what=f"dK[{n}]")
        _close(got[2][n, :, kv_rows], want[2][n, :, kv_rows], atol=5e-2, what=f"dV[{n}]")


def test_sdpa_backward_dbias_placeholder(handle):
    s, hq = 128, 2
    g, (q, k, v), inputs, (tq, tk, tv) = _attention_graph(torch.half, hq, hq, s, s)
    bias = torch.randn(1, hq, s, s, device=DEV, dtype=torch.half)
    tb = g.tensor_like(bias)
    inputs[tb] = bias
    o, stats = g.sdpa(tq, tk, tv, attn_scale=0.125, bias=tb, generate_stats=True)
    out_o, out_stats = _run(g, handle, inputs, [o.set_output(True), stats.set_output(True)])
    do = torch.randn_like(q)
    gb = cudnnfe.pygraph(io_data_type=data_type.HALF, intermediate_data_type=data_type.FLOAT,
                         compute_data_type=data_type.FLOAT)
    arrays = [q, k, v, out_o, do, out_stats, bias]
    ts = [gb.tensor_like(a) for a in arrays]
    dbias_gpu = torch.full((1, hq, s, s), float("nan"), device=DEV, dtype=torch.half)
    dbias = gb.tensor_like(dbias_gpu)  # cudnn-frontend's form: it becomes the output
    dq, dk, dv = gb.sdpa_backward(*ts[:6], attn_scale=0.125, bias=ts[6], dBias=dbias)
    got = _run(gb, handle, dict(zip(ts, arrays)), [dq.set_output(True), dk.set_output(True),
                                                   dv.set_output(True), dbias])
    want = ref.attention_backward(_np(q), _np(k), _np(v), _np(do), 0.125,
                                  ref.visible(B, s, s), bias=_np(bias))
    for name, a, b in zip(("dQ", "dK", "dV", "dBias"), got, want):
        _close(a, b, atol=5e-2, what=name)


def test_sdpa_dropout_given_mask_forward(handle):
    s = 128
    g, (q, k, v), inputs, (tq, tk, tv) = _attention_graph(torch.half, 2, 2, s, s)
    mask = (torch.rand(B, 2, s, s, device=DEV) < 0.8).half()
    tm = g.tensor_like(mask)
    inputs[tm] = mask
    o, _ = g.sdpa(tq, tk, tv, attn_scale=0.11, use_causal_mask=True, is_inference=True,
                  dropout=(tm, 1 / 0.8))
    (out,) = _run(g, handle, inputs, [o.set_output(True)])
    want = ref.attention(_np(q), _np(k), _np(v), 0.11, ref.visible(B, s, s, right=0),
                         drop=_np(mask) / 0.8)[0]
    _close(out, want, what="O")


def test_sdpa_dropout_drawn_keeps_the_stats(handle):
    s = 128
    g, (q, k, v), inputs, (tq, tk, tv) = _attention_graph(torch.bfloat16, 2, 2, s, s)
    seed = torch.full((1, 1, 1, 1), 0x5EED, dtype=torch.int64, device=DEV)
    offset = torch.full((1, 1, 1, 1), 42, dtype=torch.int64, device=DEV)
    ts, to = g.tensor_like(seed), g.tensor_like(offset)
    inputs.update({ts: seed, to: offset})
    o, stats = g.sdpa(tq, tk, tv, attn_scale=0.11, generate_stats=True, use_causal_mask=True,
                      dropout=(0.2, ts, to))
    out_o, out_stats = _run(g, handle, inputs, [o.set_output(True), stats.set_output(True)])
    want_stats = ref.attention(_np(q), _np(k), _np(v), 0.11, ref.visible(B, s, s, right=0))[1]
    _close(out_stats, want_stats, what="stats")
    assert torch.isfinite(out_o.float()).all()


# ---------------------------------------------------------------------------
# batch norm
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.half, torch.bfloat16, torch.float32])
def test_batchnorm_training_running_stats_in_place(handle, dtype):
    n, c, h, w = 8, 64, 16, 16
    x = torch.randn(n, c, h, w, device=DEV, dtype=dtype).to(memory_format=torch.channels_last)
    scale = torch.randn(1, c, 1, 1, device=DEV)
    bias = torch.randn(1, c, 1, 1, device=DEV)
    running_mean = torch.randn(1, c, 1, 1, device=DEV)
    running_var = torch.rand(1, c, 1, 1, device=DEV) + 0.5
    rm0, rv0 = _np(running_mean), _np(running_var)
    eps_cpu = torch.full((1, 1, 1, 1), 1e-3)
    mom_cpu = torch.full((1, 1, 1, 1), 0.1)
    g = cudnnfe.pygraph(io_data_type=dtype, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, handle=handle)
    tx, ts, tb, tm, tv = (g.tensor_like(a) for a in (x, scale, bias, running_mean,
                                                      running_var))
    eps, mom = g.tensor_like(eps_cpu), g.tensor_like(mom_cpu)  # cudnn-frontend's form
    y, mean, inv, nm, nv = g.batchnorm(name="BN", input=tx, scale=ts, bias=tb,
                                       in_running_mean=tm, in_running_var=tv, epsilon=eps,
                                       momentum=mom)
    y.set_output(True)
    for t in (mean, inv, nm, nv):
        t.set_output(True).set_data_type(data_type.FLOAT)
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    out_y, out_mean, out_inv = _nan_like(y), _nan_like(mean), _nan_like(inv)
    ws = torch.empty(g.get_workspace_size(), device=DEV, dtype=torch.uint8)
    g.execute({tx: x, ts: scale, tb: bias, tm: running_mean, tv: running_var, eps: eps_cpu,
               mom: mom_cpu, y: out_y, mean: out_mean, inv: out_inv, nm: running_mean,
               nv: running_var}, ws, handle=handle)
    torch.cuda.synchronize()
    want = ref.batchnorm(_np(x), _np(scale), _np(bias), 1e-3, (rm0, rv0), 0.1)
    _close(out_y, want[0], what="y")
    for name, got, expected in zip(("mean", "inv_variance", "running_mean", "running_var"),
                                   (out_mean, out_inv, running_mean, running_var), want[1:]):
        _close(got, expected, atol=1e-3, rtol=1e-3, what=name)


def test_batchnorm_backward(handle):
    n, c, h, w = 8, 32, 8, 8
    x = torch.randn(n, c, h, w, device=DEV, dtype=torch.half).to(
        memory_format=torch.channels_last)
    dy = torch.randn_like(x)
    scale = torch.randn(1, c, 1, 1, device=DEV)
    _, mean, inv, _, _ = ref.batchnorm(_np(x), _np(scale), 0, 1e-5)
    mean_t = torch.tensor(mean, dtype=torch.float32, device=DEV)
    inv_t = torch.tensor(inv, dtype=torch.float32, device=DEV)
    g = cudnnfe.pygraph(io_data_type=data_type.HALF, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT)
    tdy, tx, ts, tm, ti = (g.tensor_like(a) for a in (dy, x, scale, mean_t, inv_t))
    dx, dscale, dbias = g.batchnorm_backward(grad=tdy, input=tx, scale=ts, mean=tm,
                                             inv_variance=ti)
    dx.set_output(True)
    dscale.set_output(True).set_data_type(data_type.FLOAT)
    dbias.set_output(True).set_data_type(data_type.FLOAT)
    got = _run(g, handle, {tdy: dy, tx: x, ts: scale, tm: mean_t, ti: inv_t},
               [dx, dscale, dbias])
    want = ref.norm_backward(_np(dy), _np(x), _np(scale), mean, inv, (0, 2, 3), (0, 2, 3))
    _close(got[0], want[0], what="dx")
    _close(got[1], want[1], atol=0.5, rtol=2e-2, what="dscale")  # sums of 2048 fp16 terms
    _close(got[2], want[2], atol=0.5, rtol=2e-2, what="dbias")


# ---------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    dict(mode="MAXPOOL", window=[3, 3], stride=[2, 2], pad=[1, 1], index=True),
    dict(mode="MAXPOOL", window=[2, 3], stride=[4, 5], pad=[1, 1]),
    dict(mode="AVGPOOL_INCLUDE_PADDING", window=[3, 3], stride=[2, 2], pad=[1, 1]),
    dict(mode="AVGPOOL_EXCLUDE_PADDING", window=[3, 3], stride=[2, 2], pad=[1, 1]),
], ids=["max-index", "max-strided", "avg-include", "avg-exclude"])
def test_pooling_nhwc_half(handle, case):
    x = torch.randn(4, 16, 17, 19, device=DEV, dtype=torch.half).to(
        memory_format=torch.channels_last)
    g = cudnnfe.pygraph(io_data_type=data_type.HALF, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT)
    t = g.tensor_like(x)
    y, index = g.resample(t, resampling_mode=case["mode"], window=case["window"],
                          stride=case["stride"], padding=case["pad"],
                          generate_index=case.get("index", False), name="pool")
    outputs = [y.set_output(True)] + ([index.set_output(True)] if index is not None else [])
    outs = _run(g, handle, {t: x}, outputs)
    want_y, want_index = ref.pool(_np(x), case["mode"], case["window"], case["stride"],
                                  case["pad"], case["pad"])
    _close(outs[0], want_y, atol=1e-3, rtol=1e-3, what="y")
    if case.get("index"):
        assert outs[1].dtype == torch.int8
        np.testing.assert_array_equal(outs[1].cpu().numpy(), want_index)


def test_pooling_matches_torch(handle):
    # Channels-last: cuDNN 9.19's pooling engines refuse NCHW FLOAT on an H200
    # (engine 3 wants N, spatial, C packed; engine 1 an NCHW output).
    x = torch.randn(2, 8, 32, 32, device=DEV, dtype=torch.float32).to(
        memory_format=torch.channels_last)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    t = g.tensor_like(x)
    y, _ = g.resample(t, "MAXPOOL", window=[2, 2], stride=[2, 2])
    (out,) = _run(g, handle, {t: x}, [y.set_output(True)])
    torch.testing.assert_close(out, torch.nn.functional.max_pool2d(x, 2), atol=0, rtol=0)


# ---------------------------------------------------------------------------
# layout ops: views of graph inputs
# ---------------------------------------------------------------------------

def test_slice_and_transpose_feed_a_matmul(handle):
    a = torch.randn(16, 32, 128, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(16, 64, 128, device=DEV, dtype=torch.bfloat16)
    g = cudnnfe.pygraph(io_data_type=data_type.BFLOAT16, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT)
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    a_s = g.slice(ta, [slice(8, None), slice(16, None)])
    b_t = g.transpose(g.slice(tb, [slice(8, None)]), [0, 2, 1])
    c = g.matmul(a_s, b_t).set_output(True)
    assert c.get_dim() == [8, 16, 64]
    (out,) = _run(g, handle, {ta: a, tb: b}, [c])
    want = a[8:, 16:].float() @ b[8:].float().transpose(1, 2)
    torch.testing.assert_close(out.float(), want, atol=0.25, rtol=2e-2)

