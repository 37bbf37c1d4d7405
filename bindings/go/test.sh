#!/usr/bin/env bash
# The Go module's checks, as .ci/run runs them: gofmt, go vet and
# go test -race for the module, then vet and run the examples. Needs Go
# (Debian golang-go, 1.19+), gcc, and libcudnnfe built as a shared library:
# $CUDNNFE_BUILD_DIR (default: the repository's build/). SWIG (Debian swig)
# is needed only for the staleness check of the generated layer, which
# skips without it unless CI=true.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${CUDNNFE_BUILD_DIR:-$repo/build}
if [ ! -e "$build/libcudnnfe.so" ]; then
  echo "test.sh: $build/libcudnnfe.so not found: build the library, or set CUDNNFE_BUILD_DIR" >&2
  exit 1
fi

export CGO_ENABLED=1
# CUDNNFE_INCLUDE_DIR: another header directory (generate.sh and the
# tests read it too).
export CGO_CFLAGS="-I${CUDNNFE_INCLUDE_DIR:-$repo/include}${CGO_CFLAGS:+ $CGO_CFLAGS}"
export CGO_LDFLAGS="-L$build -Wl,-rpath,$build${CGO_LDFLAGS:+ $CGO_LDFLAGS}"
# The module has no dependencies: never ask a module proxy.
export GOFLAGS=${GOFLAGS:--mod=mod}
export GOPROXY=${GOPROXY:-off}
go version

cd "$here"
unformatted=$(gofmt -l . "$repo/examples/go")
if [ -n "$unformatted" ]; then
  echo "gofmt -l reports:"; echo "$unformatted"; exit 1
fi
go vet ./...
# -v for the counts: the full log goes to a file, the terminal gets the
# failures, the skips with their reasons, and one "N passed, M failed" line.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
go test -race -p 2 -count=1 -v ./... >"$log" 2>&1 || status=$?
grep -E '^(ok|FAIL|panic:)|--- (FAIL|SKIP)' -A1 "$log" | grep -vE -- '^(=== |--$)|--- PASS' || true
passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
echo "go test: $passed passed, $failed failed, $skipped skipped"
[ "$status" = 0 ] || { grep -vE -- '^\s*--- PASS|^=== ' "$log" | tail -80; exit "$status"; }

cd "$repo/examples/go"
go vet ./...
go run ./matmul_bias
go run ./sdpa

# A new module, as a user starts one: a replace directive, no CGO variables,
# no rpath; the library comes from CUDNNFE_LIBRARY at run time.
fresh=$(mktemp -d)
trap 'rm -rf "$log" "$fresh"' EXIT
printf 'module example.com/fresh\n\ngo 1.19\n\nrequire github.com/cudnnfe/cudnnfe/bindings/go v0.0.0\n\nreplace github.com/cudnnfe/cudnnfe/bindings/go => %s\n' "$here" >"$fresh/go.mod"
cp "$here/testdata/fresh/main.go.txt" "$fresh/main.go"
(cd "$fresh" && env -u CGO_CFLAGS -u CGO_LDFLAGS go build -o fresh . &&
  CUDNNFE_LIBRARY="$build/libcudnnfe.so.0" ./fresh) | tee "$fresh/out.txt"
grep -q 'fresh module: \[2 4 6 8\]' "$fresh/out.txt"
echo "go test: 1 passed, 0 failed (a new module, built with no CGO variables)"
