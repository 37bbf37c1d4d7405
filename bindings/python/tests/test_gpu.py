"""The ops and options of the C ABI on the GPU, checked against PyTorch.

Skipped, with the reason shown, when torch is not installed or sees no CUDA
device. On a machine with a GPU these tests run and must pass: a cudnnfe that
cannot load cuDNN there fails them rather than skipping.
"""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="GPU tests need torch, which is not installed")
if not torch.cuda.is_available():
    pytest.skip("GPU tests need a CUDA device; torch sees none", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import cudnnfe  # noqa: E402
from cudnnfe import data_type  # noqa: E402

DEV = torch.device("cuda")
GPU = cudnnfe.target.GPU


@pytest.fixture(scope="module")
def handle():
    h = cudnnfe.create_handle()
    yield h
    cudnnfe.destroy_handle(h)


def _workspace(g):
    return torch.empty(g.get_workspace_size(), device=DEV, dtype=torch.uint8)


def _out(t):
    from cudnnfe import _arrays

    return torch.empty_strided(t.get_dim(), t.get_stride(),
                               dtype=_arrays.torch_dtype(t.get_data_type()), device=DEV)


def _run(g, handle, inputs, outputs, **build_kw):
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK], **build_kw)
    assert g.get_target() == GPU
    outs = [_out(t) for t in outputs]
    pack = dict(inputs)
    pack.update(zip(outputs, outs))
    g.execute(pack, _workspace(g), handle=handle)
    torch.cuda.synchronize()
    return outs


def test_backend_is_loaded():
    assert cudnnfe.backend_version() >= 90000
    assert cudnnfe.device_count() >= 1


def test_matmul_bias_relu_half(handle):
    a = torch.randn(4, 64, 32, device=DEV, dtype=torch.half)
    b = torch.randn(4, 32, 48, device=DEV, dtype=torch.half)
    d = torch.randn(1, 64, 48, device=DEV, dtype=torch.half)
    g = cudnnfe.pygraph(io_data_type=data_type.HALF, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT, handle=handle)
    ta, tb, td = g.tensor_like(a), g.tensor_like(b), g.tensor_like(d)
    y = g.relu(g.bias(input=g.matmul(A=ta, B=tb), bias=td)).set_output(True)
    (out,) = _run(g, handle, {ta: a, tb: b, td: d}, [y])
    ref = torch.relu(a.float() @ b.float() + d.float())
    torch.testing.assert_close(out.float(), ref, atol=5e-2, rtol=1e-2)
    assert g.get_plan_name()


@pytest.mark.parametrize("stride", [1, 2])
def test_conv_fprop_dgrad_wgrad_channels_last(handle, stride):
    x = torch.randn(4, 16, 14, 14, device=DEV, dtype=torch.half).to(
        memory_format=torch.channels_last)
    w = torch.randn(32, 16, 3, 3, device=DEV, dtype=torch.half).to(
        memory_format=torch.channels_last)
    ref_y = F.conv2d(x.float(), w.float(), padding=1, stride=stride)
    dy = torch.randn_like(ref_y).half().to(memory_format=torch.channels_last)

    g = cudnnfe.pygraph(io_data_type=data_type.HALF, compute_data_type=data_type.FLOAT)
    tx, tw = g.tensor_like(x), g.tensor_like(w)
    y = g.conv_fprop(image=tx, weight=tw, padding=[1, 1], stride=[stride, stride],
                     dilation=[1, 1]).set_output(True)
    (out,) = _run(g, handle, {tx: x, tw: w}, [y])
    torch.testing.assert_close(out.float(), ref_y, atol=5e-2, rtol=1e-2)

    g2 = cudnnfe.pygraph(io_data_type=data_type.HALF, compute_data_type=data_type.FLOAT)
    tw2, tdy = g2.tensor_like(w), g2.tensor_like(dy)
    dx = g2.conv_dgrad(weight=tw2, loss=tdy, padding=[1, 1], stride=[stride, stride])
    dx.set_dim(list(x.shape)).set_stride(list(x.stride())).set_output(True)
    (out_dx,) = _run(g2, handle, {tw2: w, tdy: dy}, [dx])
    ref_dx = torch.nn.grad.conv2d_input(x.shape, w.float(), dy.float(), padding=1,
                                        stride=stride)
    torch.testing.assert_close(out_dx.float(), ref_dx, atol=1e-1, rtol=2e-2)

    g3 = cudnnfe.pygraph(io_data_type=data_type.HALF, compute_data_type=data_type.FLOAT)
    tx3, tdy3 = g3.tensor_like(x), g3.tensor_like(dy)
    dw = g3.conv_wgrad(image=tx3, loss=tdy3, padding=[1, 1], stride=[stride, stride])
    dw.set_dim(list(w.shape)).set_stride(list(w.stride())).set_output(True)
    dw.set_data_type(data_type.FLOAT)
    (out_dw,) = _run(g3, handle, {tx3: x, tdy3: dy}, [dw])
    ref_dw = torch.nn.grad.conv2d_weight(x.float(), w.shape, dy.float(), padding=1,
                                         stride=stride)
    torch.testing.assert_close(out_dw, ref_dw, atol=5e-1, rtol=2e-2)


