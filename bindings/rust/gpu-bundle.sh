#!/bin/sh
# Builds every test binary and example of the workspace and gathers them, with
# libcudnnfe.so.0, in one directory that runs on another machine (the GPU
# machine) without Rust, cargo or LD_LIBRARY_PATH: the binaries carry
# `$ORIGIN` in their rpath, so they find the library copied next to them.
#
#   bindings/rust/gpu-bundle.sh [OUT_DIR]     (default: target/gpu-bundle)
#   OUT_DIR/run-all.sh                        run everything there
#
# Environment: CARGO_FLAGS (default "--release -j 2 --features cudnnfe-sys/link").
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/target/gpu-bundle"}
# Linked (feature link), so that the binaries find the library copied beside them.
flags=${CARGO_FLAGS:-"--release -j 2 --features cudnnfe-sys/link"}
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

{
  echo '#!/bin/sh'
  echo '# Runs every bundled test binary, then each example (on the GPU when there is one); exits 1 if any failed.'
  echo 'cd "$(dirname "$0")"'
  echo 'failed=""'
  echo 'step() { echo "== $*"; "$@" || failed="$failed $1"; }'
} >"$out/run-all.sh"
while read -r exe; do
  name=$(basename "$exe")
  cp "$exe" "$out/$name"
  case "$exe" in
    */examples/*) echo "step ./$name" >>"$out/run-all.sh" ;;
    *) echo "step ./$name --test-threads=4" >>"$out/run-all.sh" ;;
  esac
done <"$out/.executables"
{
  echo 'if [ -n "$failed" ]; then echo "FAILED:$failed"; exit 1; fi'
  echo 'echo "all passed"'
} >>"$out/run-all.sh"
chmod +x "$out/run-all.sh"
rm -f "$out/.build.json" "$out/.executables"
du -sh "$out"
ls "$out"
