#!/usr/bin/env bash
# Issue 29: convolution_wide at its memory-bound sizes (n = 2^24 float, masks 3, 7, 17) against
# a copy of the same bytes (`perfport roofline`'s size ladder), found by the DEFAULT strategy.
# After `source experiments/2026-11-26-gpu-session-b/common.sh`, from the repository root:
#
#   OUT=... bash experiments/2026-11-26-conv-same-bytes/gpu_run.sh      # about 110 s
#
# The two back ends run side by side on the two GPUs of nvidia-h200-x2 (NVIDIA OpenCL on the
# first, CUDA on the second), each against its own GPU's ceilings: per device `perfport
# roofline`, then per mask `perfport tune convolution_wide` for TUNE_TIME (30 s) in one
# database, cold (no prior results of this kernel). The tune JSON's `roofline_same_bytes` is
# the best configuration's fraction of a copy of the same bytes; summary.py tabulates it.
# Locally on PoCL: DEVICES=opencl:0:0 N=65536 TUNE_TIME=5
set -uo pipefail
OUT=${OUT:?set OUT}
DIR=$OUT/conv-same-bytes
DEVICES=${DEVICES:-opencl:0:0 cuda:1}
N=${N:-16777216} TUNE_TIME=${TUNE_TIME:-30} MASKS=${MASKS:-3 7 17}
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
mkdir -p "$DIR/logs"
one() {  # DEVICE: its ceilings, then each mask's default search
    local dev=$1 tag=${1//:/_}
    local db=$DIR/conv-$tag.db
    timeout 30 python3 -m perfport roofline --device "$dev" --db "$db" --json \
        > "$DIR/roofline-$tag.json" 2> "$DIR/logs/roofline-$tag.err"
    for mask in $MASKS; do
        timeout $((TUNE_TIME + 30)) python3 -m perfport tune convolution_wide \
            --problem n="$N" mask="$mask" --device "$dev" --max-time "$TUNE_TIME" --db "$db" \
            --json > "$DIR/tune-$tag-mask$mask.json" 2> "$DIR/logs/tune-$tag-mask$mask.err"
        echo "$dev mask $mask: rc $? at $SECONDS s" >> "$DIR/logs/times.txt"
    done
    gzip -f "$db"
}
for dev in $DEVICES; do one "$dev" & done
wait
python3 "$(dirname "$0")/summary.py" "$DIR" | tee "$DIR/summary.txt"