@pytest.mark.parametrize("method,fn", [
    ("relu", torch.relu), ("gelu", F.gelu), ("silu", F.silu), ("sigmoid", torch.sigmoid),
    ("tanh", torch.tanh), ("exp", torch.exp), ("abs", torch.abs), ("neg", torch.neg),
])
def test_unary_pointwise(handle, method, fn):
    x = torch.randn(8, 32, 64, device=DEV, dtype=torch.float32)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    t = g.tensor_like(x)
    y = getattr(g, method)(t).set_output(True)
    (out,) = _run(g, handle, {t: x}, [y])
    torch.testing.assert_close(out, fn(x), atol=1e-4, rtol=1e-4)


def test_binary_pointwise_and_compare(handle):
    a = torch.randn(4, 16, 32, device=DEV)
    b = torch.randn(4, 16, 1, device=DEV)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    s = g.mul(g.add(ta, tb), tb).set_output(True)
    m = g.max(ta, tb).set_output(True)
    c = g.cmp_gt(input=ta, comparison=tb).set_output(True).set_data_type(data_type.FLOAT)
    k = g.scale(ta, 0.5).set_output(True)  # a Python number: a pass-by-value scalar
    out_s, out_m, out_c, out_k = _run(g, handle, {ta: a, tb: b}, [s, m, c, k])
    torch.testing.assert_close(out_s, (a + b) * b, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out_m, torch.maximum(a, b))
    torch.testing.assert_close(out_c, (a > b).float())
    torch.testing.assert_close(out_k, a * 0.5)


@pytest.mark.parametrize("shape_b", [(1, 16, 32), (4, 1, 32), (1, 16, 1), (1, 1, 32)])
def test_pointwise_broadcast(handle, shape_b):
    a = torch.randn(4, 16, 32, device=DEV)
    b = torch.randn(*shape_b, device=DEV)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    y = g.add(a=ta, b=tb).set_output(True)
    if sum(1 for n in shape_b if n == 1) >= 2:
        # cuDNN computed wrong values for this standalone row-major pattern;
        # the library refuses it rather than return them.
        with pytest.raises(cudnnfe.GraphNotSupportedError, match="computes this pattern wrongly"):
            _run(g, handle, {ta: a, tb: b}, [y])
        return
    (out,) = _run(g, handle, {ta: a, tb: b}, [y])
    torch.testing.assert_close(out, a + b)


def test_boolean_graph_outputs_are_refused_on_the_gpu(handle):
    a = torch.randn(4, 8, device=DEV)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    ta = g.tensor_like(a)
    g.cmp_gt(input=ta, comparison=0.0, name="positive").set_output(True)  # BOOLEAN output
    with pytest.raises(cudnnfe.GraphNotSupportedError, match="BOOLEAN"):
        g.build()


