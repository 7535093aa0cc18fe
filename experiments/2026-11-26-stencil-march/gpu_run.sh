#!/usr/bin/env bash
# stencil_wide's march variant against the earlier best (direct) at 4096x4096 float, and a
# copy of the same bytes, on the GPU machine (issue 29). After
# `source experiments/2026-11-26-gpu-session-b/common.sh` (wheels, ICD, $R), from the
# repository root:
#
#   OUT=... bash experiments/2026-11-26-stencil-march/gpu_run.sh      # under 200 s
#
# Per device (DEVICES, default "opencl:0:0 cuda:0"), each step across all devices before the
# next, so that a deadline cut takes the last comparison and not a measurement:
#  1. perfport roofline into roof.db (the ceilings, copied into the next steps' databases);
#  2. perfport tune --configs: configs.py's ordered list (the earlier best, direct rows=2 vw=4
#     at 96x4 and 32x4, then march vector vw 4/8 rows 4..32 at 12 shapes), ORDER_TIME (15 s);
#  3. perfport tune with the DEFAULT strategy and budget for TUNE_TIME (45 s), cold: its own
#     database, with no other device's results or the ordered list as a prior;
#  4. summary.py --pick takes the faster best of 2 and 3; the roofline-size experiment's
#     compare.py re-times it beside a CuPy copy of the same bytes and against both ceilings at
#     WIDTHxHEIGHT and BIGxBIG (16384).
# Each step runs under timeout, none past DEADLINE (195 s) from the start. Outputs under
# $OUT/stencil-march/; summary.py prints one line per device into summary.txt.
# Locally on PoCL: DEVICES=opencl:0:0 WIDTH=512 HEIGHT=512 BIG=1024 ORDER_TIME=20 TUNE_TIME=10
#   RECHECK_TIME=5 VENDOR_COPY=0 BUILD_JOBS=2
set -uo pipefail
OUT=${OUT:?set OUT}
HERE=$(cd "$(dirname "$0")" && pwd)
COMPARE=$HERE/../2026-11-26-roofline-size/compare.py
DIR=$OUT/stencil-march
PY=${PYTHON:-python3}
DEVICES=${DEVICES:-opencl:0:0 cuda:0}
WIDTH=${WIDTH:-4096} HEIGHT=${HEIGHT:-4096} BIG=${BIG:-16384}
ORDER_TIME=${ORDER_TIME:-15} TUNE_TIME=${TUNE_TIME:-45} RECHECK_TIME=${RECHECK_TIME:-5}
DEADLINE=${DEADLINE:-195} BUILD_JOBS=${BUILD_JOBS:-8} VENDOR_COPY=${VENDOR_COPY:-1}
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
mkdir -p "$DIR"
exec 2> >(tee -a "$DIR/run.log" >&2)
# A step's limit: its own, or what is left before the deadline if that is less.
limit() { local left=$((DEADLINE - SECONDS)); echo $(($1 < left ? $1 : (left > 1 ? left : 1))); }
problem=(--problem width="$WIDTH" height="$HEIGHT")

for dev in $DEVICES; do
    tag=${dev//:/_}
    timeout "$(limit 20)" $PY -m perfport roofline --device "$dev" --db "$DIR/roof.db" --json \
        > "$DIR/roofline-$tag.json" || echo "roofline on $dev ended with status $?" >&2
done
for dev in $DEVICES; do
    tag=${dev//:/_}
    for step in ordered tune; do
        [ -e "$DIR/roof.db" ] && cp "$DIR/roof.db" "$DIR/$step-$tag.db"
    done
    $PY "$HERE/configs.py" --device "$dev" "${problem[@]}" --out "$DIR/configs-$tag.json"
    count=$($PY -c "import json, sys; print(len(json.load(open(sys.argv[1]))))" "$DIR/configs-$tag.json")
    # --max-time stops between trials; timeout catches one that never returns.
    timeout "$(limit $((ORDER_TIME + 20)))" $PY -m perfport tune stencil_wide "${problem[@]}" \
        --device "$dev" --configs "$DIR/configs-$tag.json" --budget "$count" \
        --max-time "$ORDER_TIME" --build-jobs "$BUILD_JOBS" --confirm-seconds 3 \
        --db "$DIR/ordered-$tag.db" --json > "$DIR/ordered-$tag.json" ||
        echo "ordered list on $dev ended with status $?" >&2
done
for dev in $DEVICES; do
    tag=${dev//:/_}
    timeout "$(limit $((TUNE_TIME + 20)))" $PY -m perfport tune stencil_wide "${problem[@]}" \
        --device "$dev" --max-time "$TUNE_TIME" --confirm-seconds 3 \
        --db "$DIR/tune-$tag.db" --json > "$DIR/tune-$tag.json" ||
        echo "tune on $dev ended with status $?" >&2
done
for dev in $DEVICES; do
    tag=${dev//:/_}
    $PY "$HERE/summary.py" "$DIR" --pick "$tag" || continue
    vendor=()
    [ "$VENDOR_COPY" = 1 ] && vendor=(--vendor-copy)
    timeout "$(limit $((2 * RECHECK_TIME + 25)))" $PY "$COMPARE" --tune-json "$DIR/best-$tag.json" \
        --device "$dev" --db "$DIR/roof.db" "${problem[@]}" --big width="$BIG" height="$BIG" \
        --time "$RECHECK_TIME" "${vendor[@]}" --out "$DIR/compare-$tag.json" > /dev/null ||
        echo "compare on $dev ended with status $?" >&2
done
$PY "$HERE/summary.py" "$DIR" | tee "$DIR/summary.txt"
echo "gpu_run.sh took $SECONDS s" >&2
