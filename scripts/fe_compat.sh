#!/usr/bin/env bash
# Runs NVIDIA cudnn-frontend's own Python samples and its L0 test suite against cudnnfe and,
# when it is importable, against cudnn-frontend itself, on one GPU machine, and prints a
# per-file table side by side. It does not build cudnnfe or install cudnn-frontend.
#
# usage: scripts/fe_compat.sh FE_SOURCE [OUTDIR]
#   FE_SOURCE  a cudnn-frontend checkout or bare git dir (the public NVIDIA/cudnn-frontend)
#   OUTDIR     logs and the table (default: build/fe-compat)
# environment:
#   CUDNNFE_LIBRARY  libcudnnfe.so to test (default: build/libcudnnfe.so)
#   FE_PYTHONPATH    where `import cudnn` finds cudnn-frontend (e.g. a pip --target dir of the
#                    nvidia-cudnn-frontend wheel plus looseversion); unset: the environment's
#   CORPUS           where the corpus is laid out (default: .fe, git-ignored); never commit it:
#                    it is NVIDIA's code, a measuring instrument, not part of cudnnfe
#   JOBS (6), TIMEOUT per file in seconds (300), SAMPLE_TIMEOUT (200)
# The corpus needs torch and pytest (and looseversion) in the Python that runs it.
set -euo pipefail
src=${1:?usage: scripts/fe_compat.sh FE_SOURCE [OUTDIR]}
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${2:-$repo/build/fe-compat}" && cd "${2:-$repo/build/fe-compat}" && pwd)
corpus=${CORPUS:-$repo/.fe}
lib=${CUDNNFE_LIBRARY:-$repo/build/libcudnnfe.so}
jobs=${JOBS:-6}
timeout_s=${TIMEOUT:-300}
sample_timeout_s=${SAMPLE_TIMEOUT:-200}
report="$repo/scripts/fe_compat_report.py"

prepare_corpus() {
  rm -rf "$corpus" && mkdir -p "$corpus"
  # A bare mirror or the top of a clone: read HEAD; any other folder (a plain copy, or a
  # folder inside another repository) is copied as it is.
  if [ "$(git -C "$src" rev-parse --is-bare-repository 2>/dev/null)" = true ] || [ -e "$src/.git" ]; then
    git -C "$src" archive HEAD test/python samples/python | tar -x -C "$corpus"
  else
    mkdir -p "$corpus/test" "$corpus/samples"
    cp -r "$src/test/python" "$corpus/test/" && cp -r "$src/samples/python" "$corpus/samples/"
  fi
  python3 "$report" notebooks "$corpus/samples/python" "$corpus/samples_py"
  # `import cudnn` resolves to cudnnfe through this shim, so the corpus runs unchanged.
  mkdir -p "$corpus/shim/cudnn"
  printf 'import sys\nimport cudnnfe as _impl\nsys.modules[__name__] = _impl\n' \
    > "$corpus/shim/cudnn/__init__.py"
}

run_samples() {  # label pythonpath
  local dir="$out/samples_$1"
  mkdir -p "$dir" && : > "$dir/rc.txt"
  (cd "$corpus/samples_py" && ls *.py | PYTHONPATH=$2 xargs -P "$jobs" -I{} sh -c \
    "timeout $sample_timeout_s python3 {} > '$dir/{}.log' 2>&1; echo \"{} \$?\" >> '$dir/rc.txt'")
}

run_suite() {  # label pythonpath
  local dir="$out/suite_$1"
  mkdir -p "$dir" && : > "$dir/rc.txt"
  (cd "$corpus/test/python" && ls test_*.py | PYTHONPATH=$2 xargs -P "$jobs" -I{} sh -c \
    "timeout $timeout_s python3 -m pytest -q -m L0 -p no:cacheprovider -rA {} > '$dir/{}.log' 2>&1; echo \"{} \$?\" >> '$dir/rc.txt'")
}

fe_importable() {  # true when `import cudnn` is cudnn-frontend, not the shim
  PYTHONPATH=${FE_PYTHONPATH:-${PYTHONPATH:-}} python3 -c \
    'import cudnn, sys; sys.exit("cudnnfe" in (getattr(cudnn, "__file__", "") or ""))' \
    >/dev/null 2>&1
}

git_exclude=$(git -C "$repo" rev-parse --git-path info/exclude 2>/dev/null || true)
if [ -n "$git_exclude" ] && [ "${corpus#"$repo"/}" != "$corpus" ]; then
  mkdir -p "$(dirname "$git_exclude")"
  grep -qxF "/${corpus#"$repo"/}/" "$git_exclude" 2>/dev/null || echo "/${corpus#"$repo"/}/" >> "$git_exclude"
fi
prepare_corpus
echo "corpus: $(ls "$corpus"/test/python/test_*.py | wc -l) test files, $(ls "$corpus"/samples_py | wc -l) samples in $corpus"

export CUDNNFE_LIBRARY=$lib
labels=(cudnnfe)
run_samples cudnnfe "$corpus/shim:$repo/bindings/python"
run_suite cudnnfe "$corpus/shim:$repo/bindings/python"
if fe_importable; then
  labels+=(cudnn-frontend)
  run_samples cudnn-frontend "${FE_PYTHONPATH:-${PYTHONPATH:-}}"
  run_suite cudnn-frontend "${FE_PYTHONPATH:-${PYTHONPATH:-}}"
else
  echo "cudnn-frontend is not importable (set FE_PYTHONPATH): its column stays empty"
fi
python3 "$report" table "$out" "${labels[@]}" | tee "$out/table.txt"