def test_bit_packed_boolean_output_and_input_match_the_cpu_reference(handle):
    """data_type.BOOLEAN set on a graph output or input is cuDNN's bit-packed layout (C
    BOOLEAN_PACKED), as in cudnn-frontend's samples 26 and 30; the GPU's bits must be the
    CPU reference's."""
    x = torch.randn(8, 64, device=DEV)
    dy = torch.randn(8, 64, device=DEV)

    def mask_graph(target):
        g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                            target=target)
        tx = g.tensor_like(x)
        m = g.cmp_gt(input=tx, comparison=0.0, name="positive")
        m.set_output(True).set_data_type(data_type.BOOLEAN)
        g.build()
        return g, tx, m

    g, tx, m = mask_graph(cudnnfe.target.GPU)
    bits = torch.zeros(8, 8, dtype=torch.uint8, device=DEV)  # 512 bits
    g.execute({tx: x, m: bits}, torch.empty(max(g.get_workspace_size(), 1), device=DEV,
                                              dtype=torch.uint8), handle=handle)
    torch.cuda.synchronize()
    c, cx, cm = mask_graph(cudnnfe.target.CPU_REFERENCE)
    want = np.zeros(64, np.uint8)
    c.execute({cx: x.cpu().numpy(), cm: want})
    np.testing.assert_array_equal(bits.cpu().numpy().reshape(-1), want)

    b = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    tdy = b.tensor_like(dy)
    tbits = b.tensor(dim=[8, 64], data_type=data_type.BOOLEAN, name="bits")
    out = b.mul(tdy, tbits, name="drelu").set_output(True)
    b.build()
    got = torch.full((8, 64), float("nan"), device=DEV)
    b.execute({tdy: dy, tbits: bits, out: got},
              torch.empty(max(b.get_workspace_size(), 1), device=DEV, dtype=torch.uint8),
              handle=handle)
    torch.cuda.synchronize()
    torch.testing.assert_close(got, torch.where(x > 0, dy, torch.zeros_like(dy)))


def test_layernorm_epsilon_tensor_read_at_execute_matches_the_cpu_reference(handle):
    """cudnn-frontend's test_layernorm form: epsilon is a pass-by-value tensor whose value
    arrives with execute (epsilon_tensor); two values, each against the CPU reference."""
    x = torch.randn(16, 64, device=DEV)
    scale = torch.randn(1, 64, device=DEV)
    bias = torch.randn(1, 64, device=DEV)

    def build(target):
        g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT,
                            target=target)
        tx, ts, tb = g.tensor_like(x), g.tensor_like(scale), g.tensor_like(bias)
        eps = g.tensor(dim=[1, 1], data_type=data_type.FLOAT, is_pass_by_value=True,
                       name="epsilon")
        y, _, _ = g.layernorm(tx, ts, tb, epsilon=eps, norm_forward_phase="inference")
        y.set_output(True)
        g.build()
        return g, (tx, ts, tb, eps, y)

    g, (tx, ts, tb, eps, y) = build(cudnnfe.target.GPU)
    c, (cx, cs, cb, ceps, cy) = build(cudnnfe.target.CPU_REFERENCE)
    ws = torch.empty(max(g.get_workspace_size(), 1), device=DEV, dtype=torch.uint8)
    for value in (1e-5, 4.0):
        host = torch.full((1, 1), value, dtype=torch.float32)
        out = torch.full_like(x, float("nan"))
        g.execute({tx: x, ts: scale, tb: bias, eps: host, y: out}, ws, handle=handle)
        torch.cuda.synchronize()
        want = np.empty((16, 64), np.float32)
        c.execute({cx: x.cpu().numpy(), cs: scale.cpu().numpy(), cb: bias.cpu().numpy(),
                   ceps: host.numpy(), cy: want})
        np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-3, atol=1e-3)


def test_reduction_over_channels_nhwc(handle):
    # cuDNN 9's reduction engines take NHWC tensors reduced over C.
    x = torch.randn(8, 64, 16, 16, device=DEV).to(memory_format=torch.channels_last)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    t = g.tensor_like(x)
    s = g.reduction(input=t, mode=cudnnfe.reduction_mode.ADD, axes=[1]).set_output(True)
    (out_s,) = _run(g, handle, {t: x}, [s])
    torch.testing.assert_close(out_s, x.sum(dim=1, keepdim=True), atol=1e-3, rtol=1e-4)
    g2 = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    t2 = g2.tensor_like(x)
    m = g2.reduction(input=t2, mode="MAX", axes=[1]).set_output(True)
    (out_m,) = _run(g2, handle, {t2: x}, [m])
    torch.testing.assert_close(out_m, x.amax(dim=1, keepdim=True))


def test_unsupported_graph_names_the_reason(handle):
    x = torch.randn(8, 64, 128, device=DEV)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    t = g.tensor_like(x)
    g.reduction(input=t, mode="ADD", axes=[2], name="rowsum").set_output(True)
    with pytest.raises(cudnnfe.GraphNotSupportedError) as info:
        g.build()
    msg = info.value.message
    assert "rowsum" in msg and "cuDNN" in msg and "sm_" in msg
    assert not isinstance(info.value, (ValueError, RuntimeError))


