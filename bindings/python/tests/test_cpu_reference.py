"""The whole API executed on the CPU reference with NumPy, checked against NumPy."""
import math
import threading

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type, pointwise_mode, reduction_mode
import numpy_ref as ref

CPU = cudnnfe.target.CPU_REFERENCE
F32 = dict(io_data_type=data_type.FLOAT, intermediate_data_type=data_type.FLOAT,
           compute_data_type=data_type.FLOAT)


def graph(**kw):
    for k, v in F32.items():
        kw.setdefault(k, v)
    kw.setdefault("target", CPU)
    return cudnnfe.pygraph(**kw)


def alloc(t):
    """A NumPy array laid out as tensor t says (dims, strides, dtype)."""
    dims, strides = t.get_dim(), t.get_stride()
    dt = cudnnfe._arrays.numpy_dtype(t.get_data_type())
    span = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    buf = np.full(span, 0, dtype=dt)
    return np.lib.stride_tricks.as_strided(buf, dims, [s * dt.itemsize for s in strides])


def run(g, inputs, outputs, **build_kw):
    """Build g for the CPU, bind inputs (tensor -> array), return the outputs' arrays."""
    if not g.is_built():
        g.build(**build_kw)
    assert g.get_target() == CPU
    assert g.get_workspace_size() == 0
    outs = [alloc(t) for t in outputs]
    pack = dict(inputs)
    pack.update(zip(outputs, outs))
    g.execute(pack, None)
    return outs


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), expected, rtol=rtol,
                               atol=atol)


# --------------------------------------------------------------------------
# pointwise
# --------------------------------------------------------------------------

def _operands(mode, rng, shape):
    name = mode
    if name in ("SQRT", "LOG", "RSQRT"):
        return [rng.uniform(0.1, 3, shape)]
    if name == "POW":
        return [rng.uniform(0.1, 2, shape), rng.uniform(-2, 2, shape)]
    if name in ("DIV", "MOD"):
        return [rng.uniform(-3, 3, shape), rng.choice([-1.5, -0.7, 0.6, 2.0], shape)]
    if name == "RECIPROCAL":
        return [rng.choice([-2.0, -0.5, 0.25, 4.0], shape)]
    if name.startswith("CMP") or name.startswith("LOGICAL") or name == "BINARY_SELECT":
        return [rng.integers(-1, 2, shape).astype(np.float64) for _ in range(3)]
    return [rng.uniform(-2, 2, shape) for _ in range(3)]


@pytest.mark.parametrize("mode", sorted(ref.POINTWISE))
def test_every_pointwise_mode(mode, rng):
    arity, fn = ref.POINTWISE[mode]
    shape = (2, 3, 4)
    values = [v.astype(np.float32) for v in _operands(mode, rng, shape)[:arity]]
    if arity >= 2:  # the second operand broadcasts along dims 0 and 2
        values[1] = np.ascontiguousarray(values[1][:1, :, :1])
    g = graph()
    ts = [g.tensor_like(v, name=f"in{i}") for i, v in enumerate(values)]
    y = g.pointwise(pointwise_mode[mode], *ts).set_output(True)
    (out,) = run(g, dict(zip(ts, values)), [y])
    expected = fn(*[v.astype(np.float64) for v in values])
    expected = np.broadcast_to(expected, shape)
    if out.dtype == np.bool_:
        np.testing.assert_array_equal(out, expected)
    else:
        close(out, expected, rtol=2e-5, atol=2e-6)


def test_gen_index():
    g = graph()
    x = g.tensor(dim=[2, 3, 4], name="x")
    idx = g.gen_index(input=x, axis=1).set_output(True)
    (out,) = run(g, {x: np.zeros((2, 3, 4), np.float32)}, [idx])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3)[None, :, None], (2, 3, 4)))


