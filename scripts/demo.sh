#!/usr/bin/env bash
# The main job: builds libcudnnfe and runs the seeds' first graph (a conv
# on FP16 NHWC data) on the GPU when there is one, else on the CPU
# reference, and checks the result.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/setup.sh
cudnnfe_configure build "${CUDNNFE_CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target first_graph matmul_bias
./build/examples/c/first_graph
