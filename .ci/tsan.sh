#!/usr/bin/env bash
# ThreadSanitizer over the concurrency tests (tests/test_threads.cpp: one
# built graph executed from many threads, concurrent builds, per-handle
# errors, create/destroy races) on the CPU reference. Builds only the
# library and that test in its own directory (build-tsan); any race report
# fails the step.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/setup.sh
tsan_flags="-fsanitize=thread -fno-omit-frame-pointer -g -O1"
cudnnfe_configure build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDNNFE_BUILD_EXAMPLES=OFF \
  -DCUDNNFE_BUILD_BENCH=OFF "-DCMAKE_CXX_FLAGS=$tsan_flags" "-DCMAKE_C_FLAGS=$tsan_flags" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
cmake --build build-tsan -j"${jobs:-2}" --target test_threads
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  ctest --test-dir build-tsan -R '^test_threads$' --output-on-failure
bash "$(dirname "$0")/ctest_cases.sh" build-tsan
