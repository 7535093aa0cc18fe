#!/usr/bin/env bash
# Device call 3 (nvidia-h200-x2): issue 25's large problems (two GPUs on a 16384^2 stencil,
# OpenCL and CUDA, one launch and 50 steps; CPU + GPU with the fall-back).
source experiments/2026-11-26-gpu-session-b/common.sh
OUT=$R/split timeout 560 bash experiments/2026-11-26-split-large/gpu_run.sh > "$R/split.log" 2>&1
finish
cat "$R/split/summary.txt"
