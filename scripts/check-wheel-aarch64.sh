#!/usr/bin/env bash
# Installs an aarch64 wheel of cudnnfe, with its dependencies' aarch64 wheels,
# into a folder and runs scripts/check-wheel-graph.py with Debian's aarch64
# Python under qemu-user-static, on any machine (scripts/build-wheel.sh --check
# calls it).
#
#   scripts/check-wheel-aarch64.sh WHEEL [CACHE_DIR]   (default CACHE_DIR:
#                                                      build-wheel/qemu-aarch64)
#
# PYTHON: an interpreter with pip (it downloads the aarch64 wheels of cffi,
#   NumPy and ml_dtypes; nothing runs on it).
# The interpreter: Debian's python3 for arm64, its libraries and libstdc++
# (NumPy's C++ runtime), downloaded by apt-get from this machine's apt
# sources, with apt state of its own under CACHE_DIR (nothing is installed
# and dpkg gets no foreign architecture), and unpacked into CACHE_DIR/sysroot.
# qemu-aarch64-static runs it with that folder as its root for libraries (-L).
set -euo pipefail
wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=$(mkdir -p "${2:-$repo/build-wheel/qemu-aarch64}" &&
  cd "${2:-$repo/build-wheel/qemu-aarch64}" && pwd)
python=${PYTHON:-python3}
command -v qemu-aarch64-static >/dev/null || {
  echo "check-wheel-aarch64.sh: qemu-aarch64-static not found (Debian: qemu-user-static)" >&2
  exit 1
}

# ---- the sysroot, made again only when the package list changes ----
packages="python3-minimal libpython3-stdlib libstdc++6"
sysroot=$cache/sysroot
if [ "$(cat "$sysroot/.packages" 2>/dev/null)" != "$packages" ]; then
  start=$SECONDS
  rm -rf "$cache/apt" "$sysroot"
  mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial" "$sysroot"
  touch "$cache/apt/status"
  apt=(apt-get -qq -o APT::Architecture=arm64 -o APT::Architectures::=arm64
    -o Dir::State::Lists="$cache/apt/lists" -o Dir::State::status="$cache/apt/status"
    -o Dir::Cache="$cache/apt" -o Dir::Cache::archives="$cache/apt/archives"
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  "${apt[@]}" update
  # With an empty status file apt resolves the whole closure (libc6 included).
  "${apt[@]}" install -y --download-only --no-install-recommends $packages >/dev/null
  for deb in "$cache"/apt/archives/*.deb; do
    dpkg-deb -x "$deb" "$sysroot"
  done
  echo "$packages" >"$sysroot/.packages"
  echo "check-wheel-aarch64.sh: Debian's arm64 $packages ($(ls "$cache"/apt/archives/*.deb |
    wc -l) packages) unpacked into $sysroot in $((SECONDS - start)) s"
fi
interpreter=$(readlink -f "$sysroot/usr/bin/python3")
version=$(basename "$interpreter" | sed 's/^python//') # 3.11
[ -x "$interpreter" ] || { echo "check-wheel-aarch64.sh: no python3 in $sysroot" >&2; exit 1; }

# ---- the wheel and its dependencies, for that interpreter ----
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
platforms=(--platform manylinux2014_aarch64)
for minor in $(seq 17 36); do # glibc 2.17 (the first for aarch64) to bookworm's 2.36
  platforms+=(--platform "manylinux_2_${minor}_aarch64")
done
start=$SECONDS
"$python" -m pip install -q --target "$work/site" --only-binary=:all: --implementation cp \
  --python-version "$version" --abi "cp${version/./}" "${platforms[@]}" "$wheel"
echo "check-wheel-aarch64.sh: $(basename "$wheel") and its dependencies" \
  "($(cd "$work/site" && ls -d *.dist-info | sed 's/\.dist-info$//' | paste -sd' '))" \
  "installed for aarch64 Python $version in $((SECONDS - start)) s"

# ---- the graph, under qemu ----
start=$SECONDS
cd "$work"
PYTHONPATH=$work/site PYTHONNOUSERSITE=1 qemu-aarch64-static -L "$sysroot" "$interpreter" \
  "$repo/scripts/check-wheel-graph.py"
echo "check-wheel-aarch64.sh: the graph ran under qemu in $((SECONDS - start)) s"
