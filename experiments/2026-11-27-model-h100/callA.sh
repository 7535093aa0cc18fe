#!/usr/bin/env bash
# Issue 24 on an H100 (nvidia-h100-x1), the H200 studies' measurements again on a device the
# models were never fitted on. Call A: the measurement-kernel collection, the application
# variants, the shipped models' evaluation and model-guided search (the pipeline of GPU
# session d's call B, experiments/2026-11-26-model-gpu/gpu_run.sh; about 410 s on an H200).
# Run as `OUT=$OUT bash experiments/2026-11-27-model-h100/callA.sh` carrying .whl.
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
mkdir -p "$R/model"
OUT=$R/model timeout 540 bash experiments/2026-11-26-model-gpu/gpu_run.sh > "$R/model.log" 2>&1
echo "model rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
[ -e "$R/model/model.db.gz" ] || gzip -c /tmp/model-gpu.db > "$R/model/model.db.gz"
finish > /dev/null
cat "$R/gpus.csv" "$R/times.txt"; tail -n 14 "$R/model.log"
