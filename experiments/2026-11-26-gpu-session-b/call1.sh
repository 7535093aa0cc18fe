#!/usr/bin/env bash
# Device call 1 (nvidia-h200-x2): issue 24's model run on the second GPU while issue 29's
# vector built-ins run on the first (NVIDIA OpenCL and CUDA), then issue 28's four PoCL
# workers against one on the host's Xeon. About 6-7 minutes.
source experiments/2026-11-26-gpu-session-b/common.sh
started=$SECONDS
( DEVICE=opencl:0:1 OUT=$R/model timeout 420 bash experiments/2026-11-26-model-gpu/gpu_run.sh \
    > "$R/model.log" 2>&1; echo "model done at $((SECONDS - started)) s" >> "$R/times.txt" ) &
DEVICES=opencl:0:0,cuda:0 OUT=$R/vec timeout 220 bash experiments/2026-11-26-builtins-vec/gpu_run.sh \
  > "$R/vec.log" 2>&1
echo "vec done at $((SECONDS - started)) s" >> "$R/times.txt"
timeout 120 python3 benchmarks/scaling.py --device "$pocl" --workers 4 --budget 48 --json \
  > "$R/scaling-cpu4.json" 2> "$R/scaling-cpu4.log"
echo "cpu scaling done at $((SECONDS - started)) s" >> "$R/times.txt"
wait
finish
cat "$R/times.txt"; tail -n 5 "$R/vec.log" "$R/model.log" "$R/scaling-cpu4.json"
