"""The variant-pack forms cudnn-frontend accepts because it binds only pointers: a raw
address (``tensor.data_ptr()``) for a tensor or the workspace, and an array of another
shape that spans enough memory (:class:`cudnnfe.LargerBufferWarning`); on the CPU
reference, checked against NumPy."""
import numpy as np
import pytest

import cudnnfe
from cpu_helpers import alloc, graph


def _bias_relu(shape=(2, 3, 4)):
    g = graph()
    x = g.tensor(name="x", dim=list(shape))
    b = g.tensor(name="b", dim=[1, shape[1], 1])
    y = g.relu(g.add(x, b, name="add"), name="relu").set_output(True)
    g.build()
    return g, x, b, y


def test_raw_addresses_bind_tensors_and_workspace(rng):
    g, x, b, y = _bias_relu()
    xa = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ba = rng.standard_normal((1, 3, 1)).astype(np.float32)
    ya = np.full((2, 3, 4), np.nan, np.float32)
    ws = np.zeros(max(g.get_workspace_size(), 1), np.uint8)
    g.execute({x: xa.ctypes.data, b: ba, y: ya.ctypes.data}, ws.ctypes.data)
    np.testing.assert_allclose(ya, np.maximum(xa + ba, 0), rtol=1e-6)


def test_raw_address_must_be_positive():
    g, x, b, y = _bias_relu()
    with pytest.raises(ValueError, match="'x'.*address 0"):
        g.execute({x: 0, b: np.zeros((1, 3, 1), np.float32),
                   y: np.zeros((2, 3, 4), np.float32)})


def test_larger_output_buffer_is_written_from_its_start_with_a_warning(rng):
    g, x, b, y = _bias_relu()
    xa = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ba = rng.standard_normal((1, 3, 1)).astype(np.float32)
    big = np.full((4, 3, 4), np.nan, np.float32)  # twice y's elements
    with pytest.warns(cudnnfe.LargerBufferWarning, match=r"'relu::OUT_0'.*\[4, 3, 4\]"):
        g.execute({x: xa, b: ba, y: big})
    np.testing.assert_allclose(big[:2], np.maximum(xa + ba, 0), rtol=1e-6)
    assert np.isnan(big[2:]).all()  # the rest is not written


def test_smaller_buffer_or_other_dtype_is_refused():
    g, x, b, y = _bias_relu()
    xa = np.zeros((2, 3, 4), np.float32)
    ba = np.zeros((1, 3, 1), np.float32)
    with pytest.raises(ValueError, match=r"'relu::OUT_0'.*has dims \[2, 3, 4\] and strides "
                                         r"\[12, 4, 1\], which span 24 elements, but its "
                                         r"array of shape \[2, 3, 3\] and strides \[9, 3, 1\] "
                                         r"spans only 18: the array is too small"):
        g.execute({x: xa, b: ba, y: np.zeros((2, 3, 3), np.float32)})
    with pytest.raises(ValueError, match="is FLOAT but its array is numpy.float64"):
        g.execute({x: xa, b: ba, y: np.zeros((4, 3, 4), np.float64)})


def test_larger_input_buffer_is_read_from_its_start_with_a_warning(rng):
    # cudnn-frontend's test_sdpa_with_caching binds a K cache of more rows than its tensor.
    g, x, b, y = _bias_relu()
    big = rng.standard_normal((4, 3, 4)).astype(np.float32)
    ba = rng.standard_normal((1, 3, 1)).astype(np.float32)
    ya = np.full((2, 3, 4), np.nan, np.float32)
    with pytest.warns(cudnnfe.LargerBufferWarning, match=r"'x'.*\[4, 3, 4\].*is read from"):
        g.execute({x: big, b: ba, y: ya})
    np.testing.assert_allclose(ya, np.maximum(big[:2] + ba, 0), rtol=1e-6)


def test_input_of_another_layout_spanning_enough_is_read_at_the_tensor_strides(rng):
    # An array whose own strides differ (here a transposed view) but that spans the
    # tensor's memory: the tensor's strides decide, as with cudnn-frontend's pointer.
    g, x, b, y = _bias_relu()
    base = rng.standard_normal((4, 3, 2)).astype(np.float32)
    view = base.transpose(2, 1, 0)  # shape (2, 3, 4), strides (1, 2, 6)
    ba = np.zeros((1, 3, 1), np.float32)
    ya = np.zeros((2, 3, 4), np.float32)
    with pytest.warns(cudnnfe.LargerBufferWarning, match=r"'x'"):
        g.execute({x: view, b: ba, y: ya})
    np.testing.assert_allclose(ya, np.maximum(base.reshape(2, 3, 4), 0), rtol=1e-6)


def test_flat_buffer_of_a_dense_non_row_major_tensor_is_taken_silently(rng):
    # cudnn-frontend's MoE test binds a flat [E*N*K] buffer to weights [E, N, K] stored
    # K-major (strides [N*K, 1, N]): the same elements, so no warning.
    g = graph()
    x = g.tensor(name="x", dim=[2, 3, 4], stride=[12, 1, 3])
    y = g.relu(x, name="relu").set_output(True)
    g.build()
    flat = rng.standard_normal(24).astype(np.float32)
    ya = alloc(y)  # y takes x's layout
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.execute({x: flat, y: ya})
    expected = np.lib.stride_tricks.as_strided(flat, (2, 3, 4), (48, 4, 12))
    np.testing.assert_allclose(ya, np.maximum(expected, 0), rtol=1e-6)


def test_too_small_input_is_refused_with_both_spans():
    g, x, b, y = _bias_relu()
    with pytest.raises(ValueError, match=r"'x'.*span 24 elements.*spans only 12: the array "
                                         r"is too small"):
        g.execute({x: np.zeros((1, 3, 4), np.float32), b: np.zeros((1, 3, 1), np.float32),
                   y: np.zeros((2, 3, 4), np.float32)})


# The same dict of torch tensors executed again skips the per-array checks (issue 27's dict
# execute path, pygraph._seen_pack): everything that changes what it binds must still be seen.
def test_a_repeated_torch_variant_pack_follows_every_change_to_it(rng):
    torch = pytest.importorskip("torch", reason="the repeated-pack path is for torch tensors")
    g, x, b, y = _bias_relu()
    xt = torch.from_numpy(rng.standard_normal((2, 3, 4)).astype(np.float32))
    bt = torch.from_numpy(rng.standard_normal((1, 3, 1)).astype(np.float32))
    yt = torch.full((2, 3, 4), float("nan"))
    pack = {x: xt, b: bt, y: yt}

    def expect():
        want = torch.relu(pack[x] + pack[b])
        torch.testing.assert_close(pack[y], want, rtol=1e-6, atol=1e-6)

    for _ in range(3):  # new values in the same tensors are read each time
        xt.copy_(torch.randn(2, 3, 4))
        g.execute(pack)
        expect()
    pack[x] = torch.randn(2, 3, 4)  # another tensor under the same key
    g.execute(pack)
    expect()
    pack[x].set_(torch.randn(2, 3, 4))  # the same tensor object, new storage
    g.execute(pack)
    expect()
    pack[y] = torch.full((2, 3, 4), float("nan"))  # a new output
    g.execute(pack)
    expect()
    pack[x] = torch.randn(2, 3, 4, dtype=torch.float64)  # a wrong one is still refused
    with pytest.raises(ValueError, match="'x'.*float64"):
        g.execute(pack)
    pack[x] = torch.randn(2, 3, 4)
    g.execute(dict(pack))  # another dict with the same tensors
    expect()
