#!/usr/bin/env bash
# Builds the deserializer fuzz target with clang (libFuzzer + ASan + UBSan)
# and runs it for a bounded time (default 60 s) over the seed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found"; exit 1; }
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCMAKE_BUILD_TYPE=Debug -DCUDNNFE_FUZZ=ON -DCUDNNFE_BUILD_TESTS=OFF \
  -DCUDNNFE_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-fuzz -j2 --target graph_json_fuzz plan_blob_fuzz
# Each target gets half the time, over a copy of its seed corpus.
for target in graph_json:corpus plan_blob:plan_corpus; do
  name=${target%%:*}
  corpus=${target##*:}
  rm -rf "build-fuzz/$corpus" && mkdir -p "build-fuzz/$corpus"
  cp fuzz/"$corpus"/* "build-fuzz/$corpus/"
  echo "== ${name}_fuzz"
  ./build-fuzz/"${name}"_fuzz -max_total_time=$((seconds / 2)) -max_len=16384 -rss_limit_mb=2048 \
    -print_final_stats=1 "build-fuzz/$corpus" 2>&1 | tail -6
done
