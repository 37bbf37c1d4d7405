#!/usr/bin/env bash
# Builds a tiny outside project against an installed cudnnfe, once through
# CMake's find_package and once through pkg-config, and runs both.
set -euo pipefail
prefix=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/main.c" <<'C'
#include <cudnnfe/cudnnfe.h>
#include <stdio.h>
int main(void) {
  cudnnfe_graph_t *g;
  if (cudnnfe_graph_create(&g) != CUDNNFE_STATUS_OK) return 1;
  printf("cudnnfe %u from an outside project\n", cudnnfe_version());
  return cudnnfe_graph_destroy(g) == CUDNNFE_STATUS_OK ? 0 : 1;
}
C
cat > "$work/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.18)
project(outside C)
find_package(cudnnfe REQUIRED)
add_executable(outside main.c)
target_link_libraries(outside PRIVATE cudnnfe::cudnnfe)
add_executable(outside_static main.c)
target_link_libraries(outside_static PRIVATE cudnnfe::cudnnfe_static)
C
cmake -S "$work" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/build" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$work/build/outside"
"$work/build/outside_static"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc "$work/main.c" -o "$work/pc" \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs cudnnfe)
LD_LIBRARY_PATH="$prefix/lib" "$work/pc"
echo "checked 3 programs: find_package (shared, static) and pkg-config OK"
