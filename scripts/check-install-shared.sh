#!/usr/bin/env bash
# `cmake --install` of a build that made the shared library alone (as pip and
# the Rust crate's build script do), then three consumers of the install,
# each run with no LD_LIBRARY_PATH: a CMake project (find_package; the
# static target must be absent), a C program built with pkg-config's flags,
# and a Go program built with -tags cudnnfe_pkgconfig in a fresh GOPATH.
#
#   scripts/check-install-shared.sh [BUILD_DIR]   (default: build-wheel/x86_64/,
#                                                  made by scripts/build-wheel.sh)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build-wheel/x86_64}" && pwd)
[ -e "$build/libcudnnfe.so" ] || { echo "no libcudnnfe.so in $build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
# Without the archive, whatever the build directory holds.
if [ -e "$build/libcudnnfe.a" ]; then
  echo "$build has libcudnnfe.a; this check wants a shared-only build" >&2
  exit 1
fi
cmake --install "$build" --prefix "$prefix" >/dev/null
unset LD_LIBRARY_PATH CGO_CFLAGS CGO_LDFLAGS
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig # only because $prefix is not /usr/local

cat >"$work/main.c" <<'C'
#include <cudnnfe/cudnnfe.h>
#include <stdio.h>
int main(void) {
  cudnnfe_library_info_t info;
  cudnnfe_library_info_init(&info);
  if (cudnnfe_library_info(&info) != CUDNNFE_STATUS_OK) return 1;
  printf("cudnnfe %u from %s\n", cudnnfe_version(), info.cudnnfe_path);
  return 0;
}
C
mkdir "$work/cmake"
cat >"$work/cmake/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.18)
project(outside C)
find_package(cudnnfe REQUIRED)
if(TARGET cudnnfe::cudnnfe_static)
  message(FATAL_ERROR "cudnnfe::cudnnfe_static is defined but no libcudnnfe.a was installed")
endif()
add_executable(outside ../main.c)
target_link_libraries(outside PRIVATE cudnnfe::cudnnfe)
C
cmake -S "$work/cmake" -B "$work/cmake/b" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake/b" >/dev/null
"$work/cmake/b/outside"
# shellcheck disable=SC2046
cc "$work/main.c" -o "$work/pc" $(pkg-config --cflags --libs cudnnfe)
"$work/pc"

mkdir "$work/go"
cat >"$work/go/go.mod" <<EOF2
module example.com/outside

go 1.19

require github.com/cudnnfe/cudnnfe/bindings/go v0.0.0

replace github.com/cudnnfe/cudnnfe/bindings/go => $repo/bindings/go
EOF2
cat >"$work/go/main.go" <<'GO'
package main

import (
	"fmt"

	cudnnfe "github.com/cudnnfe/cudnnfe/bindings/go"
)

func main() {
	info, err := cudnnfe.GetLibraryInfo()
	if err != nil {
		panic(err)
	}
	fmt.Printf("cudnnfe %d from %s (Go, pkg-config)\n", cudnnfe.Version(), info.CudnnfePath)
}
GO
(cd "$work/go" && GOPATH=$work/gopath GOCACHE=$work/gocache GOFLAGS=-mod=mod GOPROXY=off \
  go build -tags cudnnfe_pkgconfig -o outside . && ./outside)
echo "checked 3 programs: find_package (shared only), pkg-config (cc), pkg-config (Go); no LD_LIBRARY_PATH"
