#!/usr/bin/env bash
# Next session's device call (nvidia-h200-x2, about 300 s, under 430): issue 24's hoisting
# and group-size measurement kernels (experiments/2026-11-26-model-gpu-f, under 200 s), then
# issue 25's --plan lines against eq4 on GPU + Xeon and on the two GPUs
# (experiments/2026-11-26-split-lines, under 200 s). One after the other: the split's two-GPU
# case needs both GPUs quiet. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call1.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R/model-f timeout 200 bash experiments/2026-11-26-model-gpu-f/gpu_run.sh > "$R/model-f.log" 2>&1
echo "model-f rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
OUT=$R/lines timeout 220 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines.log" 2>&1
echo "lines rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
finish > /dev/null
cat "$R/times.txt"; cat "$R/lines/summary.txt" 2>/dev/null; tail -n 12 "$R/model-f/analyse.txt" 2>/dev/null
