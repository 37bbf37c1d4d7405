#!/usr/bin/env bash
# Runs every generator after a change to include/cudnnfe/cudnnfe.h, in
# order: the ABI manifest first (the model the Julia, Go-options and
# Rust-options generators read), then the generated layers of each binding,
# then the documentation site's C ABI reference.
# It changes no hand-written file. Needs python3 with pycparser, swig and
# gofmt (Go), bindgen (Rust); then run each binding's tests (.ci/run).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
python3 scripts/gen_abi_manifest.py
python3 bindings/julia/gen/generate.py
python3 bindings/go/gen_options.py
python3 bindings/go/gen_loader.py
python3 bindings/rust/gen_options.py
python3 bindings/python/tools/gen_cdef.py
sh bindings/go/generate.sh
sh bindings/rust/cudnnfe-sys/generate.sh
# The documentation site's C ABI reference (docs/reference/c-api.md).
python3 scripts/gen_c_api_docs.py
