"""A first graph from Python: y = relu(x @ w + b), FP32, run on cudnnfe's CPU reference
with NumPy arrays (no GPU, cuDNN or PyTorch needed) and checked against NumPy.

    python examples/python/first_graph.py

Prints the result's shape and error and "OK" (exit 0), or "FAILED" (exit 1).
bindings/python/tests/test_examples.py runs it; the documentation site's
"Getting started: Python" page shows it.
"""
import sys

import numpy as np

import cudnnfe as cudnn  # the package offers cudnn-frontend's Python API


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64), dtype=np.float32)
    w = rng.standard_normal((64, 32), dtype=np.float32)
    b = rng.standard_normal((1, 32), dtype=np.float32)

    # Describe the graph; it is validated and built when the block exits.
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT,
                     compute_data_type=cudnn.data_type.FLOAT) as graph:
        y = graph.relu(graph.bias(graph.matmul(x, w), b))
        y.set_output(True)

    # Run it: NumPy inputs select the CPU reference, and the result is a NumPy array.
    result = graph(x, w, b)

    expected = np.maximum(x @ w + b, 0)
    error = float(np.max(np.abs(result - expected)))
    print(f"y {result.shape} {result.dtype}: max |y - numpy| = {error:.2e}")
    if error > 1e-4:
        print("FAILED")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