def _sdpa_ref(q, k, v, scale, causal=False, bottom_right=False, bias=None):
    rep = q.shape[1] // k.shape[1]
    k = k.float().repeat_interleave(rep, dim=1)
    v = v.float().repeat_interleave(rep, dim=1)
    s = q.float() @ k.transpose(-1, -2) * scale
    if bias is not None:
        s = s + bias.float()
    sq, skv = s.shape[-2:]
    i = torch.arange(sq, device=DEV)[:, None]
    j = torch.arange(skv, device=DEV)[None, :]
    if causal:
        s = s.masked_fill(j > i, float("-inf"))
    if bottom_right:
        s = s.masked_fill(j > i + skv - sq, float("-inf"))
    lse = torch.logsumexp(s, dim=-1, keepdim=True)
    return torch.softmax(s, dim=-1) @ v, lse


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.half])
@pytest.mark.parametrize("case", [
    dict(hq=8, hkv=8, sq=256, skv=256, causal=True),
    dict(hq=8, hkv=2, sq=128, skv=256, bottom_right=True),
    dict(hq=4, hkv=4, sq=128, skv=128, bias=True),
    dict(hq=4, hkv=1, sq=64, skv=192, bshd=True),
], ids=["causal", "gqa-bottom-right", "bias", "mqa-bshd"])
def test_sdpa(handle, dtype, case):
    b, d = 2, 64
    hq, hkv, sq, skv = case["hq"], case["hkv"], case["sq"], case["skv"]

    def make(h, s):
        if case.get("bshd"):
            return torch.randn(b, s, h, d, device=DEV, dtype=dtype).transpose(1, 2)
        return torch.randn(b, h, s, d, device=DEV, dtype=dtype)

    q, k, v = make(hq, sq), make(hkv, skv), make(hkv, skv)
    bias = torch.randn(1, hq, sq, skv, device=DEV, dtype=dtype) if case.get("bias") else None
    scale = 1.0 / math.sqrt(d)
    io = data_type.BFLOAT16 if dtype == torch.bfloat16 else data_type.HALF
    g = cudnnfe.pygraph(io_data_type=io, intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT)
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    tb = g.tensor_like(bias) if bias is not None else None
    o, stats = g.sdpa(q=tq, k=tk, v=tv, attn_scale=scale, generate_stats=True,
                      use_causal_mask=case.get("causal", False),
                      use_causal_mask_bottom_right=case.get("bottom_right", False),
                      attn_bias=tb, name="attn")
    o.set_output(True)
    stats.set_output(True)
    inputs = {tq: q, tk: k, tv: v}
    if bias is not None:
        inputs[tb] = bias
    out_o, out_stats = _run(g, handle, inputs, [o, stats])
    ref_o, ref_lse = _sdpa_ref(q, k, v, scale, case.get("causal", False),
                               case.get("bottom_right", False), bias)
    torch.testing.assert_close(out_o.float(), ref_o, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(out_stats, ref_lse, atol=2e-2, rtol=2e-2)


def test_high_level_graph_allocates_torch_outputs(handle):
    q = torch.randn(1, 4, 128, 64, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(1, 4, 128, 64, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(1, 4, 128, 64, device=DEV, dtype=torch.bfloat16)
    with cudnnfe.Graph(io_data_type=data_type.BFLOAT16,
                       intermediate_data_type=data_type.FLOAT,
                       compute_data_type=data_type.FLOAT,
                       inputs=["attn::q", "attn::k", "attn::v"], outputs=["output"]) as g:
        out, _ = g.sdpa(q=q, k=k, v=v, attn_scale=0.125, use_causal_mask=True, name="attn")
        out.set_output(True).set_name("output")
    result = g(q, k, v, handle=handle)
    assert isinstance(result, torch.Tensor) and result.is_cuda and result.dtype == torch.bfloat16
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.125)
    torch.testing.assert_close(result, ref, atol=2e-2, rtol=2e-2)
    res = g({"attn::q": q, "attn::k": k, "attn::v": v}, handle=handle)
    # A dict call adds an allocated output under the name it had when its op was added
    # (cudnn-frontend's wrapper), not the one set_name gave it later.
    torch.testing.assert_close(res["attn::O"], ref, atol=2e-2, rtol=2e-2)


def test_dlpack_only_arrays_and_streams(handle):
    class OnlyDLPack:
        def __init__(self, t):
            self._t = t

        def __dlpack__(self, **kw):
            return self._t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._t.__dlpack_device__()

    x = torch.randn(16, 32, device=DEV)
    y_buf = torch.empty(16, 32, device=DEV)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    tx = g.tensor_like(OnlyDLPack(x))
    ty = g.exp(tx).set_output(True)
    g.build()
    assert g.get_target() == GPU
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        g.execute({tx: OnlyDLPack(x), ty: OnlyDLPack(y_buf)}, _workspace(g), handle=handle,
                  stream=stream)
    stream.synchronize()
    torch.testing.assert_close(y_buf, torch.exp(x))
    cupy = pytest.importorskip("cupy", reason="cupy not installed: __cuda_array_interface__ "
                               "path not run")
    cx = cupy.asarray(x)
    cy = cupy.empty((16, 32), dtype=cupy.float32)
    g.execute({tx: cx, ty: cy}, _workspace(g), handle=handle)
    torch.cuda.synchronize()
    torch.testing.assert_close(torch.as_tensor(cy, device=DEV), torch.exp(x))


def test_bound_fast_path_and_host_arrays_refused(handle):

    x = torch.randn(8, 8, device=DEV)
    out = torch.empty(8, 8, device=DEV)
    g = cudnnfe.pygraph(io_data_type=data_type.FLOAT, compute_data_type=data_type.FLOAT)
    tx = g.tensor_like(x)
    ty = g.sigmoid(tx).set_output(True)
    g.build()
    ws = _workspace(g)
    run = g.bind({tx: x, ty: out}, ws, handle=handle)
    for _ in range(10):
        run()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, torch.sigmoid(x))
    with pytest.raises(ValueError, match="host memory"):
        g.execute({tx: np.zeros((8, 8), np.float32), ty: out}, ws, handle=handle)
    with pytest.raises(ValueError, match="host memory"):
        g.execute({tx: x.cpu(), ty: out}, ws, handle=handle)
    with pytest.raises(ValueError, match="float16"):
        g.execute({tx: x.half(), ty: out}, ws, handle=handle)


def test_serialize_deserialize_execute_by_uid(handle):
    a = torch.randn(2, 32, 16, device=DEV, dtype=torch.half)
    b = torch.randn(2, 16, 8, device=DEV, dtype=torch.half)
    g = cudnnfe.pygraph(io_data_type=data_type.HALF, compute_data_type=data_type.FLOAT,
                        intermediate_data_type=data_type.FLOAT, handle=handle)
    ta, tb = g.tensor_like(a).set_uid(0), g.tensor_like(b).set_uid(1)
    c = g.matmul(A=ta, B=tb).set_output(True).set_uid(2)
    g.build([cudnnfe.heur_mode.A])
    g2 = cudnnfe.pygraph()
    g2.deserialize(g.serialize())
    assert g2.get_target() == GPU
    out = torch.empty(2, 32, 8, device=DEV, dtype=torch.half)
    g2.execute({0: a, 1: b, 2: out}, _workspace(g2), handle=handle)
    torch.cuda.synchronize()
    torch.testing.assert_close(out.float(), a.float() @ b.float(), atol=5e-2, rtol=1e-2)


@pytest.mark.parametrize("cuda_graph", [False, None, True])
def test_bound_matmul_plain_and_replayed_equal_execute(handle, cuda_graph):
    """pygraph.bind on the GPU: plain (False), the default (None: a CUDA graph, as the
    graph has no pass-by-value input) and a required CUDA graph (True) give what execute
    gives; the replay runs again after the inputs change in place."""
    a = torch.randn(2, 64, 32, device=DEV, dtype=torch.half)
    b = torch.randn(2, 32, 48, device=DEV, dtype=torch.half)
    g = cudnnfe.pygraph(io_data_type=data_type.HALF, compute_data_type=data_type.FLOAT)
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    tc = g.matmul(A=ta, B=tb).set_output(True)
    (want,) = _run(g, handle, {ta: a, tb: b}, [tc])
    c = torch.full_like(want, float("nan"))
    run = g.bind({ta: a, tb: b, tc: c}, _workspace(g), handle=handle, cuda_graph=cuda_graph)
    assert (run.cuda_graph != "off") is (cuda_graph is not False)
    run()
    torch.cuda.synchronize()
    torch.testing.assert_close(c, want, rtol=0, atol=0)
    a.mul_(2)
    run()
    torch.cuda.synchronize()
    torch.testing.assert_close(c, 2 * want, rtol=1e-2, atol=1e-2)
