#!/usr/bin/env bash
# Full GPU verification on a machine with a GPU: build, every CTest (the GPU
# cases run there), the GPU test binaries again against a second cuDNN
# (CUDNNFE_SECOND_CUDNN, e.g. PyTorch's), the Python GPU tests, and the
# attention benchmark. Logs go to ${OUT:-/tmp/cudnnfe-gpu}.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/cudnnfe-gpu}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
cmake -S . -B /tmp/cudnnfe-build -G Ninja -DCMAKE_BUILD_TYPE=Release >"$out/build.log" 2>&1 &&
  cmake --build /tmp/cudnnfe-build -j"$(nproc)" >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "== ctest (system cuDNN)"
(cd /tmp/cudnnfe-build && NVIDIA_TF32_OVERRIDE=0 ctest -j4 --output-on-failure >"$out/ctest.log" 2>&1)
tail -16 "$out/ctest.log"
grep -E "^\[ (FAIL|SKIP) \]|passed, .*failed" "/tmp/cudnnfe-build/Testing/Temporary/LastTest.log" | head -40
second=${CUDNNFE_SECOND_CUDNN:-}
if [ -n "$second" ]; then
  echo "== GPU tests with $second"
  for t in $(cd /tmp/cudnnfe-build/tests && ls test_gpu_*); do
    CUDNNFE_CUDNN_LIBRARY="$second" LD_LIBRARY_PATH="$(dirname "$second"):${LD_LIBRARY_PATH:-}" \
      NVIDIA_TF32_OVERRIDE=0 timeout 200 /tmp/cudnnfe-build/tests/$t >"$out/${t}_second.log" 2>&1
    echo "$t: $(tail -1 "$out/${t}_second.log")"
  done
fi
if python3 -c "import cffi, torch" 2>/dev/null; then
  echo "== Python GPU tests"
  CUDNNFE_LIBRARY=/tmp/cudnnfe-build/libcudnnfe.so timeout 240 python3 -m pytest -q -rs \
    bindings/python/tests >"$out/pytest.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest.log" | tail -12
fi
# tests/test_verify (in ctest above) checks verify mode itself; here every GPU
# test runs again with it on, so that each plan those tests build is checked.
echo "== verify mode (docs/verify.md): GPU tests and Python GPU tests with CUDNNFE_VERIFY=1"
for t in $(cd /tmp/cudnnfe-build/tests && ls test_gpu_*); do
  CUDNNFE_VERIFY=1 NVIDIA_TF32_OVERRIDE=0 timeout 300 /tmp/cudnnfe-build/tests/$t >"$out/${t}_verify.log" 2>&1
  echo "$t (CUDNNFE_VERIFY=1): $(tail -1 "$out/${t}_verify.log")"
done
if python3 -c "import cffi, torch" 2>/dev/null; then
  CUDNNFE_VERIFY=1 CUDNNFE_LIBRARY=/tmp/cudnnfe-build/libcudnnfe.so timeout 600 python3 -m pytest -q -rs \
    bindings/python/tests >"$out/pytest_verify.log" 2>&1
  grep -E "^(FAILED|ERROR)|passed|failed" "$out/pytest_verify.log" | tail -12
fi
if [ "${CUDNNFE_BENCH:-1}" = 1 ]; then
  echo "== verify mode's first-execute cost"
  timeout 600 /tmp/cudnnfe-build/bench/bench_verify 2>&1 | tee "$out/bench_verify.log"
fi
if [ "${CUDNNFE_BENCH:-1}" = 1 ] && python3 -c "import torch" 2>/dev/null; then
  echo "== attention benchmark"
  CUDNNFE_LIBRARY=/tmp/cudnnfe-build/libcudnnfe.so timeout 200 python3 bench/bench_attention.py 2>&1 | tee "$out/bench_attention.log" | tail -30
fi
