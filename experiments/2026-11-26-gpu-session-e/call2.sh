#!/usr/bin/env bash
# Issue 25: `--plan lines` with the probe now running Eq. 4's parts together (commit 7377b25),
# eq4 against lines on GPU + Xeon and two GPUs, then lines once more (its run-to-run spread).
# About 200 s on nvidia-h200-x2. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call2.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R/lines TWO_GPU_S=45 timeout 200 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines.log" 2>&1
echo "lines rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
OUT=$R/lines-again PLANS=lines TWO_GPU_S=45 BUDGET=120 timeout 130 bash experiments/2026-11-26-split-lines/gpu_run.sh > "$R/lines-again.log" 2>&1
echo "lines-again rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
finish > /dev/null
cat "$R/times.txt"; cat "$R/lines/summary.txt" "$R/lines-again/summary.txt" 2>/dev/null
