#!/usr/bin/env bash
# Issue 25: `--plan lines` (the default; each device's host time in its line's overhead since
# session e's call 8) three times on GPU + Xeon (convolution 2^26, stencil 16384^2), then once
# with both GPUs (GPU + Xeon again, and the two-GPU stencil), for the rate at which one launch
# lands within 10% of Algorithm 1. About 230 s on nvidia-h200-x2. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-f/call1.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
for k in 1 2 3; do
  OUT=$R/lines-$k PLANS=lines GPUS=opencl:0:0 BUDGET=60 timeout 70 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-$k.log" 2>&1
  echo "lines-$k rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
done
OUT=$R/lines-4 PLANS=lines BUDGET=100 timeout 110 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-4.log" 2>&1
echo "lines-4 rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
finish > /dev/null
cat "$R/times.txt" "$R"/lines-*/summary.txt 2>/dev/null
