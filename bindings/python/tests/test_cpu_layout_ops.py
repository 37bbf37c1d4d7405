"""reshape, transpose, slice, concatenate, resample and rng on the CPU reference against
NumPy, and their bad inputs."""
from fractions import Fraction

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type, padding_mode, resample_mode, rng_distribution
from cpu_helpers import close, graph, run
import numpy_ref_ops as ref


@pytest.fixture
def x(rng):
    return rng.standard_normal((2, 3, 4, 5)).astype(np.float32)


# ---------------------------------------------------------------------------
# reshape, transpose, slice, concatenate
# ---------------------------------------------------------------------------

def test_reshape_with_dims(x):
    g = graph()
    t = g.tensor_like(x)
    y = g.identity(g.reshape(t, dim=[6, -1])).set_output(True)
    assert y.get_dim() == [6, 20]
    (out,) = run(g, {t: x}, [y])
    np.testing.assert_array_equal(out, x.reshape(6, 20))


def test_reshape_dims_set_on_the_output_as_cudnn_frontend_does(x):
    g = graph()
    t = g.tensor_like(x)
    r = g.reshape(t, name="r")
    r.set_dim([3, 40]).set_stride([40, 1])
    y = g.relu(r).set_output(True)
    assert y.get_dim() == [3, 40]
    description = g.serialize()  # the pending dims are in the description
    assert b'"dims":[3,40]' in description.replace(b" ", b"")
    (out,) = run(g, {t: x}, [y])
    np.testing.assert_array_equal(out, np.maximum(x.reshape(3, 40), 0))
    loaded = cudnnfe.pygraph.deserialize(description, target=cudnnfe.target.CPU_REFERENCE)
    assert loaded.get_node_count() == 2


def test_transpose(x):
    g = graph()
    t = g.tensor_like(x)
    tr = g.transpose(t, permutation=[0, -1, 1, 2])
    assert tr.get_dim() == [2, 5, 3, 4]
    y = g.identity(tr).set_output(True)
    (out,) = run(g, {t: x}, [y])
    np.testing.assert_array_equal(out, x.transpose(0, 3, 1, 2))


@pytest.mark.parametrize("slices", [
    [slice(1, None), slice(None), slice(0, 4, 2)],
    [slice(None), slice(-2, None), slice(1, 3), slice(None, None, 3)],
    [slice(0, 100)],  # bounds clamp as Python's do
], ids=["steps", "negative-start", "clamped"])
def test_slice_with_python_slices(x, slices):
    g = graph()
    t = g.tensor_like(x)
    s = g.slice(t, slices, name="s")
    y = g.identity(s).set_output(True)
    (out,) = run(g, {t: x}, [y])
    np.testing.assert_array_equal(out, x[tuple(slices)])


def test_slice_with_start_end_step(x):
    g = graph()
    t = g.tensor_like(x)
    y = g.identity(g.slice(t, start=[0, 1, 1, 0], end=[2, 3, 4, 5], step=[1, 1, 2, 2]))
    (out,) = run(g, {t: x}, [y.set_output(True)])
    np.testing.assert_array_equal(out, x[:, 1:3, 1:4:2, 0:5:2])


def test_concatenate(rng):
    arrays = [rng.standard_normal((2, n, 3)).astype(np.float32) for n in (1, 4, 2)]
    g = graph()
    ts = [g.tensor_like(a) for a in arrays]
    y = g.concatenate(ts, axis=-2, name="cat").set_output(True)
    (out,) = run(g, dict(zip(ts, arrays)), [y])
    np.testing.assert_array_equal(out, np.concatenate(arrays, axis=1))


