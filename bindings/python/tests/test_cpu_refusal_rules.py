"""The refusal rules issue 23's inventory (docs/refusals.md) changed, seen from Python as
cudnn-frontend code sees them: a graph cuDNN (or cudnnfe's executors) cannot run raises
GraphNotSupportedError -- cudnn-frontend's ``cudnnGraphNotSupportedError``, which its tests
catch to skip -- and rules with no evidence no longer refuse (the CPU reference runs the
graph, matching NumPy)."""
import numpy as np
import pytest

import cudnnfe
from cudnnfe import data_type
from cpu_helpers import close, graph, run


def test_cudnn_side_limits_are_graph_not_supported_errors():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = graph()
    t = g.tensor_like(x)
    s = g.slice(t, [slice(0, 1)], name="view").set_output(True)  # a slice has no buffer
    with pytest.raises(cudnnfe.cudnnGraphNotSupportedError, match="graph output"):
        g.validate()
    assert s.get_dim() == [1, 3, 4]

    g = graph()  # 65 inputs and 65 outputs: more bound tensors than cudnnfe's executors take
    for i in range(65):
        g.neg(g.tensor(name=f"in{i}", dim=[2], stride=[1])).set_output(True)
    with pytest.raises(cudnnfe.cudnnGraphNotSupportedError, match="at most 128"):
        g.validate()


def test_a_compute_type_the_cpu_reference_lacks_is_refused_at_its_build():
    x = np.ones((2, 3), np.float32)
    g = graph()
    t = g.tensor_like(x)
    g.neg(t, compute_data_type=data_type.BFLOAT16).set_output(True)
    g.validate()  # a well-formed graph: cuDNN decides on the GPU
    with pytest.raises(cudnnfe.GraphNotSupportedError, match="BFLOAT16.*CPU reference"):
        g.build()


def test_integer_matmul_inputs_run_on_the_cpu_reference():
    a = np.arange(6, dtype=np.int32).reshape(1, 2, 3)
    b = np.arange(6, dtype=np.int32).reshape(1, 3, 2)
    g = graph()
    ta, tb = g.tensor_like(a), g.tensor_like(b)
    c = g.matmul(ta, tb).set_output(True).set_data_type(data_type.FLOAT)
    (out,) = run(g, {ta: a, tb: b}, [c])
    close(out, (a @ b).astype(np.float64))


def test_an_input_no_op_reads_is_no_refusal():
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    g = graph()
    tx = g.tensor_like(x)
    unused = g.tensor_like(x.copy())
    y = g.relu(tx).set_output(True)
    (out,) = run(g, {tx: x, unused: x}, [y])
    close(out, np.maximum(x, 0))
