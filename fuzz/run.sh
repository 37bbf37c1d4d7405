#!/usr/bin/env bash
# Builds the fuzz targets with clang (libFuzzer + ASan + UBSan) and runs each
# for a bounded time: the two deserializers share the first argument's
# seconds (default 60) over their seed corpora; the C ABI call-sequence
# fuzzer (fuzz/c_abi_fuzz.cpp) runs for the second argument's (default 75)
# from its seeds (fuzz/abi_corpus: small graphs built and executed) and
# prints how many cases and API calls it ran.
# Any sanitizer report (UBSan included) stops the run and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
abi_seconds=${2:-75}
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found"; exit 1; }
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCMAKE_BUILD_TYPE=Debug -DCUDNNFE_FUZZ=ON -DCUDNNFE_BUILD_TESTS=OFF \
  -DCUDNNFE_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-fuzz -j2 --target graph_json_fuzz plan_blob_fuzz c_abi_fuzz
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Each deserializer gets half the time, over a copy of its seed corpus.
for target in graph_json:corpus plan_blob:plan_corpus; do
  name=${target%%:*}
  corpus=${target##*:}
  rm -rf "build-fuzz/$corpus" && mkdir -p "build-fuzz/$corpus"
  cp fuzz/"$corpus"/* "build-fuzz/$corpus/"
  echo "== ${name}_fuzz"
  ./build-fuzz/"${name}"_fuzz -max_total_time=$((seconds / 2)) -max_len=16384 -rss_limit_mb=2048 \
    -print_final_stats=1 "build-fuzz/$corpus" 2>&1 | tail -6
done
echo "== c_abi_fuzz"
rm -rf build-fuzz/abi_corpus && mkdir -p build-fuzz/abi_corpus
cp fuzz/abi_corpus/* build-fuzz/abi_corpus/
if ./build-fuzz/c_abi_fuzz -max_total_time="$abi_seconds" -max_len=1024 -rss_limit_mb=2048 \
  -timeout=20 -artifact_prefix=build-fuzz/ -print_final_stats=1 build-fuzz/abi_corpus >build-fuzz/c_abi_fuzz.log 2>&1; then
  tail -4 build-fuzz/c_abi_fuzz.log
else
  tail -60 build-fuzz/c_abi_fuzz.log
  exit 1
fi
