# Sourced by .ci/run and scripts/demo.sh: installs what building the C
# library needs on a fresh machine (a C++ compiler, CMake, Ninja; nothing from
# NVIDIA). Defines debian_install, nvidia_headers, CUDNNFE_CMAKE_ARGS and
# cudnnfe_configure.

# debian_install GROUP...: installs the packages of .ci/debian-packages.txt in
# those groups that this machine lacks.
debian_install() {
  local list missing=() pkg group cmd
  list="$(dirname "${BASH_SOURCE[0]}")/debian-packages.txt"
  while read -r pkg group cmd; do
    case "$pkg" in "" | "#"*) continue ;; esac
    [[ " $* " == *" $group "* ]] || continue
    if [ "$cmd" = "-" ]; then
      dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    else
      command -v "$cmd" >/dev/null || missing+=("$pkg")
    fi
  done <"$list"
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]} (Debian)"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

debian_install build

CUDNNFE_CMAKE_ARGS=()

# nvidia_headers: NVIDIA's cuDNN and CUDA runtime headers, for .ci/run's
# check of cudnnfe's own declarations (src/backend/nvidia_api.h) against
# them; the build itself needs none. Where no toolkit provides them they come
# from the NVIDIA wheels pinned in .ci/header-wheels.txt (into build-deps/).
nvidia_headers() {
  local dir
  for dir in "${CUDNN_INCLUDE_DIR:-}" /usr/local/cuda/include /usr/include /usr/include/x86_64-linux-gnu; do
    [ -n "$dir" ] && [ -f "$dir/cudnn_graph.h" ] && return 0
  done
  local headers wheels
  headers=$(pwd)/build-deps/headers
  wheels="$(dirname "${BASH_SOURCE[0]}")/header-wheels.txt"
  # A copy of the list beside the headers says which wheels they came from.
  if ! cmp -s "$wheels" "$headers/header-wheels.txt"; then
    echo "setup: fetching NVIDIA's headers from PyPI wheels (for the declarations check)"
    rm -rf "$headers"
    python3 -m pip install -q --no-deps --target "$headers" -r "$wheels"
    cp "$wheels" "$headers/header-wheels.txt"
  fi
  CUDNN_INCLUDE_DIR=$(dirname "$(find "$headers" -name cudnn_graph.h | head -1)")
  CUDA_INCLUDE_DIR=$(dirname "$(find "$headers" -name cuda_runtime_api.h | head -1)")
  export CUDNN_INCLUDE_DIR CUDA_INCLUDE_DIR
}

cudnnfe_configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
}
