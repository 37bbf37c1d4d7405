"""Output layouts with size-1 dims through the cudnn-frontend-style API, on the CPU reference.

A corpus run found convolutions with one input channel in channels-last layout (x 1x1x36x16,
strides (576, 1, 16, 1): C's stride equals W's) whose output got an "NHCW" layout while the
caller, as cudnn-frontend's test_conv_fuzzer.py does, bound a torch channels_last Y without
setting the output's strides. cudnn-frontend gives conv outputs channels-last strides; so does
cudnnfe now, and a size-1 dim no longer decides a dimension order (docs/design.md "Output
layouts"). The GPU variant is test_gpu_degenerate_layouts.py.
"""
import warnings

import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type

import numpy_ref as ref
from cpu_helpers import close, graph

# (x dims, w dims, padding, stride, dilation): the corpus's three cases.
CORPUS = {
    "x1x1x36x16_w196x1x5x7": ((1, 1, 36, 16), (196, 1, 5, 7), [1, 1], [1, 1], [1, 1]),
    "x2x1x4x4_w196x1x3x1": ((2, 1, 4, 4), (196, 1, 3, 1), [1, 0], [1, 2], [1, 1]),
    "x2x1x36x49x81_w256x1x1x3x1": ((2, 1, 36, 49, 81), (256, 1, 1, 3, 1), [0, 0, 0], [2, 1, 1],
                                   [1, 1, 2]),
}


def channels_last_strides(dims):
    """torch's channels_last (channels_last_3d) strides: N, spatial..., C packed."""
    order = [0] + list(range(2, len(dims))) + [1]  # outermost first
    strides, step = [0] * len(dims), 1
    for i in reversed(order):
        strides[i], step = step, step * dims[i]
    return strides


def channels_last_array(logical):
    """`logical` stored channels-last, as torch's .to(memory_format=channels_last) stores it."""
    perm = [0] + list(range(2, logical.ndim)) + [1]
    # copy(), not ascontiguousarray: NumPy takes a view whose only disorder is a size-1 dim
    # as contiguous already and would keep its strides.
    stored = logical.transpose(perm).copy(order="C")
    return stored.transpose(np.argsort(perm))