SHORTHANDS = [
    ("add", ("a", "b"), "ADD"), ("sub", ("a", "b"), "SUB"), ("mul", ("a", "b"), "MUL"),
    ("div", ("a", "b"), "DIV"), ("add_square", ("a", "b"), "ADD_SQUARE"),
    ("max", ("a", "b"), "MAX"), ("min", ("a", "b"), "MIN"), ("mod", ("a", "b"), "MOD"),
    ("pow", ("a", "b"), "POW"), ("atan2", ("a", "b"), "ATAN2"),
    ("bias", ("input", "bias"), "ADD"), ("scale", ("input", "scale"), "MUL"),
    ("cmp_eq", ("input", "comparison"), "CMP_EQ"), ("cmp_neq", ("input", "comparison"), "CMP_NEQ"),
    ("cmp_gt", ("input", "comparison"), "CMP_GT"), ("cmp_ge", ("input", "comparison"), "CMP_GE"),
    ("cmp_lt", ("input", "comparison"), "CMP_LT"), ("cmp_le", ("input", "comparison"), "CMP_LE"),
    ("logical_and", ("a", "b"), "LOGICAL_AND"), ("logical_or", ("a", "b"), "LOGICAL_OR"),
    ("logical_not", ("input",), "LOGICAL_NOT"),
    ("binary_select", ("input0", "input1", "mask"), "BINARY_SELECT"),
    ("neg", ("input",), "NEG"), ("abs", ("input",), "ABS"), ("ceil", ("input",), "CEIL"),
    ("floor", ("input",), "FLOOR"), ("reciprocal", ("input",), "RECIPROCAL"),
    ("sqrt", ("input",), "SQRT"), ("rsqrt", ("input",), "RSQRT"), ("exp", ("input",), "EXP"),
    ("log", ("input",), "LOG"), ("sin", ("input",), "SIN"), ("cos", ("input",), "COS"),
    ("tan", ("input",), "TAN"), ("erf", ("input",), "ERF"), ("identity", ("input",), "IDENTITY"),
    ("relu", ("input",), "RELU_FWD"), ("tanh", ("input",), "TANH_FWD"),
    ("sigmoid", ("input",), "SIGMOID_FWD"), ("elu", ("input",), "ELU_FWD"),
    ("gelu", ("input",), "GELU_FWD"), ("gelu_approx_tanh", ("input",), "GELU_APPROX_TANH_FWD"),
    ("softplus", ("input",), "SOFTPLUS_FWD"), ("swish", ("input",), "SWISH_FWD"),
    ("silu", ("input",), "SWISH_FWD"),
    ("relu_backward", ("loss", "input"), "RELU_BWD"),
    ("tanh_backward", ("loss", "input"), "TANH_BWD"),
    ("sigmoid_backward", ("loss", "input"), "SIGMOID_BWD"),
    ("elu_backward", ("loss", "input"), "ELU_BWD"),
    ("gelu_backward", ("loss", "input"), "GELU_BWD"),
    ("gelu_approx_tanh_backward", ("loss", "input"), "GELU_APPROX_TANH_BWD"),
    ("softplus_backward", ("loss", "input"), "SOFTPLUS_BWD"),
    ("swish_backward", ("loss", "input"), "SWISH_BWD"),
]


def test_every_mode_has_a_shorthand():
    covered = {mode for _, _, mode in SHORTHANDS} | {"GEN_INDEX"}
    assert covered == {m.name for m in pointwise_mode}


@pytest.mark.parametrize("method,keywords,mode", SHORTHANDS, ids=[s[0] for s in SHORTHANDS])
def test_pointwise_shorthands(method, keywords, mode, rng):
    values = [v.astype(np.float32) for v in _operands(mode, rng, (3, 5))[:len(keywords)]]
    g = graph()
    ts = [g.tensor_like(v) for v in values]
    y = getattr(g, method)(**dict(zip(keywords, ts)), name="op").set_output(True)
    assert y.get_name() == "op::OUT_0"
    (out,) = run(g, dict(zip(ts, values)), [y])
    expected = ref.POINTWISE[mode][1](*[v.astype(np.float64) for v in values])
    close(out, expected, rtol=2e-5, atol=2e-6)


def test_activation_parameters(rng):
    x = rng.uniform(-3, 3, (4, 6)).astype(np.float32)
    dy = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    g = graph()
    tx, tdy = g.tensor_like(x), g.tensor_like(dy)
    outs = [
        g.relu(tx, negative_slope=0.1),
        g.relu(tx, lower_clip=-1.0, upper_clip=1.5),
        g.elu(tx, alpha=0.5),
        g.softplus(tx, beta=2.0),
        g.swish(tx, beta=1.5),
        g.relu_backward(tdy, tx, negative_slope=0.1),
        g.pointwise(pointwise_mode.RELU_FWD, tx, relu_lower_clip_slope=0.2),
    ]
    for o in outs:
        o.set_output(True)
    res = run(g, {tx: x, tdy: dy}, outs)
    xd, dyd = x.astype(np.float64), dy.astype(np.float64)
    close(res[0], np.where(xd >= 0, xd, 0.1 * xd))
    close(res[1], np.clip(xd, -1.0, 1.5))
    close(res[2], np.where(xd > 0, xd, 0.5 * np.expm1(xd)))
    close(res[3], np.log1p(np.exp(2 * xd)) / 2)
    close(res[4], xd / (1 + np.exp(-1.5 * xd)))
    close(res[5], np.where(xd > 0, dyd, 0.1 * dyd))
    close(res[6], np.where(xd >= 0, xd, 0.2 * xd))


