#!/usr/bin/env bash
# Issue 28 item 4: a brute-force campaign over >= 2,000 configurations on two GPUs through
# Dask, against one GPU: the wall-time ratio and the per-trial overhead.
#
# Space: KERNEL (default stencil_wide: 8,008 configurations legal on an H200, 2,000 of them in
# brute-force order, BUDGET) at PROBLEM (default 2048 x 2048 float), 7 timed launches a trial.
# Not convolution2d 1024^2 (the first choice): NVIDIA's OpenCL compiler took about 3.6 s a
# build of its unrolled 15 x 15 filter, 1.8 hours for 2,000 on one GPU
# (docs/results/2026-11-26-scaling-h200.md); stencil_wide builds in a fraction of a second.
# benchmarks/scaling.py runs the one-GPU campaign first, then the two-GPU one, each with
# cold compile caches and its own store, both through a local Dask cluster (one worker
# process per GPU); MODES=local adds the same pair without Dask, so the
# difference of wall per trial is Dask's own overhead.
#
# Before sending (on the CPU machine, from the project root), fill ./.whl (about 3.2 MB of
# Dask wheels on top of pyopencl's; dask 1.5 MB, distributed 1.0 MB, tornado 0.5 MB):
#   ../shared/gpu/fetch-wheels.sh dask==2026.8.0 distributed==2026.8.0 tblib zict partd locket tornado urllib3
# Then on nvidia-h100-x2 (or nvidia-h200-x2), carrying .whl:
#   bash experiments/2026-11-26-cluster/gpu_run.sh
# ONLY=one or ONLY=many runs one of the two campaigns (scaling.py --only), for device calls
# too short for both. Writes $OUT/devices.json, $OUT/scaling-<mode>.json (the runs and the ratio) and the logs.
set -euo pipefail
OUT=${OUT:-/tmp/perfport-cluster}
BUDGET=${BUDGET:-2000}
KERNEL=${KERNEL:-stencil_wide}
PROBLEM=${PROBLEM:-width=2048 height=2048}
MODES=${MODES:-dask}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src
[ -e /etc/OpenCL/vendors/nvidia.icd ] ||
  echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
nvidia-smi --query-gpu=name,memory.total --format=csv > "$OUT/gpus.csv" || true
python3 -m perfport devices --json > "$OUT/devices.json"
# The NVIDIA OpenCL GPUs (PoCL's CPU device is listed too): --device ID for each.
GPUS=$(python3 -c '
import json, sys
ds = json.load(open(sys.argv[1]))
ds = ds["devices"] if isinstance(ds, dict) else ds
print(" ".join("--device " + d["id"] for d in ds
               if d["type"] == "gpu" and d["backend"] == "opencl"))' "$OUT/devices.json")
echo "GPUs: $GPUS" | tee "$OUT/run.log"
[ "$(wc -w <<< "$GPUS")" -ge 4 ] || { echo "need two OpenCL GPUs, found: $GPUS" >&2; exit 1; }
for mode in $MODES; do
  flag=$([ "$mode" = dask ] && echo --dask || true)
  # shellcheck disable=SC2086 # PROBLEM is a list of words
  python3 benchmarks/scaling.py $flag $GPUS --kernel "$KERNEL" ${ONLY:+--only "$ONLY"} \
    --problem $PROBLEM --budget "$BUDGET" --repeats 7 --json \
    > "$OUT/scaling-$mode.json" 2> "$OUT/scaling-$mode.log"
  python3 experiments/2026-11-26-cluster/summarize.py \
    "$OUT/scaling-$mode.json" "$mode" | tee -a "$OUT/run.log"
done
