#!/usr/bin/env bash
# Issue 25: `--plan lines` with each line's overhead holding the device's host time alone
# (wall less kernel; call 7 saw the launch end 0.2 ms after the Xeon's part when it
# finished last): GPU + Xeon three times, the two GPUs once. About 170 s on nvidia-h200-x2.
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call8.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R/lines-1 PLANS=lines TWO_GPU_S=30 BUDGET=80 timeout 85 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-1.log" 2>&1
echo "lines-1 rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
for k in 2 3; do
  OUT=$R/lines-$k PLANS=lines GPUS=opencl:0:0 BUDGET=50 timeout 55 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-$k.log" 2>&1
  echo "lines-$k rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
done
finish > /dev/null
cat "$R/times.txt" "$R"/lines-*/summary.txt 2>/dev/null
