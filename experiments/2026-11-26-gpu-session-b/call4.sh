#!/usr/bin/env bash
# Device call 4 (nvidia-h200-x2): issue 25's rerun after the fixes (parts enqueued then waited
# for, halo exchange side by side, re-splits that pay, a 3% margin for a split decision).
source experiments/2026-11-26-gpu-session-b/common.sh
OUT=$R/split timeout 240 bash experiments/2026-11-26-split-large/gpu_rerun.sh > "$R/split.log" 2>&1
finish
cat "$R/split/summary.txt"
