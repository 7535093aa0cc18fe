#!/usr/bin/env bash
# matmul_tiled with vector reads of the local tiles (lvw=4) against today's winner (lvw=1) and
# cuBLAS SGEMM in one run. From the repository root, with .whl carried:
#
#   source experiments/2026-11-26-gpu-session-b/common.sh
#   experiments/2026-11-26-matmul-tiled-b/gpu_run.sh; finish
#
# Per device (DEVICES, default "opencl:0:0 cuda:0"): the baseline alone (<= 27 s), then the
# ordered lvw=4 focus list (--max-time FOCUS_TIME, default 40 s, killed at +15 s); then cuBLAS
# (<= 30 s): at most 194 s for two devices. Results in $R/matmul-b/: the tune reports,
# databases, cublas.json and summary.json (each device's best, cuBLAS ms, the fraction).
# On PoCL: M=256 N=256 K=256 DEVICES=opencl:0:0 OUT=/tmp/x (no CuPy: cuBLAS is skipped).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
R=${R:-${OUT:?set OUT or source common.sh}/r}
D=$R/matmul-b
mkdir -p "$D"
DEVICES=${DEVICES:-"opencl:0:0 cuda:0"}
M=${M:-4096} N=${N:-4096} K=${K:-4096}
FOCUS_TIME=${FOCUS_TIME:-40}
PY=${PYTHON:-python3}
$PY "$HERE/matmul_b.py" configs "$D"
for dev in $DEVICES; do
    tag=${dev//:/_}
    for what in baseline focus; do
        max=$([ $what = baseline ] && echo 12 || echo "$FOCUS_TIME")
        timeout $((max + 15)) $PY -m perfport tune matmul_tiled --problem M=$M N=$N K=$K \
            --device "$dev" --configs "$D/$what.json" --max-time "$max" \
            --db "$D/$what-$tag.db" --json > "$D/tune-$what-$tag.json" 2> "$D/tune-$what-$tag.err" \
            || echo "tune $what on $dev ended with status $?" >&2
    done
done
timeout 30 $PY "$HERE/matmul_b.py" cublas "$M" "$N" "$K" > "$D/cublas.json" 2> "$D/cublas.err" \
    || echo "cuBLAS timing ended with status $?" >&2
$PY "$HERE/matmul_b.py" summary "$D"