def test_layout_bad_inputs(x):
    g = graph()
    t = g.tensor_like(x)
    with pytest.raises(cudnnfe.InvalidGraphError, match="keeps the element count") as info:
        g.reshape(t, dim=[7, 3], name="r")
    assert 'reshape "r"' in info.value.message
    with pytest.raises(cudnnfe.InvalidGraphError, match="not a permutation"):
        g.transpose(t, [0, 0, 1, 2])
    with pytest.raises(cudnnfe.NotOfferedError, match="negative slice steps"):
        g.slice(t, [slice(None, None, -1)])
    with pytest.raises(TypeError, match="integer index"):
        g.slice(t, [1])
    with pytest.raises(ValueError, match="5 slices"):
        g.slice(t, [slice(None)] * 5)
    with pytest.raises(cudnnfe.InvalidGraphError, match="empty"):
        g.slice(t, [slice(1, 1)])
    # A slice is a view with no buffer of its own: a graph cudnnfe cannot run (NOT_SUPPORTED,
    # as cudnn-frontend refuses its slice operation before cuDNN 9.22).
    with pytest.raises(cudnnfe.GraphNotSupportedError, match="graph output"):
        s = g.slice(t, [slice(0, 1)], name="view")
        s.set_output(True)
        g.validate()
    g2 = graph()
    a, b = g2.tensor(dim=[2, 3]), g2.tensor(dim=[3, 3])
    with pytest.raises(cudnnfe.InvalidGraphError, match="only the axis"):
        g2.concatenate([a, b], axis=1)
    with pytest.raises(cudnnfe.InvalidArgumentError, match="2 to 16"):
        g2.concatenate([a], axis=0)
    with pytest.raises(cudnnfe.NotOfferedError, match="in_place_index"):
        g2.concatenate([a, b], axis=0, in_place_index=0)
    with pytest.raises(ValueError, match="reshape_mode"):
        g2.reshape(a, reshape_mode="SIDEWAYS")


# ---------------------------------------------------------------------------
# resample
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    dict(mode="MAXPOOL", window=[3, 3], stride=[2, 2], pre=[1, 1], post=[1, 1]),
    dict(mode="MAXPOOL", window=[2, 3], stride=[1, 2], pre=[0, 1], post=[1, 0],
         padding="EDGE"),
    dict(mode="AVGPOOL_INCLUDE_PADDING", window=[3, 2], stride=[2, 1], pre=[1, 0],
         post=[1, 1]),
    dict(mode="AVGPOOL_EXCLUDE_PADDING", window=[3, 3], stride=[2, 2], pre=[1, 1],
         post=[1, 1]),
    dict(mode="MAXPOOL", window=[2], stride=[2], pre=[0], post=[0], rank=3),
    dict(mode="AVGPOOL_INCLUDE_PADDING", window=[2, 2, 2], stride=[1, 2, 2], pre=[0, 0, 0],
         post=[0, 1, 1], rank=5),
], ids=["max-3x3s2p1", "max-edge", "avg-include", "avg-exclude", "max-1d", "avg-3d"])
def test_pooling(rng, case):
    shape = {3: (2, 3, 9), 4: (2, 3, 7, 8), 5: (1, 2, 4, 5, 6)}[case.get("rank", 4)]
    x = rng.standard_normal(shape).astype(np.float32)
    if len(shape) == 4:  # channels-last memory, logical NCHW
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    g = graph()
    t = g.tensor_like(x)
    kw = {}
    if "padding" in case:
        kw["padding_mode"] = padding_mode[case["padding"]]
    y, index = g.resample(t, resampling_mode=case["mode"], window=case["window"],
                          stride=case["stride"], pre_padding=case["pre"],
                          post_padding=case["post"], is_inference=False, **kw)
    outputs = [y.set_output(True)]
    if case["mode"] == "MAXPOOL":
        assert index is not None and index.get_dim() == y.get_dim()
        outputs.append(index.set_output(True))
    else:
        assert index is None
    # y and the index are channels-last whatever x's layout (cudnn-frontend's resample
    # default): C innermost, then the spatial dims, N outermost.
    d = y.get_dim()
    order = [0] + list(range(2, len(d))) + [1]  # outermost first
    want_stride, step = [0] * len(d), 1
    for i in reversed(order):
        want_stride[i], step = step, step * d[i]
    for out in outputs:
        assert out.get_stride() == want_stride
    outs = run(g, {t: x}, outputs)
    want_y, want_index = ref.pool(x.astype(np.float64), case["mode"], case["window"],
                                  case["stride"], case["pre"], case["post"],
                                  case.get("padding", "AUTO"))
    close(outs[0], want_y, rtol=1e-5, atol=1e-6)
    if case["mode"] == "MAXPOOL":
        assert outs[1].dtype == np.int8
        np.testing.assert_array_equal(outs[1], want_index)


