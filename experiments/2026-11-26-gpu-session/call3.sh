#!/usr/bin/env bash
# The third GPU-machine call of 2026-11-26 (nvidia-h200-x2): stencil work-group scenarios on
# the host's Xeon at several thread counts (issue 31 item 5), the device ceilings again with
# 16-byte accesses, the wide stencil against a CuPy copy again (issue 29), and split parts on
# CUDA devices (issue 25).
#   OUT=... bash experiments/2026-11-26-gpu-session/call3.sh    (from the repository root)
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD/src
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
mkdir -p "$OUT/wg-cpu" "$OUT/roofline" "$OUT/builtins" "$OUT/split-cuda"
# The CPU scenarios first, alone on the host, so the GPU work does not disturb their timings.
OUT=$OUT/wg-cpu THREADS="32 8 2" BUDGET=190 PREBUILD_S=40 timeout 230 \
  bash experiments/2026-11-26-wg-cpu/gpu_host_collect.sh > "$OUT/wg-cpu/run.log" 2>&1
for dev in opencl:0:0 cuda:0; do
  timeout 60 python3 -m perfport roofline --device "$dev" --db "$OUT/roofline/roofline.db" --json \
    > "$OUT/roofline/${dev//:/_}.json" 2> "$OUT/roofline/${dev//:/_}.err"
done
OUT=$OUT/builtins DEVICES=opencl:0:0,cuda:0 MAX_TIME=40 RECHECK=1 timeout 200 \
  bash experiments/2026-11-26-builtins/gpu_run.sh stencil > "$OUT/builtins/stencil.log" 2>&1
timeout 90 python3 experiments/2026-11-26-split-gpu/cuda_check.py > "$OUT/split-cuda/check.json" \
  2> "$OUT/split-cuda/check.err"
tar czf /tmp/call3.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/call3.tgz "$OUT/"
