#!/usr/bin/env bash
# Issue 25: `--plan lines` (the default) three more times on GPU + Xeon only (the convolution
# 2^26 and the stencil 16384^2), for the rate at which one launch lands within 10% of
# Algorithm 1. About 150 s on nvidia-h200-x2 (the first GPU). Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call7.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
for k in 1 2 3; do
  OUT=$R/lines-$k PLANS=lines GPUS=opencl:0:0 BUDGET=60 timeout 70 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-$k.log" 2>&1
  echo "lines-$k rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
done
finish > /dev/null
cat "$R/times.txt" "$R"/lines-*/summary.txt 2>/dev/null
