"""The corpus's one-channel channels-last convolutions on the GPU, built and bound as
cudnn-frontend's test_conv_fuzzer.py does (output strides left unset, Y a torch
channels_last tensor), against torch. The CPU variant is test_degenerate_layouts.py.

Skipped, with the reason shown, when torch is not installed or sees no CUDA device.
"""
import warnings

import pytest

torch = pytest.importorskip("torch", reason="GPU tests need torch, which is not installed")
if not torch.cuda.is_available():
    pytest.skip("GPU tests need a CUDA device; torch sees none", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import cudnnfe  # noqa: E402
from cudnnfe import data_type  # noqa: E402

DEV = torch.device("cuda")
TYPES = {torch.float32: data_type.FLOAT, torch.float16: data_type.HALF}

# (x dims, w dims, padding, stride, dilation, dtype, bias epilogue): the corpus's three cases.
CORPUS = {
    "x1x1x36x16_w196x1x5x7_f32_bias": ((1, 1, 36, 16), (196, 1, 5, 7), [1, 1], [1, 1], [1, 1],
                                       torch.float32, True),
    "x2x1x4x4_w196x1x3x1_f16": ((2, 1, 4, 4), (196, 1, 3, 1), [1, 0], [1, 2], [1, 1],
                                torch.float16, False),
    "x2x1x36x49x81_w256x1x1x3x1_f16": ((2, 1, 36, 49, 81), (256, 1, 1, 3, 1), [0, 0, 0],
                                       [2, 1, 1], [1, 1, 2], torch.float16, False),
}


@pytest.fixture(scope="module")
def handle():
    h = cudnnfe.create_handle()
    yield h
    cudnnfe.destroy_handle(h)


@pytest.fixture(autouse=True)
def no_tf32():
    # torch's reference in full fp32, as cudnnfe's FLOAT graphs compute.
    old = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32 = old


def memory_format(rank):
    return torch.channels_last if rank == 4 else torch.channels_last_3d


def small_ints(shape, dtype, gen):
    """Integers in [-2, 2]: exact in every type, so sums are exact too."""
    return torch.randint(-2, 3, shape, generator=gen, device=DEV).to(dtype)


def run(g, handle, pack):
    g.build([cudnnfe.heur_mode.A, cudnnfe.heur_mode.FALLBACK])
    ws = torch.empty(g.get_workspace_size(), device=DEV, dtype=torch.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a Y whose layout the graph does not share would warn
        g.execute(pack, ws, handle=handle)
    torch.cuda.synchronize()


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
@pytest.mark.parametrize("case", list(CORPUS), ids=list(CORPUS))
def test_corpus_conv_fprop_into_a_channels_last_y(handle, case, layout):
    xd, wd, pad, stride, dilation, dtype, bias = CORPUS[case]
    gen = torch.Generator(device=DEV).manual_seed(7)
    fmt = memory_format(len(xd))
    X = small_ints(xd, dtype, gen)
    W = small_ints(wd, dtype, gen)
    if layout == "nhwc":
        X, W = X.to(memory_format=fmt), W.to(memory_format=fmt)
    conv = F.conv2d if len(xd) == 4 else F.conv3d
    ref = conv(X.float(), W.float(), padding=pad, stride=stride, dilation=dilation)
    B = small_ints((1, wd[0]) + (1,) * (len(xd) - 2), dtype, gen) if bias else None
    if bias:
        ref = ref + B.float()
    Y = torch.full(ref.shape, float("nan"), device=DEV, dtype=dtype).to(memory_format=fmt)

    g = cudnnfe.pygraph(handle=handle, io_data_type=TYPES[dtype],
                        intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT)
    tx = g.tensor(name="X", dim=list(X.size()), stride=list(X.stride()), data_type=TYPES[dtype])
    tw = g.tensor(name="W", dim=list(W.size()), stride=list(W.stride()), data_type=TYPES[dtype])
    out = g.conv_fprop(image=tx, weight=tw, padding=pad, stride=stride, dilation=dilation)
    pack = {tx: X, tw: W}
    if bias:
        tb = g.tensor(name="B", dim=list(B.size()), stride=list(B.stride()),
                      data_type=TYPES[dtype])
        out = g.bias(name="bias", input=out, bias=tb)
        pack[tb] = B
    out.set_output(True)
    try:
        g.validate()
        assert out.get_stride() == list(Y.stride())  # channels-last, as the caller allocates
        pack[out] = Y
        run(g, handle, pack)
    except cudnnfe.cudnnGraphNotSupportedError as exc:
        pytest.skip(f"cuDNN refuses {case} {layout}: {exc}")
    torch.testing.assert_close(Y.float(), ref, atol=0, rtol=0)


@pytest.mark.parametrize("op", ["dgrad", "wgrad"])
def test_c1_channels_last_gradients_into_channels_last_buffers(handle, op):
    xd, wd, pad, stride = (2, 1, 8, 8), (32, 1, 3, 3), [1, 1], [1, 1]
    gen = torch.Generator(device=DEV).manual_seed(11)
    fmt = torch.channels_last
    X = small_ints(xd, torch.float16, gen).to(memory_format=fmt)
    W = small_ints(wd, torch.float16, gen).to(memory_format=fmt)
    dY = small_ints((2, 32, 8, 8), torch.float16, gen).to(memory_format=fmt)
    g = cudnnfe.pygraph(handle=handle, io_data_type=data_type.HALF,
                        intermediate_data_type=data_type.FLOAT,
                        compute_data_type=data_type.FLOAT)
    tdy = g.tensor(name="dY", dim=list(dY.size()), stride=list(dY.stride()),
                   data_type=data_type.HALF)
    if op == "dgrad":
        tw = g.tensor(name="W", dim=list(W.size()), stride=list(W.stride()),
                      data_type=data_type.HALF)
        out = g.conv_dgrad(loss=tdy, filter=tw, padding=pad, stride=stride, dilation=[1, 1])
        out.set_dim(list(xd))
        ref = torch.nn.grad.conv2d_input(xd, W.float(), dY.float(), padding=pad, stride=stride)
        pack = {tdy: dY, tw: W}
    else:
        tx = g.tensor(name="X", dim=list(X.size()), stride=list(X.stride()),
                      data_type=data_type.HALF)
        out = g.conv_wgrad(image=tx, loss=tdy, padding=pad, stride=stride, dilation=[1, 1])
        out.set_dim(list(wd))
        ref = torch.nn.grad.conv2d_weight(X.float(), wd, dY.float(), padding=pad, stride=stride)
        pack = {tx: X, tdy: dY}
    out.set_output(True)
    result = torch.full(ref.shape, float("nan"), device=DEV,
                        dtype=torch.float16).to(memory_format=fmt)
    try:
        g.validate()
        assert out.get_stride() == list(result.stride())
        pack[out] = result
        run(g, handle, pack)
    except cudnnfe.cudnnGraphNotSupportedError as exc:
        pytest.skip(f"cuDNN refuses conv_{op} with C = 1: {exc}")
    # Sums of at most 32*9 products of small integers: exact in fp16's range.
    torch.testing.assert_close(result.float(), ref, atol=0, rtol=0)
