"""Bound executions in Python (``pygraph.bind``, the C ``cudnnfe_graph_bind``) and the
execute path's remembered NumPy checks, on the CPU reference against NumPy."""
import numpy as np
import pytest

import cudnnfe
from cpu_helpers import graph


def _bias_relu(shape=(2, 3, 4), by_value=False):
    g = graph()
    x = g.tensor(name="x", dim=list(shape))
    b = g.tensor(name="b", dim=[1, shape[1], 1])
    y = g.relu(g.add(x, b, name="add"), name="relu").set_output(True)
    if by_value:
        s = g.tensor(name="s", dim=[1, 1, 1], is_pass_by_value=True)
        y.set_output(False)
        y = g.mul(y, s, name="scale").set_output(True)
        g.build()
        return g, x, b, y, s
    g.build()
    return g, x, b, y


def _arrays(rng, shape=(2, 3, 4)):
    xa = rng.standard_normal(shape).astype(np.float32)
    ba = rng.standard_normal((1, shape[1], 1)).astype(np.float32)
    return xa, ba, np.full(shape, np.nan, np.float32)


def test_bound_call_equals_numpy_and_reads_new_contents(rng):
    g, x, b, y = _bias_relu()
    xa, ba, ya = _arrays(rng)
    run = g.bind({x: xa, b: ba, y: ya})
    assert isinstance(run, cudnnfe.BoundExecution)
    assert run.cuda_graph == "off"  # the CPU reference: no CUDA graph by default
    run()
    np.testing.assert_allclose(ya, np.maximum(xa + ba, 0), rtol=1e-6)
    xa += 1.0  # same buffer, new contents
    run.execute()
    np.testing.assert_allclose(ya, np.maximum(xa + ba, 0), rtol=1e-6)
    run.close()
    with pytest.raises(cudnnfe.InvalidArgumentError, match="bound execution is NULL"):
        run()


def test_bound_pass_by_value_is_read_at_each_call(rng):
    g, x, b, y, s = _bias_relu(by_value=True)
    xa, ba, ya = _arrays(rng)
    sa = np.array([[[2.0]]], np.float32)
    run = g.bind({x: xa, b: ba, y: ya, s: sa})
    run()
    first = ya.copy()
    sa[...] = 3.0
    run()
    np.testing.assert_allclose(ya, first * 1.5, rtol=1e-6)


def test_bind_cuda_graph_on_the_cpu_reference_is_refused(rng):
    g, x, b, y = _bias_relu()
    xa, ba, ya = _arrays(rng)
    for mode in (True, "native", "capture", "auto"):
        with pytest.raises(cudnnfe.GraphNotSupportedError,
                           match="CPU reference, which has no CUDA graph"):
            g.bind({x: xa, b: ba, y: ya}, cuda_graph=mode)
    assert g.bind({x: xa, b: ba, y: ya}, cuda_graph=False).cuda_graph == "off"
    with pytest.raises(ValueError, match="cuda_graph is 'sometimes'"):
        g.bind({x: xa, b: ba, y: ya}, cuda_graph="sometimes")


def test_bind_bad_packs(rng):
    g, x, b, y = _bias_relu()
    xa, ba, ya = _arrays(rng)
    with pytest.raises(ValueError, match=r"no array for tensor\(s\) \['relu::Y'\]|no array"):
        g.bind({x: xa, b: ba})
    with pytest.raises(ValueError, match="has dims"):
        g.bind({x: xa, b: ba, y: np.zeros((5,), np.float32)})


def test_execute_remembers_checked_arrays_only_while_they_are_the_same(rng):
    g, x, b, y = _bias_relu()
    xa, ba, ya = _arrays(rng)
    g.execute({x: xa, b: ba, y: ya})
    np.testing.assert_allclose(ya, np.maximum(xa + ba, 0), rtol=1e-6)
    # Another output array: the result lands there, not in the remembered one.
    other = np.full_like(ya, np.nan)
    g.execute({x: xa, b: ba, y: other})
    np.testing.assert_allclose(other, ya, rtol=0)
    # The same array object with a new shape is checked again: it still spans the
    # tensor's memory, so it is taken, with the warning a shape mismatch gets.
    xa.shape = (4, 3, 2)
    with pytest.warns(cudnnfe.LargerBufferWarning, match="'x'"):
        g.execute({x: xa, b: ba, y: ya})
    # A new array of another dtype in the same position is checked again too.
    with pytest.raises(ValueError, match="'x'"):
        g.execute({x: np.zeros((2, 3, 4), np.float64), b: ba, y: ya})
