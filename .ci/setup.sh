# Sourced by .ci/run and scripts/demo.sh: installs what building the C
# library needs on a fresh machine and finds the cuDNN/CUDA headers.
# Defines CUDNNFE_CMAKE_ARGS and cudnnfe_configure.

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v ninja >/dev/null || need_apt+=(ninja-build)
command -v g++ >/dev/null || need_apt+=(g++)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
if ((${#need_apt[@]})); then
  echo "setup: installing ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
  fi
fi

CUDNNFE_CMAKE_ARGS=()
# cuDNN and CUDA runtime headers are build-time only (both are dlopen'ed).
# Without a toolkit install, the headers come from NVIDIA's PyPI wheels.
have_cudnn_headers=false
for dir in "${CUDNN_INCLUDE_DIR:-}" /usr/local/cuda/include /usr/include /usr/include/x86_64-linux-gnu; do
  [ -n "$dir" ] && [ -f "$dir/cudnn_graph.h" ] && have_cudnn_headers=true
done
if ! $have_cudnn_headers; then
  echo "setup: no cuDNN headers found; fetching them from PyPI wheels"
  headers=$(pwd)/build-deps/headers
  python3 -m pip install -q --target "$headers" nvidia-cudnn-cu13 nvidia-cuda-runtime
  export CUDNN_INCLUDE_DIR=$(dirname "$(find "$headers" -name cudnn_graph.h | head -1)")
  export CUDA_INCLUDE_DIR=$(dirname "$(find "$headers" -name cuda_runtime_api.h | head -1)")
fi

cudnnfe_configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
}
