"""Normalizations, softmax and attention backward on the CPU reference, against NumPy."""
import math

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type, norm_forward_phase
import numpy_ref as ref
from test_cpu_reference import close, graph, run


@pytest.mark.parametrize("shape", [(6, 16), (4, 8, 3, 1)])
@pytest.mark.parametrize("zero_centered", [False, True])
def test_layernorm_training_and_inference(shape, zero_centered, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    scale = rng.standard_normal((1,) + shape[1:]).astype(np.float32)
    bias = rng.standard_normal((1,) + shape[1:]).astype(np.float32)
    g = graph()
    tx, ts, tb = g.tensor_like(x), g.tensor_like(scale), g.tensor_like(bias)
    y, mean, inv = g.layernorm(input=tx, scale=ts, bias=tb, epsilon=1e-3,
                               zero_centered_gamma=zero_centered, name="ln")
    for t in (y, mean, inv):
        t.set_output(True)
    assert mean.get_dim() == [shape[0]] + [1] * (len(shape) - 1)
    out_y, out_m, out_i = run(g, {tx: x, ts: scale, tb: bias}, [y, mean, inv])
    ey, em, ei = ref.layernorm(x.astype(np.float64), scale.astype(np.float64),
                               bias.astype(np.float64), 1e-3, zero_centered)
    close(out_y, ey, rtol=1e-4, atol=1e-4)
    close(out_m, em, rtol=1e-4, atol=1e-5)
    close(out_i, ei, rtol=1e-4, atol=1e-5)

    g2 = graph()
    tx, ts, tb = g2.tensor_like(x), g2.tensor_like(scale), g2.tensor_like(bias)
    y2, m2, i2 = g2.layernorm(tx, ts, tb, epsilon=1e-3, zero_centered_gamma=zero_centered,
                              norm_forward_phase=norm_forward_phase.INFERENCE)
    assert m2 is None and i2 is None
    (out2,) = run(g2, {tx: x, ts: scale, tb: bias}, [y2.set_output(True)])
    close(out2, ey, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("with_bias", [False, True])
def test_rmsnorm(with_bias, rng):
    x = rng.standard_normal((5, 32)).astype(np.float32)
    scale = rng.standard_normal((1, 32)).astype(np.float32)
    bias = rng.standard_normal((1, 32)).astype(np.float32) if with_bias else None
    g = graph()
    tx, ts = g.tensor_like(x), g.tensor_like(scale)
    tb = g.tensor_like(bias) if with_bias else None
    y, inv = g.rmsnorm(input=tx, scale=ts, bias=tb, epsilon=1e-5)
    inputs = {tx: x, ts: scale}
    if with_bias:
        inputs[tb] = bias
    out_y, out_i = run(g, inputs, [y.set_output(True), inv.set_output(True)])
    ey, ei = ref.rmsnorm(x.astype(np.float64), scale.astype(np.float64),
                         None if bias is None else bias.astype(np.float64), 1e-5)
    close(out_y, ey, rtol=1e-4, atol=1e-4)
    close(out_i, ei, rtol=1e-4, atol=1e-5)


def test_rmsnorm_seed_style_call(rng):
    """The seeds' pre-norm pattern: rmsnorm(x, gamma, epsilon=...) then add (residual)."""
    x = rng.standard_normal((4, 16)).astype(np.float32)
    gamma = np.ones((1, 16), np.float32)
    with cudnnfe.Graph(io_data_type=data_type.FLOAT, intermediate_data_type=data_type.FLOAT,
                       compute_data_type=data_type.FLOAT) as g:
        x_norm, _ = g.rmsnorm(x, gamma, epsilon=1e-5, norm_forward_phase="inference")
        out = g.add(x, x_norm)
        out.set_output(True)
    result = g(x, gamma)
    ey, _ = ref.rmsnorm(x.astype(np.float64), 1.0, None, 1e-5)
    close(result, x + ey, rtol=1e-4, atol=1e-4)


def test_layernorm_and_rmsnorm_backward(rng):
    x = rng.standard_normal((6, 24)).astype(np.float32)
    dy = rng.standard_normal((6, 24)).astype(np.float32)
    scale = rng.standard_normal((1, 24)).astype(np.float32)
    xd, dyd, sd = (a.astype(np.float64) for a in (x, dy, scale))
    _, mean, inv = ref.layernorm(xd, sd, 0.0, 1e-5)
    _, inv_rms = ref.rmsnorm(xd, sd, None, 1e-5)
    mean32, inv32, rms32 = (a.astype(np.float32) for a in (mean, inv, inv_rms))

    g = graph()
    tdy, tx, ts = g.tensor_like(dy), g.tensor_like(x), g.tensor_like(scale)
    tm, ti = g.tensor_like(mean32), g.tensor_like(inv32)
    dx, dscale, dbias = g.layernorm_backward(grad=tdy, input=tx, scale=ts, mean=tm,
                                             inv_variance=ti)
    outs = run(g, {tdy: dy, tx: x, ts: scale, tm: mean32, ti: inv32},
               [dx.set_output(True), dscale.set_output(True), dbias.set_output(True)])
    for got, want in zip(outs, ref.layernorm_backward(dyd, xd, sd, mean32.astype(np.float64),
                                                      inv32.astype(np.float64))):
        close(got, want, rtol=1e-3, atol=1e-4)

    g2 = graph()
    tdy, tx, ts, tr = (g2.tensor_like(a) for a in (dy, x, scale, rms32))
    dx2, ds2, db2 = g2.rmsnorm_backward(grad=tdy, input=tx, scale=ts, inv_rms=tr,
                                        has_dbias=True)
    outs2 = run(g2, {tdy: dy, tx: x, ts: scale, tr: rms32},
                [dx2.set_output(True), ds2.set_output(True), db2.set_output(True)])
    for got, want in zip(outs2, ref.rmsnorm_backward(dyd, xd, sd, rms32.astype(np.float64))):
        close(got, want, rtol=1e-3, atol=1e-4)
    g3 = graph()
    tdy, tx, ts, tr = (g3.tensor_like(a) for a in (dy, x, scale, rms32))
    _, _, none = g3.rmsnorm_backward(tdy, tx, ts, tr)
    assert none is None


def test_softmax_with_stats(rng):
    x = rng.standard_normal((3, 4, 10)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    y, stats = g.softmax(input=t, generate_stats=True)
    assert stats.get_dim() == [3, 4, 1]
    out_y, out_s = run(g, {t: x}, [y.set_output(True), stats.set_output(True)])
    ey, es = ref.softmax(x.astype(np.float64))
    close(out_y, ey, rtol=1e-5, atol=1e-6)
    close(out_s, es, rtol=1e-5, atol=1e-5)
    g2 = graph()
    y2, none = g2.softmax(g2.tensor_like(x))
    assert none is None


@pytest.mark.parametrize("case", [
    dict(hq=2, hkv=2, sq=6, skv=6),
    dict(hq=4, hkv=2, sq=5, skv=8, causal=True),
    dict(hq=2, hkv=1, sq=4, skv=7, bottom_right=True),
], ids=["mha", "gqa-causal", "mqa-bottom-right"])
def test_sdpa_forward_then_backward(case, rng):
    b, d = 2, 8
    hq, hkv, sq, skv = case["hq"], case["hkv"], case["sq"], case["skv"]
    q = rng.standard_normal((b, hq, sq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, skv, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, skv, d)).astype(np.float32)
    do = rng.standard_normal((b, hq, sq, d)).astype(np.float32)
    scale = 1 / math.sqrt(d)
    masks = dict(use_causal_mask=case.get("causal", False),
                 use_causal_mask_bottom_right=case.get("bottom_right", False))
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    o, stats = g.sdpa(q=tq, k=tk, v=tv, attn_scale=scale, generate_stats=True, **masks)
    out_o, out_stats = run(g, {tq: q, tk: k, tv: v}, [o.set_output(True),
                                                     stats.set_output(True)])

    gb = graph()
    tq, tk, tv, to, tdo, ts = (gb.tensor_like(a) for a in (q, k, v, out_o, do, out_stats))
    dq, dk, dv = gb.sdpa_backward(q=tq, k=tk, v=tv, o=to, dO=tdo, stats=ts, attn_scale=scale,
                                  name="bwd", **masks)
    assert dq.get_name().startswith("bwd::") and dk.get_dim() == list(k.shape)
    outs = run(gb, {tq: q, tk: k, tv: v, to: out_o, tdo: do, ts: out_stats},
               [dq.set_output(True), dk.set_output(True), dv.set_output(True)])
    expected = ref.sdpa_backward(q, k, v, do, scale, case.get("causal", False),
                                 case.get("bottom_right", False))
    for got, want in zip(outs, expected):
        close(got, want, rtol=1e-3, atol=1e-4)


def test_transformer_op_arguments():
    g = graph()
    x = g.tensor(dim=[4, 8])
    s = g.tensor(dim=[1, 8])
    with pytest.raises(TypeError, match="epsilon"):
        g.layernorm(x, s, s, epsilon="small")
    with pytest.raises(ValueError, match="norm_forward_phase"):
        g.rmsnorm(x, s, norm_forward_phase="testing")
    with pytest.raises(cudnnfe.InvalidGraphError, match="ln"):
        g.layernorm(x, g.tensor(dim=[1, 7]), s, name="ln")
    q = g.tensor(dim=[1, 2, 4, 8])
    with pytest.raises(cudnnfe.InvalidGraphError, match="dropout_seed and dropout_offset"):
        g.sdpa_backward(q, q, q, q, q, g.tensor(dim=[1, 2, 4, 1]), dropout=0.2)
    with pytest.raises(TypeError, match="score_mod_bprop must be a callable"):
        g.sdpa_backward(q, q, q, q, q, g.tensor(dim=[1, 2, 4, 1]), score_mod_bprop=1.0)
    with pytest.raises(TypeError, match="unexpected"):
        g.sdpa_backward(x, x, x, x, x, x, atn_scale=1.0)
