#!/usr/bin/env bash
# A new Rust project that depends on the `cudnnfe` crate (by path), built the
# way a user without CUDA tooling builds it: a PATH holding only cargo, rustc
# and the C toolchain Rust links with (cc, as, ld, ar) -- no CMake, no C++
# compiler, no libcudnnfe. It then runs a CPU-reference graph with
# CUDNNFE_LIBRARY pointing at a built library. Prints the build time.
#
#   bindings/rust/check-fresh-project.sh LIBCUDNNFE_SO
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lib=${1:?usage: check-fresh-project.sh LIBCUDNNFE_SO}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/fresh/src"
for tool in cargo rustc cc as ld ar; do
  ln -s "$(command -v "$tool")" "$work/bin/$tool"
done
cat >"$work/fresh/Cargo.toml" <<TOML
[package]
name = "fresh"
version = "0.1.0"
edition = "2021"

[dependencies]
cudnnfe = { path = "$here/cudnnfe" }
TOML
cp "$here/fresh-project/main.rs.txt" "$work/fresh/src/main.rs"
cd "$work/fresh"
start=$(date +%s.%N)
env -i HOME="$HOME" PATH="$work/bin" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" \
  RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_TARGET_DIR="$work/target" \
  cargo build -q --offline -j "${JOBS:-2}"
end=$(date +%s.%N)
CUDNNFE_LIBRARY="$lib" "$work/target/debug/fresh" | tee "$work/out.txt"
grep -q 'fresh project: \[2.0, 4.0, 6.0, 8.0\]' "$work/out.txt"
awk -v s="$start" -v e="$end" 'BEGIN { printf "first cargo build of a new project: %.1f s (no CMake, no C++ compiler)\n", e - s }'
echo "test result: ok. 1 passed; 0 failed; (a new project, run-time loading)"