def conv_output_dims(x, w, pad, stride, dilation):
    return [x[0], w[0]] + [(x[i] + 2 * pad[i - 2] - dilation[i - 2] * (w[i] - 1) - 1)
                           // stride[i - 2] + 1 for i in range(2, len(x))]


@pytest.mark.parametrize("case", list(CORPUS), ids=list(CORPUS))
def test_corpus_conv_outputs_are_channels_last_without_set_strides(case):
    xd, wd, pad, stride, dilation = CORPUS[case]
    g = graph()
    X = g.tensor(name="X", dim=list(xd), stride=channels_last_strides(xd),
                 data_type=data_type.FLOAT)
    W = g.tensor(name="W", dim=list(wd), stride=channels_last_strides(wd),
                 data_type=data_type.FLOAT)
    Y = g.conv_fprop(image=X, weight=W, padding=pad, stride=stride, dilation=dilation)
    Y.set_output(True)
    g.validate()
    yd = conv_output_dims(xd, wd, pad, stride, dilation)
    assert Y.get_dim() == yd
    assert Y.get_stride() == channels_last_strides(yd)


def test_corpus_c1_nhwc_conv_bias_writes_the_channels_last_y_it_is_given(rng):
    # The corpus's first case as test_conv_fuzzer.py builds and binds it: a bias epilogue,
    # no output strides set, and Y allocated channels-last by the caller.
    xd, wd, pad, stride, dilation = CORPUS["x1x1x36x16_w196x1x5x7"]
    x = rng.integers(-3, 4, xd).astype(np.float32)
    w = rng.integers(-3, 4, wd).astype(np.float32)
    b = rng.integers(-3, 4, (1, wd[0], 1, 1)).astype(np.float32)
    X_arr, W_arr = channels_last_array(x), channels_last_array(w)
    assert X_arr.strides == tuple(4 * s for s in (576, 1, 16, 1))  # C's stride equals W's
    g = graph()
    X = g.tensor(name="X", dim=list(xd), stride=[s // 4 for s in X_arr.strides],
                 data_type=data_type.FLOAT)
    W = g.tensor(name="W", dim=list(wd), stride=[s // 4 for s in W_arr.strides],
                 data_type=data_type.FLOAT)
    conv = g.conv_fprop(image=X, weight=W, padding=pad, stride=stride, dilation=dilation)
    B = g.tensor(name="B", dim=list(b.shape), stride=[s // 4 for s in b.strides],
                 data_type=data_type.FLOAT)
    Y = g.bias(name="bias", input=conv, bias=B)
    Y.set_output(True)
    g.build()
    yd = conv_output_dims(xd, wd, pad, stride, dilation)
    assert conv.get_stride() == channels_last_strides(yd)
    assert Y.get_stride() == channels_last_strides(yd)
    Y_arr = channels_last_array(np.full(yd, np.nan, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a layout the graph does not share would warn
        g.execute({X: X_arr, W: W_arr, B: b, Y: Y_arr}, None)
    want = ref.conv_fprop(x.astype(np.float64), w.astype(np.float64), pad, pad, stride,
                          dilation) + b
    close(Y_arr, want)


@pytest.mark.parametrize("op", ["dgrad", "wgrad"])
def test_c1_nhwc_conv_gradients_are_channels_last(op):
    xd, wd, yd = [2, 1, 4, 4], [196, 1, 3, 1], [2, 196, 4, 2]
    g = graph()
    w = g.tensor(name="W", dim=wd, stride=channels_last_strides(wd), data_type=data_type.FLOAT)
    dy = g.tensor(name="dY", dim=yd, stride=channels_last_strides(yd), data_type=data_type.FLOAT)
    x = g.tensor(name="X", dim=xd, stride=channels_last_strides(xd), data_type=data_type.FLOAT)
    if op == "dgrad":
        out = g.conv_dgrad(loss=dy, filter=w, padding=[1, 0], stride=[1, 2], dilation=[1, 1])
        out.set_dim(xd)  # stride 2 hides the size, as in cudnn-frontend
        want = channels_last_strides(xd)
    else:
        out = g.conv_wgrad(image=x, loss=dy, padding=[1, 0], stride=[1, 2], dilation=[1, 1])
        out.set_dim(wd)
        want = channels_last_strides(wd)
    out.set_output(True)
    g.validate()
    assert out.get_stride() == want


def test_c1_nchw_input_still_gives_a_channels_last_output():
    # cudnn-frontend's default does not follow the image's layout.
    g = graph()
    X = g.tensor(name="X", dim=[1, 1, 36, 16], stride=[576, 576, 16, 1], data_type=data_type.FLOAT)
    W = g.tensor(name="W", dim=[196, 1, 5, 7], stride=[35, 35, 7, 1], data_type=data_type.FLOAT)
    Y = g.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    Y.set_output(True)
    g.validate()
    assert Y.get_stride() == channels_last_strides([1, 196, 34, 12])


@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
def test_broadcast_of_a_size1_channel_follows_the_image_layout(nhwc, rng):
    # x [2,1,4,4] + bias [1,K,1,1]: the output's order comes from x, even when the bias has
    # more elements (K = 64 > 2*4*4).
    x = rng.standard_normal((2, 1, 4, 4)).astype(np.float32)
    b = rng.standard_normal((1, 64, 1, 1)).astype(np.float32)
    xa = channels_last_array(x) if nhwc else x
    g = graph()
    X = g.tensor_like(xa)
    B = g.tensor_like(b)
    Y = g.bias(input=X, bias=B).set_output(True)
    g.build()
    want = channels_last_strides([2, 64, 4, 4]) if nhwc else [1024, 16, 4, 1]
    assert Y.get_stride() == want
    out = channels_last_array(np.full((2, 64, 4, 4), np.nan, np.float32)) if nhwc else \
        np.full((2, 64, 4, 4), np.nan, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.execute({X: xa, B: b, Y: out}, None)
    close(out, x + b)


def test_an_array_whose_size1_strides_differ_binds_without_a_warning(rng):
    # [2,1,3,4] declared NCHW (C's stride 12) and bound to an array with C's stride 1
    # (torch's channels_last for C = 1): the same memory, so no warning and the same result.
    x = rng.standard_normal((2, 1, 3, 4)).astype(np.float32)
    g = graph()
    X = g.tensor(name="X", dim=[2, 1, 3, 4], stride=[12, 12, 4, 1], data_type=data_type.FLOAT)
    Y = g.relu(input=X).set_output(True)
    g.build()
    xa = channels_last_array(x)
    assert xa.strides == (48, 4, 16, 4)
    out = channels_last_array(np.full(x.shape, np.nan, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.execute({X: xa, Y: out}, None)
    close(out, np.maximum(x, 0))
    # A real layout difference still says so: an NHWC array for an NCHW [2,3,4,4] tensor.
    z = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    g2 = graph()
    Z = g2.tensor(name="Z", dim=[2, 3, 4, 4], stride=[48, 16, 4, 1], data_type=data_type.FLOAT)
    R = g2.relu(input=Z).set_output(True)
    g2.build()
    with pytest.warns(cudnnfe.LargerBufferWarning):
        g2.execute({Z: channels_last_array(z), R: np.empty_like(z)}, None)


def test_matmul_with_m_or_n_of_one_is_row_major():
    g = graph()
    a = g.tensor(name="a", dim=[3, 1, 8], stride=[8, 1, 1], data_type=data_type.FLOAT)
    b = g.tensor(name="b", dim=[3, 8, 1], stride=[8, 1, 8], data_type=data_type.FLOAT)
    c = g.matmul(A=a, B=b).set_output(True)
    g.validate()
    assert c.get_dim() == [3, 1, 1] and c.get_stride() == [1, 1, 1]
    g2 = graph()
    a2 = g2.tensor(name="a", dim=[2, 5, 8], stride=[40, 1, 5], data_type=data_type.FLOAT)
    b2 = g2.tensor(name="b", dim=[1, 8, 1], stride=[8, 1, 1], data_type=data_type.FLOAT)
    c2 = g2.matmul(A=a2, B=b2).set_output(True)
    g2.validate()
    assert c2.get_stride() == [5, 1, 1]