@pytest.mark.parametrize("mode", ["NEAREST", "BILINEAR"])
@pytest.mark.parametrize("how", ["scale", "fractional-stride"])
def test_upsampling(rng, mode, how):
    x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    g = graph()
    t = g.tensor_like(x)
    if how == "scale":
        y, index = g.resample(t, resample_mode[mode], scale=[2, 3])
    else:  # cudnn-frontend describes x2 / x3 upsampling as strides 1/2 and 1/3
        y, index = g.resample(t, mode, stride=[0.5, Fraction(1, 3)])
    assert index is None and y.get_dim() == [1, 2, 6, 12]
    (out,) = run(g, {t: x}, [y.set_output(True)])
    close(out, ref.upsample(x.astype(np.float64), mode, [2, 3]), rtol=1e-5, atol=1e-6)


def test_resample_bad_inputs(x):
    g = graph()
    t = g.tensor_like(x)
    with pytest.raises(cudnnfe.InvalidGraphError, match="smaller than the window|< window|window"):
        g.resample(t, window=[2, 2], stride=[1, 1], padding=[2, 2], name="pool")
    with pytest.raises(cudnnfe.InvalidGraphError):
        g.resample(t, "AVGPOOL_INCLUDE_PADDING", padding_mode=padding_mode.NEG_INF)
    with pytest.raises(ValueError, match="resampling_mode"):
        g.resample(t, "MEDIANPOOL")
    with pytest.raises(ValueError, match="one per spatial dimension"):
        g.resample(t, window=[2, 2], stride=[2])
    with pytest.raises(ValueError, match="1/k"):
        g.resample(t, "NEAREST", stride=[0.4, 0.5])


# ---------------------------------------------------------------------------
# rng
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("distribution,params", [
    ("BERNOULLI", dict(bernoulli_probability=0.3)),
    ("UNIFORM", dict(uniform_min=-2.0, uniform_max=5.0)),
    ("NORMAL", dict(normal_mean=1.0, normal_stddev=3.0)),
])
@pytest.mark.parametrize("seeding", ["value", "tensors", "ints"])
def test_rng_matches_the_documented_generator(distribution, params, seeding):
    shape = (4, 3, 50)
    g = graph()
    inputs = {}
    if seeding == "value":
        kw, seed, offset = dict(seed=987), 987, 0
    elif seeding == "tensors":
        ts = g.tensor(dim=[1], data_type=data_type.INT64)
        to = g.tensor(dim=[1], data_type=data_type.INT64)
        inputs = {ts: np.array([-5], np.int64), to: np.array([1000], np.int64)}
        kw, seed, offset = dict(seed=ts, offset=to), -5, 1000
    else:
        kw, seed, offset = dict(seed=11, offset=3), 11, 3
    y = g.rng(dim=shape, distribution=rng_distribution[distribution], **params, **kw)
    assert y.get_dim() == list(shape)
    (out,) = run(g, inputs, [y.set_output(True)])
    assert out.dtype == np.float32
    names = dict(BERNOULLI=("p",), UNIFORM=("lo", "hi"), NORMAL=("mean", "std"))[distribution]
    want = ref.rng(shape, distribution, seed, offset,
                   **dict(zip(names, params.values())))
    close(out, want, rtol=1e-5, atol=1e-5)


def test_rng_offset_shifts_the_sequence():
    g = graph()
    a = g.rng(dim=[100], seed=5, offset=0, distribution="UNIFORM").set_output(True)
    b = g.rng(dim=[90], seed=5, offset=10, distribution="uniform").set_output(True)
    out_a, out_b = run(g, {}, [a, b])
    np.testing.assert_array_equal(out_a[10:], out_b)


def test_rng_output_type_and_errors():
    g = graph()
    y = g.rng([8], seed=1, bernoulli_probability=0.5, data_type=data_type.HALF)
    assert y.get_data_type() == data_type.HALF
    with pytest.raises(TypeError, match="dim"):
        g.rng()
    with pytest.raises(ValueError, match="distribution"):
        g.rng([4], distribution="POISSON")
    with pytest.raises(cudnnfe.InvalidGraphError, match="offset|seed"):
        g.rng([4], seed=g.tensor(dim=[1], data_type=data_type.INT64))  # no offset
    with pytest.raises(cudnnfe.InvalidGraphError, match="probability"):
        g.rng([4], seed=1, bernoulli_probability=1.5)
