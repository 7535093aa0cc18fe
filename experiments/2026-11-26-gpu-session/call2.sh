#!/usr/bin/env bash
# The second GPU-machine call of 2026-11-26's second half (nvidia-h200-x2): the model's
# collection, calibration and matmul evaluation on NVIDIA OpenCL (issue 24), then the split
# runs again with rebalancing from the first run's tuned configurations (issue 25).
#   OUT=... bash experiments/2026-11-26-gpu-session/call2.sh    (from the repository root)
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
mkdir -p "$OUT/model" "$OUT/split"
OUT=$OUT/model timeout 300 bash experiments/2026-11-26-model-gpu/gpu_run.sh > "$OUT/model/run.log" 2>&1
OUT=$OUT/split TUNED=experiments/2026-11-26-split-gpu/run1/split.db.gz timeout 240 \
  bash experiments/2026-11-26-split-gpu/gpu_run.sh > "$OUT/split/run.log" 2>&1
tar czf /tmp/call2.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/call2.tgz "$OUT/"
