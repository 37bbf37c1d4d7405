#!/bin/sh
# Builds every test binary and example of the workspace and gathers them, with
# libcudnnfe.so.0, in one directory that runs on another machine (the GPU
# machine) without Rust, cargo or LD_LIBRARY_PATH: the binaries carry
# `$ORIGIN` in their rpath, so they find the library copied next to them.
#
#   bindings/rust/gpu-bundle.sh [OUT_DIR]     (default: target/gpu-bundle)
#   OUT_DIR/run-all.sh                        run everything there
#   OUT_DIR/run-cudarc.sh                     only feature cudarc's example and GPU test
#
# With feature cudnnfe/cudarc, so the bundle also holds the cudarc example
# (cudarc_sdpa) and GPU test (cudarc_gpu-<hash>); they load libcuda.so.1
# (the driver) at run time, nothing else of CUDA's.
#
# Environment: CARGO_FLAGS (default "--release -j 2 --features cudnnfe-sys/link,cudnnfe/cudarc").
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/target/gpu-bundle"}
# Linked (feature link), so that the binaries find the library copied beside them.
flags=${CARGO_FLAGS:-"--release -j 2 --features cudnnfe-sys/link,cudnnfe/cudarc"}
cd "$here"

rm -rf "$out"
mkdir -p "$out"
# shellcheck disable=SC2086
cargo test $flags --workspace --no-run --message-format=json >"$out/.build.json"
# shellcheck disable=SC2086
cargo build $flags --workspace --examples --message-format=json >>"$out/.build.json"

# Executables: test harnesses (deps/<name>-<hash>) and examples.
grep -o '"executable":"[^"]*"' "$out/.build.json" | sed 's/^"executable":"//; s/"$//' | sort -u >"$out/.executables"
# The library the build linked (cudnnfe-sys's build script says where).
lib_dir=$(grep '"build-script-executed"' "$out/.build.json" | grep 'cudnnfe-sys' | grep -o '"linked_paths":\["native=[^"]*"' | head -n1 | sed 's/.*native=//; s/"$//')
if [ -z "$lib_dir" ]; then
  # Build scripts' metadata is not in the JSON: read the newest output file.
  profile=$(echo "$flags" | grep -q -- --release && echo release || echo debug)
  lib_dir=$(ls -t target/$profile/build/cudnnfe-sys-*/output 2>/dev/null | head -n1 | xargs grep -h '^cargo:lib_dir=' | sed 's/^cargo:lib_dir=//')
fi
[ -n "$lib_dir" ] || { echo "gpu-bundle.sh: cannot tell where libcudnnfe is" >&2; exit 1; }
cp -L "$lib_dir/libcudnnfe.so.0" "$out/"

# header SCRIPT DESCRIPTION: the start of a run script in the bundle.
header() {
  {
    echo '#!/bin/sh'
    echo "# $2"
    echo 'cd "$(dirname "$0")"'
    echo 'failed=""'
    echo 'step() { echo "== $*"; "$@" || failed="$failed $1"; }'
  } >"$out/$1"
}
header run-all.sh 'Runs every bundled test binary, then each example (on the GPU when there is one); exits 1 if any failed.'
header run-cudarc.sh "Runs feature cudarc's example and GPU test; exits 1 if either failed."
while read -r exe; do
  name=$(basename "$exe")
  cp "$exe" "$out/$name"
  case "$exe" in
    */examples/*) step="step ./$name" ;;
    *) step="step ./$name --test-threads=4" ;;
  esac
  echo "$step" >>"$out/run-all.sh"
  case "$name" in
    cudarc_*) echo "$step" >>"$out/run-cudarc.sh" ;;
  esac
done <"$out/.executables"
grep -q '^step' "$out/run-cudarc.sh" ||
  echo 'echo "built without feature cudnnfe/cudarc: nothing to run"; exit 1' >>"$out/run-cudarc.sh"
for script in run-all.sh run-cudarc.sh; do
  {
    echo 'if [ -n "$failed" ]; then echo "FAILED:$failed"; exit 1; fi'
    echo 'echo "all passed"'
  } >>"$out/$script"
  chmod +x "$out/$script"
done
rm -f "$out/.build.json" "$out/.executables"
du -sh "$out"
ls "$out"
