"""The Graph wrapper as cudnn-frontend's samples use it (samples/python 01, 10, 20, 23),
on the CPU reference with NumPy: inputs/outputs by operand key and output name,
set_io_tuples before and after the block, dict calls, workspace_alloc."""
import numpy as np
import pytest

import cudnnfe
from cpu_helpers import CPU, F32
from test_cpu_reference import close
import numpy_ref as ref


def _ln_arrays(rng):
    x = rng.standard_normal((8, 16, 1, 1)).astype(np.float32)
    scale = rng.standard_normal((1, 16, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, 16, 1, 1)).astype(np.float32)
    eps = np.full((1, 1, 1, 1), 1e-3, np.float32)
    return x, scale, bias, eps


def test_inputs_and_outputs_by_operand_key_and_output_name(rng):
    x, scale, bias, eps = _ln_arrays(rng)
    with cudnnfe.Graph(inputs=["ln::input", "ln::scale", "ln::bias", "ln::epsilon"],
                       outputs=["ln::Y", "ln::MEAN", "ln::INV_VARIANCE"], **F32) as graph:
        out, mean, inv = graph.layernorm(name="ln", input=x, scale=scale, bias=bias,
                                         epsilon=eps,
                                         norm_forward_phase=cudnnfe.norm_forward_phase.TRAINING)
        for t in (out, mean, inv):
            t.set_output(True)
    y, m, i = graph(x, scale, bias, eps)
    ey, em, ei = ref.layernorm(x.astype(np.float64), scale, bias, 1e-3, False)
    close(y, ey, rtol=1e-4, atol=1e-4)
    close(m, em, rtol=1e-4, atol=1e-5)
    close(i, ei, rtol=1e-4, atol=1e-5)
    assert graph["ln::Y"] is out and graph["ln::MEAN"] is mean


def test_matmul_bias_sample(rng):
    a = rng.standard_normal((2, 4, 8)).astype(np.float32)
    b = rng.standard_normal((2, 8, 3)).astype(np.float32)
    d = rng.standard_normal((1, 4, 3)).astype(np.float32)
    with cudnnfe.Graph(inputs=["mm::A", "mm::B", "bias::bias"], outputs=["bias::OUT_0"],
                       **F32) as graph:
        ab = graph.matmul(name="mm", A=a, B=b)
        graph.bias(name="bias", input=ab, bias=d).set_output(True)
    close(graph(a, b, d), a.astype(np.float64) @ b + d, rtol=1e-5, atol=1e-5)


def test_positional_keys_default_node_names_and_io_tuples_after_the_block(rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal((6, 5)).astype(np.float32)
    with cudnnfe.Graph(**F32) as graph:
        y = graph.matmul(x, B=w)  # positional operand: key "matmul.0::0"
        y.set_output(True)
    graph.set_io_tuples(["matmul.0::0", "matmul.0::B"], ["matmul.0::C"])
    close(graph(x, w), x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    graph.set_io_tuples([w, x], [y])  # the arrays given to the op select their inputs
    close(graph(w, x), x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="given twice"):
        graph.set_io_tuples([x, "matmul.0::0"], [y])
    with pytest.raises(ValueError, match="'matmul.0::B' needs an array"):
        graph.set_io_tuples(["matmul.0::0"], [y])


def test_dict_call_adds_outputs_and_accepts_renamed_outputs(rng):
    x, scale, bias, eps = _ln_arrays(rng)
    add = rng.standard_normal(x.shape).astype(np.float32)
    with cudnnfe.Graph(**F32) as graph:
        added = graph.add(name="Pointwise add", a=x, b=add)
        out, mean, inv = graph.layernorm(name="LN", input=added, scale=scale, bias=bias,
                                         epsilon=eps)
        added.set_name("added_x").set_output(True)
        out.set_name("output").set_output(True)
        mean.set_output(True)
        inv.set_output(True)
    mine = np.zeros(x.shape, np.float32)
    given = {"Pointwise add::a": x, "Pointwise add::b": add, "LN::scale": scale,
             "LN::bias": bias, "LN::epsilon": eps, "output": mine}
    result = graph(given)
    assert result is given
    ey, em, _ = ref.layernorm((x + add).astype(np.float64), scale, bias, 1e-3, False)
    close(mine, ey, rtol=1e-4, atol=1e-4)
    close(result["LN::MEAN"], em, rtol=1e-4, atol=1e-5)
    # an allocated output is returned under the name it had when its op was added
    close(result["Pointwise add::OUT_0"], x + add)


def test_workspace_alloc_false_and_handle_auto(rng):
    x = rng.standard_normal((3, 3)).astype(np.float32)
    with cudnnfe.Graph(workspace_alloc=False, handle="auto", target=CPU, **F32) as graph:
        graph.relu(x, name="r").set_output(True)
    close(graph(x), np.maximum(x, 0))  # the CPU reference needs no workspace
    with pytest.raises(TypeError, match="list or tuple"):
        cudnnfe.Graph(inputs="r::input")
