"""The variant-pack forms cudnn-frontend accepts because it binds only pointers: a raw
address (``tensor.data_ptr()``) for a tensor or the workspace, and an array of another
shape that spans enough memory (:class:`cudnnfe.LargerBufferWarning`); on the CPU
reference, checked against NumPy."""
import numpy as np
import pytest

import cudnnfe
from cpu_helpers import graph


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
    with pytest.raises(ValueError, match=r"has dims \[2, 3, 4\] but its array has shape "
                                         r"\[2, 3, 3\], which spans 18 elements"):
        g.execute({x: xa, b: ba, y: np.zeros((2, 3, 3), np.float32)})
    with pytest.raises(ValueError, match="is FLOAT but its array is numpy.float64"):
        g.execute({x: xa, b: ba, y: np.zeros((4, 3, 4), np.float64)})


def test_larger_input_buffer_is_refused():
    g, x, b, y = _bias_relu()
    with pytest.raises(ValueError, match=r"'x'.*has dims \[2, 3, 4\] but its array has shape "
                                         r"\[4, 3, 4\]"):
        g.execute({x: np.zeros((4, 3, 4), np.float32), b: np.zeros((1, 3, 1), np.float32),
                   y: np.zeros((2, 3, 4), np.float32)})
