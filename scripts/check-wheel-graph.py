"""The graph scripts/build-wheel.sh --check runs with each installed wheel: a matmul
and a relu on the CPU reference executor, against NumPy. It imports cudnnfe from
the installed wheel (run it outside the repository) and needs no GPU."""
import platform

import numpy as np

import cudnnfe

x = np.random.randn(8, 64).astype(np.float32)
w = np.random.randn(64, 32).astype(np.float32)
with cudnnfe.Graph(io_data_type=cudnnfe.data_type.FLOAT,
                   compute_data_type=cudnnfe.data_type.FLOAT) as graph:
    y = graph.relu(graph.matmul(x, w))
    y.set_output(True)
np.testing.assert_allclose(graph(x, w), np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)
print(cudnnfe.library_info())
print(f"checked 1 graph on the CPU reference ({platform.machine()}): import cudnnfe from",
      cudnnfe.library_path())