def test_python_number_operands_at_any_rank(rng):
    # A scalar takes the other operands' rank (cudnnfe_graph_add_scalar).
    x = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    y = g.cmp_gt(input=t, comparison=0.25).set_output(True)
    z = g.mul(g.add(t, 1.5), -2.0).set_output(True)
    out_y, out_z = run(g, {t: x}, [y, z])
    np.testing.assert_array_equal(out_y, x > 0.25)
    close(out_z, (x.astype(np.float64) + 1.5) * -2.0)


def test_python_number_operands_are_scalars(rng):
    v = rng.uniform(1, 2, (7,)).astype(np.float32)
    g = graph()
    t = g.tensor_like(v)
    y = g.add(g.scale(t, 2.5), 1.0).set_output(True)
    (out,) = run(g, {t: v}, [y])
    close(out, v.astype(np.float64) * 2.5 + 1.0)


# --------------------------------------------------------------------------
# matmul, reduction, convolution, attention
# --------------------------------------------------------------------------

def test_matmul_batched_broadcast_and_transposed(rng):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((1, 6, 5)).astype(np.float32).transpose(0, 2, 1)  # strided B
    g = graph()
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    assert tb.get_stride() == [30, 1, 5]
    c = g.matmul(A=ta, B=tb).set_output(True)
    assert c.get_dim() == [3, 4, 6]
    (out,) = run(g, {ta: a, tb: b}, [c])
    close(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4)


