#!/bin/sh
# Regenerates the SWIG low layer of the Go binding from the C header:
#   internal/capi/capi.go        (Go side, cgo)
#   internal/capi/cudnnfe_wrap.c (C side, compiled by cgo)
# Both are committed, so building the Go module never needs SWIG.
#
# Usage: bindings/go/generate.sh [OUTDIR]
#   OUTDIR defaults to internal/capi; TestGeneratedUpToDate passes a temporary
#   directory and compares. Needs Debian's `swig` (4.1; other versions emit
#   different text, which the test reports) and gofmt.
#   CUDNNFE_INCLUDE_DIR overrides the header directory (default: the
#   repository's include/), e.g. to generate from the committed header while
#   the working tree holds unfinished changes to it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$here/internal/capi}
mkdir -p "$out"
out=$(cd "$out" && pwd)

SWIG=${SWIG:-swig}
command -v "$SWIG" >/dev/null 2>&1 || { echo "generate.sh: $SWIG not found (apt-get install swig)" >&2; exit 127; }

# Run from the interface's directory with relative paths: SWIG records the
# source path in the output, and the text must not depend on the checkout.
cd "$here/internal/capi"
# -DCUDNNFE_EXPERIMENTAL: the header's experimental part is wrapped too (the
# package compiles its C with the same macro, experimental.go).
"$SWIG" -go -cgo -intgosize 64 -DSWIGWORDSIZE64 -DCUDNNFE_EXPERIMENTAL \
  -I"${CUDNNFE_INCLUDE_DIR:-$repo/include}" \
  -outdir "$out" -o "$out/cudnnfe_wrap.c" \
  cudnnfe.i

# gofmt the Go side (part of the committed text, so it is required); the C
# side is left as SWIG writes it.
GOFMT=$(command -v gofmt || true)
if [ -z "$GOFMT" ] && command -v go >/dev/null 2>&1; then
  GOFMT="$(go env GOROOT)/bin/gofmt"
fi
[ -x "${GOFMT:-}" ] || { echo "generate.sh: gofmt not found (it comes with Go)" >&2; exit 127; }
"$GOFMT" -w "$out/capi.go"
