#!/usr/bin/env bash
# Issue 29: convolution_wide at n = 2^24 against a copy of the same bytes, OpenCL and CUDA side
# by side on the two GPUs (experiments/2026-11-26-conv-same-bytes, about 110 s); then issue 25:
# `--plan lines` once more on GPU + Xeon (two cases, about 60 s). Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call4.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R timeout 200 bash experiments/2026-11-26-conv-same-bytes/gpu_run.sh > "$R/conv.log" 2>&1
echo "conv rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
OUT=$R/lines-3 PLANS=lines GPUS=opencl:0:0 BUDGET=100 timeout 110 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-3.log" 2>&1
echo "lines-3 rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
finish > /dev/null
cat "$R/times.txt" "$R/conv-same-bytes/summary.txt" "$R/lines-3/summary.txt" 2>/dev/null
