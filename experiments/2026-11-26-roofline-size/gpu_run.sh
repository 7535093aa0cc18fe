#!/usr/bin/env bash
# The size-aware copy ceiling and the default strategy on stencil_wide, on the GPU machine
# (issue 29). After `source experiments/2026-11-26-gpu-session-b/common.sh` (wheels, ICD, $R),
# from the repository root:
#
#   OUT=... bash experiments/2026-11-26-roofline-size/gpu_run.sh      # under 240 s
#
# Per device (DEVICES, default "opencl:0:0 cuda:0"): perfport roofline with the copy curve;
# perfport tune stencil_wide at WIDTHxHEIGHT (4096x4096) with the DEFAULT strategy and budget,
# stopped by --max-time TUNE_TIME (60 s); then compare.py re-times the best found beside a CuPy
# copy of the same bytes, places it against both ceilings, and re-times it at BIGxBIG (16384)
# against the large-array ceiling. Each step runs under timeout, none past DEADLINE (230 s)
# from the start. Outputs under $OUT/roofline-size/: roofline-<dev>.json, tune-<dev>.json,
# compare-<dev>.json, roof.db, run.log.
# KERNEL (stencil_wide) and RUN_NAME (roofline-size, the output folder) reuse it for another
# stencil built-in. Locally on PoCL: DEVICES=opencl:0:0 WIDTH=512 HEIGHT=512 BIG=1024 TUNE_TIME=10 VENDOR_COPY=0
set -uo pipefail
OUT=${OUT:?set OUT}
HERE=$(cd "$(dirname "$0")" && pwd)
KERNEL=${KERNEL:-stencil_wide}
DIR=$OUT/${RUN_NAME:-roofline-size}
PY=${PYTHON:-python3}
DEVICES=${DEVICES:-opencl:0:0 cuda:0}
WIDTH=${WIDTH:-4096} HEIGHT=${HEIGHT:-4096} BIG=${BIG:-16384}
TUNE_TIME=${TUNE_TIME:-60} RECHECK_TIME=${RECHECK_TIME:-10} DEADLINE=${DEADLINE:-230}
VENDOR_COPY=${VENDOR_COPY:-1}
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
mkdir -p "$DIR"
exec 2> >(tee -a "$DIR/run.log" >&2)
# A step's limit: its own, or what is left before the deadline if that is less.
limit() { local left=$((DEADLINE - SECONDS)); echo $(($1 < left ? $1 : (left > 1 ? left : 1))); }

for dev in $DEVICES; do
    tag=${dev//:/_}
    timeout "$(limit 20)" $PY -m perfport roofline --device "$dev" --db "$DIR/roof.db" --json \
        > "$DIR/roofline-$tag.json" || echo "roofline on $dev ended with status $?" >&2
done
for dev in $DEVICES; do
    tag=${dev//:/_}
    # --max-time stops between trials; timeout catches one that never returns.
    timeout "$(limit $((TUNE_TIME + 15)))" $PY -m perfport tune "$KERNEL" \
        --problem width="$WIDTH" height="$HEIGHT" --device "$dev" --max-time "$TUNE_TIME" \
        --db "$DIR/roof.db" --json > "$DIR/tune-$tag.json" || echo "tune on $dev ended with status $?" >&2
    vendor=()
    [ "$VENDOR_COPY" = 1 ] && vendor=(--vendor-copy)
    timeout "$(limit $((2 * RECHECK_TIME + 25)))" $PY "$HERE/compare.py" --kernel "$KERNEL" --tune-json "$DIR/tune-$tag.json" \
        --device "$dev" --db "$DIR/roof.db" --problem width="$WIDTH" height="$HEIGHT" \
        --big width="$BIG" height="$BIG" --time "$RECHECK_TIME" "${vendor[@]}" \
        --out "$DIR/compare-$tag.json" > /dev/null || echo "compare on $dev ended with status $?" >&2
done
echo "gpu_run.sh took $SECONDS s" >&2
