#!/usr/bin/env bash
# Device call (nvidia-h200-x2): issue 25's two-GPU halo exchange, device against host.
source experiments/2026-11-26-gpu-session-b/common.sh
OUT=$R/next-b timeout 150 bash experiments/2026-11-26-split-next-b/gpu_run.sh > "$R/next-b.log" 2>&1
finish
cat "$R/next-b/summary.txt"
