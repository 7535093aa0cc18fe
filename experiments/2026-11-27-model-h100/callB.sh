#!/usr/bin/env bash
# Issue 24 on an H100, call B: the measurement kernels the H200 studies added after call A's
# pipeline, each as it ran there: local strides in 16 x 16 groups (GPU session d call F,
# experiments/2026-11-26-model-gpu-e), the hoisting kernels and 1-D groups of 64-1024
# (session e call 1, experiments/2026-11-26-model-gpu-f) and the tile loads with a halo
# (session e call 5, experiments/2026-11-26-model-tile). About 450 s.
# Run as `OUT=$OUT bash experiments/2026-11-27-model-h100/callB.sh` carrying .whl.
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
for part in e:230 f:200; do
  OUT=$R/model-${part%%:*} timeout "${part#*:}" bash "experiments/2026-11-26-model-gpu-${part%%:*}/gpu_run.sh" \
    > "$R/model-${part%%:*}.log" 2>&1
  echo "model-${part%%:*} rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
done
OUT=$R/model-tile timeout 170 bash experiments/2026-11-26-model-tile/gpu_run.sh > "$R/model-tile.log" 2>&1
echo "model-tile rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
finish > /dev/null
cat "$R/gpus.csv" "$R/times.txt"; tail -n 12 "$R/model-tile.log"
