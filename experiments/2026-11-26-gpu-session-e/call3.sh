#!/usr/bin/env bash
# Issue 29: stencil_wide's march variant at 4096^2 on NVIDIA OpenCL and CUDA
# (experiments/2026-11-26-stencil-march), with time for the whole ordered list. About 260 s on
# nvidia-h200-x2 (the first GPU). Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call3.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R ORDER_TIME=25 DEADLINE=265 timeout 280 bash experiments/2026-11-26-stencil-march/gpu_run.sh > "$R/march.log" 2>&1
echo "march rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
finish > /dev/null
cat "$R/times.txt"; cat "$R/stencil-march/summary.txt" 2>/dev/null; tail -n 5 "$R/march.log"
