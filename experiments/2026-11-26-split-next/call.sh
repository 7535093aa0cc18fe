#!/usr/bin/env bash
# Device call (nvidia-h200-x2): issue 25's CPU reserve and device-to-device halo exchange.
source experiments/2026-11-26-gpu-session-b/common.sh
OUT=$R/next timeout 490 bash experiments/2026-11-26-split-next/gpu_run.sh > "$R/next.log" 2>&1
finish
cat "$R/next/summary.txt"
