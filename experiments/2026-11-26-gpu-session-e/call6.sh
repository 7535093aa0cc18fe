#!/usr/bin/env bash
# Issue 25: `--plan lines` after the review's change (each device's line through its kernel
# time alone, not its wall time), on GPU + Xeon and on two GPUs, twice. About 220 s on
# nvidia-h200-x2. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call6.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
for k in 1 2; do
  OUT=$R/lines-$k PLANS=lines TWO_GPU_S=45 BUDGET=110 timeout 120 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-$k.log" 2>&1
  echo "lines-$k rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
done
finish > /dev/null
cat "$R/times.txt" "$R"/lines-*/summary.txt 2>/dev/null
