#!/usr/bin/env bash
# Runs cudnn-frontend's attention suites on one GPU with cudnnfe and with cudnn-frontend side
# by side (every piece of both at once, JOBS pytest-xdist workers each): test_mhas_v2.py whole and
# test_mhas.py in 1/SAMPLE_EVERY slices (../shared/fe-compat/sample_every.py; Python's random
# seeded per test by scripts/fe_seed_random.py so that both draw the same shapes), or any other
# L0 files given as whole pieces; then prints scripts/fe_suite_diff.py's table.
#
# usage: scripts/fe_attention_suites.sh CORPUS OUTDIR [PIECE...]
#   CORPUS   a folder laid out by ../shared/fe-compat/prepare.sh (test/python, shim,
#            sample_every.py); never commit it
#   PIECE    FILE (a test file run whole) or FILE@K (slice K of test_mhas.py-like files);
#            default: test_mhas_v2.py test_mhas.py@0
# environment: FE_PYTHONPATH (where `import cudnn` is cudnn-frontend; required; PYTHONPATH
#   follows both implementations' own paths, e.g. for cffi),
#   CUDNNFE_LIBRARY (default build/libcudnnfe.so), JOBS (6), SAMPLE_EVERY (10),
#   TIMEOUT per piece in seconds (480), IMPLS (which to run: "cudnnfe fe"; the table reads
#   whatever OUTDIR holds). A piece cut off by TIMEOUT is NOT MEASURED.
set -uo pipefail
corpus=$(cd "${1:?usage: fe_attention_suites.sh CORPUS OUTDIR [PIECE...]}" && pwd)
out=$(mkdir -p "${2:?}" && cd "$2" && pwd)
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] && pieces=("$@") || pieces=(test_mhas_v2.py test_mhas.py@0)
jobs=${JOBS:-6}
every=${SAMPLE_EVERY:-10}
limit=${TIMEOUT:-480}
export CUDNNFE_LIBRARY=${CUDNNFE_LIBRARY:-$repo/build/libcudnnfe.so}
: "${FE_PYTHONPATH:?set FE_PYTHONPATH to where cudnn-frontend is importable}"

run_piece() {  # impl pythonpath piece
  local impl=$1 path=$2 piece=$3 file=${3%@*} name=${3%.py*}
  local offset=0 sample=1
  if [[ $piece == *@* ]]; then offset=${piece#*@} sample=$every name=${name}_slice$offset; fi
  mkdir -p "$out/$impl"
  (cd "$corpus/test/python" &&
    SAMPLE_EVERY=$sample SAMPLE_OFFSET=$offset \
      PYTHONPATH="$path:$corpus:$repo/scripts:${PYTHONPATH:-}" timeout "$limit" \
      python3 -m pytest -q -m L0 -p sample_every -p fe_seed_random -p no:cacheprovider \
      -n "$jobs" --tb=line -rfE --junitxml="$out/$impl/$name.xml" "$file" \
      >"$out/$impl/$name.log" 2>&1
    echo $? >"$out/$impl/$name.rc")
}

impls=" ${IMPLS:-cudnnfe fe} "
for piece in "${pieces[@]}"; do
  [[ $impls == *" cudnnfe "* ]] && run_piece cudnnfe "$corpus/shim:$repo/bindings/python" "$piece" &
  [[ $impls == *" fe "* ]] && run_piece fe "$FE_PYTHONPATH" "$piece" &
done
wait
python3 "$repo/scripts/fe_suite_diff.py" "$out" | tee "$out/table.txt"