def test_matmul_bias_relu_with_virtual_intermediates(rng):
    a = rng.standard_normal((2, 8, 16)).astype(np.float32)
    b = rng.standard_normal((2, 16, 4)).astype(np.float32)
    d = rng.standard_normal((1, 8, 4)).astype(np.float32)
    g = graph()
    ta, tb, td = g.tensor_like(a), g.tensor_like(b), g.tensor_like(d)
    y = g.relu(g.bias(input=g.matmul(A=ta, B=tb), bias=td)).set_output(True)
    (out,) = run(g, {ta: a, tb: b, td: d}, [y])
    close(out, np.maximum(a.astype(np.float64) @ b + d, 0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", sorted(ref.REDUCTION))
@pytest.mark.parametrize("axes", [[1], [0, 2], None])
def test_reduction_modes(mode, axes, rng):
    x = rng.uniform(-2, 2, (3, 4, 5)).astype(np.float32)
    if mode == "MUL_NO_ZEROS":
        x[0, 0, :2] = 0
    if mode == "MUL":
        x = rng.uniform(0.8, 1.2, (3, 4, 5)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    y = g.reduction(input=t, mode=reduction_mode[mode], axes=axes).set_output(True)
    (out,) = run(g, {t: x}, [y])
    ax = tuple(axes) if axes is not None else (0, 1, 2)
    close(out, ref.REDUCTION[mode](x.astype(np.float64), ax), rtol=1e-4, atol=1e-5)


def test_reduction_output_dims_set_by_user(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    y = g.reduction(input=t, mode="ADD").set_dim([2, 1, 1]).set_output(True)
    (out,) = run(g, {t: x}, [y])
    close(out, x.astype(np.float64).sum(axis=(1, 2), keepdims=True), rtol=1e-4)


CONV_CASES = [
    # (x shape, w shape, pre, post, stride, dilation, channels_last)
    ((2, 3, 7, 7), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], False),
    ((2, 3, 7, 7), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], True),
    ((1, 2, 9, 8), (3, 2, 3, 2), [0, 1], [2, 0], [2, 1], [1, 2], False),
    ((2, 2, 10), (3, 2, 3), [1], [1], [2], [1], False),
    ((1, 2, 5, 4, 6), (2, 2, 3, 1, 3), [1, 0, 1], [1, 0, 1], [1, 1, 2], [1, 1, 1], False),
]


def _layout(a, channels_last):
    if not channels_last:
        return np.ascontiguousarray(a)
    perm = (0,) + tuple(range(2, a.ndim)) + (1,)
    inv = np.argsort(perm)
    return np.ascontiguousarray(a.transpose(perm)).transpose(inv)


@pytest.mark.parametrize("case", CONV_CASES, ids=[f"conv{i}" for i in range(len(CONV_CASES))])
def test_conv_fprop(case, rng):
    xs, ws, pre, post, stride, dil, cl = case
    x = _layout(rng.standard_normal(xs).astype(np.float32), cl)
    w = _layout(rng.standard_normal(ws).astype(np.float32), cl)
    g = graph()
    tx, tw = g.tensor_like(x), g.tensor_like(w)
    y = g.conv_fprop(image=tx, weight=tw, pre_padding=pre, post_padding=post, stride=stride,
                     dilation=dil).set_output(True)
    expected = ref.conv_fprop(x.astype(np.float64), w.astype(np.float64), pre, post, stride, dil)
    assert y.get_dim() == list(expected.shape)
    if cl:
        assert y.get_stride()[1] == 1  # the output keeps the image's channels-last layout
    (out,) = run(g, {tx: x, tw: w}, [y])
    close(out, expected, rtol=1e-4, atol=1e-4)


def test_conv_padding_shorthand_and_convolution_mode(rng):
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    g = graph()
    tx, tw = g.tensor_like(x), g.tensor_like(w)
    y = g.conv_fprop(image=tx, weight=tw, padding=[1, 1]).set_output(True)
    y2 = g.conv_fprop(image=tx, weight=tw, padding=[1, 1],
                      convolution_mode=cudnnfe.conv_mode.CONVOLUTION).set_output(True)
    out, out2 = run(g, {tx: x, tw: w}, [y, y2])
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    close(out, ref.conv_fprop(xd, wd, [1, 1], [1, 1], [1, 1], [1, 1]), rtol=1e-4, atol=1e-4)
    flipped = wd[:, :, ::-1, ::-1]
    close(out2, ref.conv_fprop(xd, flipped, [1, 1], [1, 1], [1, 1], [1, 1]), rtol=1e-4,
          atol=1e-4)


@pytest.mark.parametrize("stride", [1, 2])
def test_conv_dgrad(stride, rng):
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x_sp = [7, 7]
    dy_sp = [(s + 2 - 3) // stride + 1 for s in x_sp]
    dy = rng.standard_normal((2, 4, *dy_sp)).astype(np.float32)
    g = graph()
    tw, tdy = g.tensor_like(w), g.tensor_like(dy)
    dx = g.conv_dgrad(weight=tw, loss=tdy, padding=[1, 1], stride=[stride, stride])
    dx.set_dim([2, 3, *x_sp]).set_output(True)
    (out,) = run(g, {tw: w, tdy: dy}, [dx])
    expected = ref.conv_dgrad(dy.astype(np.float64), w.astype(np.float64), x_sp, [1, 1],
                              [1, 1], [stride] * 2, [1, 1])
    close(out, expected, rtol=1e-4, atol=1e-4)


def test_conv_wgrad(rng):
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    dy = rng.standard_normal((2, 4, 6, 5)).astype(np.float32)
    g = graph()
    tx, tdy = g.tensor_like(x), g.tensor_like(dy)
    dw = g.conv_wgrad(image=tx, loss=tdy, padding=[1, 1]).set_output(True)
    assert dw.get_dim() == [4, 3, 3, 3]
    (out,) = run(g, {tx: x, tdy: dy}, [dw])
    expected = ref.conv_wgrad(x.astype(np.float64), dy.astype(np.float64), [3, 3], [1, 1],
                              [1, 1], [1, 1], [1, 1])
    close(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("groups,channels_last", [(2, False), (4, True), (8, True)])
def test_conv_grouped_as_the_fuzzer_builds_it(groups, channels_last, rng):
    # cudnn-frontend's conv fuzzer: W is [K, C // groups, R, S]; dgrad takes
    # filter= and set_dim(X), wgrad set_dim(W). Reference: one ungrouped
    # convolution per group of channels.
    n, c, k, pad = 2, 8, 16, [1, 1]
    x = _layout(rng.standard_normal((n, c, 6, 5)).astype(np.float32), channels_last)
    w = _layout(rng.standard_normal((k, c // groups, 3, 3)).astype(np.float32), channels_last)
    dy = _layout(rng.standard_normal((n, k, 6, 5)).astype(np.float32), channels_last)
    g = graph()
    tx, tw, tdy = g.tensor_like(x), g.tensor_like(w), g.tensor_like(dy)
    y = g.conv_fprop(image=tx, weight=tw, padding=pad, stride=[1, 1], dilation=[1, 1])
    dx = g.conv_dgrad(loss=tdy, filter=tw, padding=pad, stride=[1, 1], dilation=[1, 1])
    dx.set_output(True).set_dim(list(x.shape)).set_stride([s // 4 for s in x.strides])
    dw = g.conv_wgrad(image=tx, loss=tdy, padding=pad, stride=[1, 1], dilation=[1, 1])
    dw.set_output(True).set_dim(list(w.shape)).set_stride([s // 4 for s in w.strides])
    out_y, out_dx, out_dw = run(g, {tx: x, tw: w, tdy: dy}, [y.set_output(True), dx, dw])
    cg, kg = c // groups, k // groups
    xd, wd, dyd = (a.astype(np.float64) for a in (x, w, dy))
    for i in range(groups):
        xs, ks = slice(i * cg, (i + 1) * cg), slice(i * kg, (i + 1) * kg)
        close(out_y[:, ks], ref.conv_fprop(xd[:, xs], wd[ks], pad, pad, [1, 1], [1, 1]),
              rtol=1e-4, atol=1e-4)
        close(out_dx[:, xs], ref.conv_dgrad(dyd[:, ks], wd[ks], [6, 5], pad, pad, [1, 1],
                                            [1, 1]), rtol=1e-4, atol=1e-4)
        close(out_dw[ks], ref.conv_wgrad(xd[:, xs], dyd[:, ks], [3, 3], pad, pad, [1, 1],
                                         [1, 1]), rtol=1e-4, atol=1e-4)


def test_conv_grouped_channels_not_divisible_is_refused():
    g = graph()
    x = g.tensor(dim=[1, 8, 4, 4], data_type=cudnnfe.data_type.FLOAT)
    w = g.tensor(dim=[4, 3, 3, 3], data_type=cudnnfe.data_type.FLOAT)
    with pytest.raises(ValueError, match="multiple of the weight"):
        g.conv_fprop(image=x, weight=w, padding=[1, 1])


SDPA_CASES = [
    # (b, h_q, h_kv, s_q, s_kv, d, d_v, causal, bottom_right, bias, bshd)
    (1, 2, 2, 8, 8, 4, 4, False, False, False, False),
    (2, 4, 2, 6, 10, 8, 6, True, False, False, False),
    (1, 4, 1, 4, 9, 8, 8, False, True, False, True),
    (2, 2, 2, 5, 7, 4, 4, False, False, True, False),
]


@pytest.mark.parametrize("case", SDPA_CASES, ids=[f"sdpa{i}" for i in range(len(SDPA_CASES))])
def test_sdpa(case, rng):
    b, hq, hkv, sq, skv, d, dv, causal, br, with_bias, bshd = case

    def make(h, s, dd):
        a = rng.standard_normal((b, s, h, dd) if bshd else (b, h, s, dd)).astype(np.float32)
        return a.transpose(0, 2, 1, 3) if bshd else a

    q, k, v = make(hq, sq, d), make(hkv, skv, d), make(hkv, skv, dv)
    bias = rng.standard_normal((1, hq, sq, skv)).astype(np.float32) if with_bias else None
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
    tb = g.tensor_like(bias) if with_bias else None
    scale = 0.3
    o, stats = g.sdpa(q=tq, k=tk, v=tv, attn_scale=scale, use_causal_mask=causal,
                      use_causal_mask_bottom_right=br, generate_stats=True, attn_bias=tb,
                      name="attn")
    o.set_output(True)
    stats.set_output(True)
    if bshd:
        assert o.get_stride()[1] == dv  # O keeps q's BSHD layout
    inputs = {tq: q, tk: k, tv: v}
    if with_bias:
        inputs[tb] = bias
    out_o, out_s = run(g, inputs, [o, stats])
    eo, es = ref.sdpa(q, k, v, scale, causal, br, None if bias is None else bias.astype(np.float64))
    close(out_o, eo, rtol=1e-4, atol=1e-5)
    close(out_s, es, rtol=1e-4, atol=1e-5)


def test_sdpa_default_scale_and_no_stats(rng):
    q = rng.standard_normal((1, 2, 4, 16)).astype(np.float32)
    g = graph()
    tq, tk, tv = g.tensor_like(q), g.tensor_like(q.copy()), g.tensor_like(q.copy())
    o, stats = g.sdpa(q=tq, k=tk, v=tv, is_inference=True)
    assert stats is None
    o.set_output(True)
    (out,) = run(g, {tq: q, tk: q.copy(), tv: q.copy()}, [o])
    close(out, ref.sdpa(q, q, q, 1 / math.sqrt(16))[0], rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------
# data types
# --------------------------------------------------------------------------

def test_half_io_with_float_compute(rng):
    a = rng.standard_normal((4, 8)).astype(np.float16)
    b = rng.standard_normal((8, 3)).astype(np.float16)
    g = cudnnfe.pygraph(io_data_type=data_type.HALF, compute_data_type=data_type.FLOAT,
                        intermediate_data_type=data_type.FLOAT)
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    c = g.matmul(ta, tb).set_output(True)
    (out,) = run(g, {ta: a, tb: b}, [c])  # target inferred from NumPy arrays
    assert out.dtype == np.float16
    close(out, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-3, atol=2e-3)


def test_bfloat16_with_ml_dtypes(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = rng.standard_normal((3, 4)).astype(ml_dtypes.bfloat16)
    g = cudnnfe.pygraph(io_data_type=data_type.BFLOAT16, compute_data_type=data_type.FLOAT)
    t = g.tensor_like(x)
    y = g.mul(t, t).set_output(True)
    (out,) = run(g, {t: x}, [y])
    assert out.dtype == ml_dtypes.bfloat16
    xd = x.astype(np.float64)
    close(out.astype(np.float64), xd * xd, rtol=1e-2, atol=1e-2)


def test_output_data_type_override(rng):
    x = rng.standard_normal((5,)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    y = g.identity(t).set_output(True).set_data_type(data_type.DOUBLE)
    (out,) = run(g, {t: x}, [y])
    assert out.dtype == np.float64
    close(out, x.astype(np.float64))


# --------------------------------------------------------------------------
# execution paths
# --------------------------------------------------------------------------

def _small_graph(rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    g = graph()
    ta, tb = g.tensor_like(a, name="a"), g.tensor_like(b, name="b")
    y = g.add(ta, tb, name="sum").set_output(True)
    g.build([cudnnfe.heur_mode.A])
    return g, ta, tb, y, a, b


def test_variant_pack_keys_tensor_uid_and_name(rng):
    g, ta, tb, y, a, b = _small_graph(rng)
    for keys in ([ta, tb, y], [ta.get_uid(), tb.get_uid(), y.get_uid()], ["a", "b", "sum::OUT_0"]):
        out = np.zeros((2, 3), np.float32)
        g.execute(dict(zip(keys, [a, b, out])), None, handle=cudnnfe.create_handle())
        close(out, a.astype(np.float64) + b)


def test_bound_execution_and_execute_ordered(rng):
    g, ta, tb, y, a, b = _small_graph(rng)
    out = np.zeros((2, 3), np.float32)
    run_fast = g.bind({ta: a, tb: b, y: out})
    a[...] = 1.0
    for _ in range(3):
        run_fast()
    close(out, 1.0 + b.astype(np.float64))
    order = g.get_bound_uids()
    arrays = {ta.get_uid(): a, tb.get_uid(): b, y.get_uid(): out}
    out[...] = 0
    g.execute_ordered([arrays[u].ctypes.data for u in order])
    close(out, 1.0 + b.astype(np.float64))


def test_execute_from_many_threads(rng):
    g, ta, tb, y, a, b = _small_graph(rng)
    errors = []

    def worker(seed):
        try:
            h = cudnnfe.create_handle()
            local_rng = np.random.default_rng(seed)
            for _ in range(50):
                x1 = local_rng.standard_normal((2, 3)).astype(np.float32)
                out = np.empty((2, 3), np.float32)
                g.execute({ta: x1, tb: b, y: out}, handle=h)
                np.testing.assert_allclose(out, x1 + b, rtol=1e-6)
            cudnnfe.destroy_handle(h)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_built_graph_is_immutable(rng):
    g, ta, tb, y, a, b = _small_graph(rng)
    with pytest.raises(cudnnfe.WrongStateError) as info:
        g.relu(ta)
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError):
        y.set_data_type(data_type.HALF)
    with pytest.raises(ValueError):
        g.validate()


def test_serialize_then_deserialize_and_execute_by_uid(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    g = graph()
    ta, tw = g.tensor_like(a), g.tensor_like(w)
    ta.set_uid(0)
    tw.set_uid(1)
    y = g.matmul(name="mm", A=ta, B=tw)
    y.set_output(True).set_uid(2)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    data = g.serialize()
    g2 = cudnnfe.pygraph(target=CPU)
    g2.deserialize(data)
    assert g2.is_built() and sorted(g2.get_bound_uids()) == [0, 1, 2]
    out = np.zeros((3, 2), np.float32)
    g2.execute({0: a, 1: w, 2: out}, np.zeros(0, np.uint8))
    close(out, a.astype(np.float64) @ w, rtol=1e-5)


# --------------------------------------------------------------------------
# checks of bound arrays
# --------------------------------------------------------------------------

def test_array_checks_name_the_tensor(rng):
    g, ta, tb, y, a, b = _small_graph(rng)
    out = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"'a'.*FLOAT.*float64"):
        g.execute({ta: a.astype(np.float64), tb: b, y: out})
    # Another shape or layout that spans the memory is bound by pointer with a warning
    # (cudnn-frontend's rule); one that spans too little is refused, naming both spans.
    with pytest.warns(cudnnfe.LargerBufferWarning, match=r"'b'.*dims \[2, 3\].*shape \[3, 2\]"):
        g.execute({ta: a, tb: b.T.copy(), y: out})
    with pytest.warns(cudnnfe.LargerBufferWarning,
                      match=r"'sum::OUT_0'.*strides \[3, 1\].*\[1, 2\]"):
        g.execute({ta: a, tb: b, y: np.zeros((3, 2), np.float32).T})
    with pytest.raises(ValueError, match=r"'b'.*span 6 elements.*spans only 3"):
        g.execute({ta: a, tb: b[:1].copy(), y: out})
    with pytest.raises(TypeError, match="not an array"):
        g.execute({ta: a, tb: [[1, 2, 3]], y: out})

    class FakeCuda:
        __cuda_array_interface__ = {"shape": (2, 3), "typestr": "<f4", "data": (1 << 40, False),
                                    "version": 3, "strides": None}

    with pytest.raises(ValueError, match="CUDA device memory"):
        g.execute({ta: FakeCuda(), tb: b, y: out})


def test_binding_errors(rng):
    g, ta, tb, y, a, b = _small_graph(rng)
    out = np.zeros((2, 3), np.float32)
    with pytest.raises(cudnnfe.InvalidArgumentError, match="no binding"):
        g.execute({ta: a, y: out})
    with pytest.raises(cudnnfe.InvalidArgumentError, match="bound twice"):
        g.execute({ta: a, tb: b, y: out, "a": a})
    with pytest.raises(cudnnfe.InvalidArgumentError):
        g.execute({ta: a, tb: b, y: out, 999: out})
    with pytest.raises(ValueError, match="no array"):
        g.bind({ta: a, y: out})
    try:
        g.execute({ta: a, tb: b})
    except cudnnfe.InvalidArgumentError as exc:
        assert exc.status == cudnnfe.lib.CUDNNFE_STATUS_INVALID_ARGUMENT
        assert exc.status_name == "CUDNNFE_STATUS_INVALID_ARGUMENT"
        assert "sum::OUT_0" in exc.message
    else:
        pytest.fail("a missing output binding was accepted")


# --------------------------------------------------------------------------
# the high-level API with NumPy
# --------------------------------------------------------------------------

def test_graph_context_manager_positional_and_dict(rng):
    q = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    k = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    v = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    with cudnnfe.Graph(inputs=["attn::q", "attn::k", "attn::v"], outputs=["output"],
                       **F32) as g:
        out, _ = g.sdpa(q=q, k=k, v=v, attn_scale=0.25, name="attn", use_causal_mask=True)
        out.set_output(True).set_name("output")
    assert g.is_built() and g.get_target() == CPU
    result = g(q, k, v)
    assert isinstance(result, np.ndarray) and result.shape == (1, 2, 6, 8)
    close(result, ref.sdpa(q, k, v, 0.25, causal=True)[0], rtol=1e-4, atol=1e-5)

    with cudnnfe.Graph(**F32) as g2:
        out2, _ = g2.sdpa(q=q, k=k, v=v, attn_scale=0.25, name="attn")
        out2.set_output(True)
    given = {"attn::q": q, "attn::k": k, "attn::v": v}
    res = g2(given)
    # as cudnn-frontend: the outputs are added to the caller's dict, which is returned
    assert res is given and set(res) == {"attn::q", "attn::k", "attn::v", "attn::O"}
    close(res["attn::O"], ref.sdpa(q, k, v, 0.25)[0], rtol=1e-4, atol=1e-5)
    # outputs given in the dict are written in place
    mine = np.zeros((1, 2, 6, 8), np.float32)
    res2 = g2({"attn::q": q, "attn::k": k, "attn::v": v, "attn::O": mine})
    assert res2["attn::O"] is mine
    close(mine, ref.sdpa(q, k, v, 0.25)[0], rtol=1e-4, atol=1e-5)


def test_graph_with_several_outputs_returns_a_tuple(rng):
    x = rng.standard_normal((4, 4)).astype(np.float32)
    with cudnnfe.Graph(**F32) as g:
        a = g.relu(x, name="r")
        b = g.exp(x, name="e")
        a.set_output(True)
        b.set_output(True)
    r, e = g(x)
    close(r, np.maximum(x, 0))
    close(e, np.exp(x.astype(np.float64)), rtol=1e-5)
    with pytest.raises(TypeError, match="takes 1 input"):
        g(x, x)


def test_graph_not_built_on_exception():
    g = cudnnfe.Graph(**F32)
    with pytest.raises(RuntimeError, match="boom"):
        with g:
            g.relu(np.zeros((2, 2), np.float32)).set_output(True)
            raise RuntimeError("boom")
    assert not g.is_built()


def test_graph_deserialize_classmethod_and_call(rng):
    x = rng.standard_normal((3, 3)).astype(np.float32)
    with cudnnfe.Graph(**F32) as g:
        g.tanh(x, name="t").set_output(True)
    g2 = cudnnfe.Graph.deserialize(g.serialize(), target=CPU)
    assert g2.input_names() == ["t::input"] and g2.output_names() == ["t::OUT_0"]
    close(g2(x), np.tanh(x.astype(np.float64)), rtol=1e-5)


def test_jit_graph_cache_and_graph_context(rng):
    builds = []

    def key(handle, a, b):
        return (a.shape, b.shape, a.dtype.str)

    @cudnnfe.jit(heur_modes=[cudnnfe.heur_mode.A, cudnnfe.heur_mode.B], target=CPU)
    @cudnnfe.graph_cache(key_fn=key)
    def make(handle, a, b):
        builds.append(a.shape)
        with cudnnfe.graph(handle, io_data_type=data_type.FLOAT) as (g, _):
            ta, tb = g.tensor_like(a), g.tensor_like(b)
            out = g.matmul(name="matmul", A=ta, B=tb)
            out.set_output(True).set_data_type(data_type.FLOAT)
        return g, [ta, tb, out]

    h = cudnnfe.create_handle()
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    g1, uids = make(h, a, b)
    g2, uids2 = make(h, a + 1, b)
    assert g1 is g2 and uids == uids2 and len(builds) == 1
    assert all(isinstance(u, int) for u in uids) and g1.is_built()
    out = np.zeros((2, 4), np.float32)
    g1.execute(dict(zip(uids, [a, b, out])), None)
    close(out, a.astype(np.float64) @ b, rtol=1e-5)
    g3, _ = make(h, np.zeros((5, 3), np.float32), b)
    assert g3 is not g1 and len(builds) == 2
    make.cache_clear()
    make(h, a, b)
    assert len(builds) == 3
    cudnnfe.destroy_handle(h)


def test_graph_cache_default_key_and_lru(rng):
    calls = []

    @cudnnfe.graph_cache(maxsize=2)
    def f(x, flag=False):
        calls.append(1)
        return object()

    a = np.zeros((2, 2), np.float32)
    assert f(a) is f(np.ones((2, 2), np.float32))  # same layout, same key
    assert f(a) is not f(a, flag=True)
    f(np.zeros((3,), np.float32))
    assert f.cache_size() == 2
    assert len(calls) == 3


def test_the_gil_is_released_during_execute():
    """Another Python thread keeps running while the C library executes."""
    import time

    a = np.random.default_rng(0).random((768, 512)).astype(np.float32)
    b = np.random.default_rng(1).random((512, 512)).astype(np.float32)
    g = graph()
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    c = g.matmul(ta, tb).set_output(True)
    g.build()
    out = np.empty((768, 512), np.float32)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        g.execute({ta: a, tb: b, c: out})
        span["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    ticks = []
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
    t.join()
    inside = [x for x in ticks if span["start"] <= x <= span["end"]]
    duration = span["end"] - span["start"]
    points = [span["start"]] + inside + [span["end"]]
    longest_gap = max(y - x for x, y in zip(points, points[1:]))
    assert duration > 0.02, "the graph ran too fast to tell"
    assert longest_gap < 0.5 * duration, (longest_gap, duration)
    close(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
