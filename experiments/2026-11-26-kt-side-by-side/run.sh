#!/usr/bin/env bash
# Kernel Tuner and perfport tune Kernel Tuner's five OpenCL examples (examples/kernel_tuner/)
# on the default OpenCL device (PoCL here), then both bests are re-timed side by side.
# Kernel Tuner is never a perfport dependency: it goes into a throwaway venv (Kernel Tuner
# 1.5.0, pyopencl, pocl-binary-distribution). Sizes and budgets: sizes.json. Writes $OUT.
#   OUT=/tmp/kt-side PY=.venv/bin/python experiments/2026-11-26-kt-side-by-side/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-$here/out}
PY=${PY:-python}  # perfport's interpreter
KTVENV=${KTVENV:-/tmp/ktvenv}
mkdir -p "$OUT"
[ -x "$KTVENV/bin/python" ] || { python3 -m venv "$KTVENV" &&
  "$KTVENV/bin/pip" install -q kernel_tuner==1.5.0 pyopencl pocl-binary-distribution; }
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
rm -f "$OUT/side_by_side.db"
"$KTVENV/bin/python" "$here/kt_tune.py" "$OUT/kt.json" | tee "$OUT/kt.log"
"$PY" "$here/run.py" "$OUT/kt.json" "$OUT/side_by_side.json" | tee "$OUT/side_by_side.log"
