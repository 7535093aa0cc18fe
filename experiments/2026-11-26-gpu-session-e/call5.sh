#!/usr/bin/env bash
# Issue 24: the tile-with-halo measurement kernels (experiments/2026-11-26-model-tile), about
# 100 s on the first H200 of nvidia-h200-x2. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-e/call5.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R/model-tile timeout 170 bash experiments/2026-11-26-model-tile/gpu_run.sh > "$R/model-tile.log" 2>&1
echo "model-tile rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
finish > /dev/null
cat "$R/times.txt"; tail -n 30 "$R/model-tile.log"
