#!/usr/bin/env bash
# Issue 28 item 4's blocker: a two-GPU brute-force campaign of convolution2d (1024 x 1024,
# 15 x 15 filter) ran at 0.31-1.44 trials/s, each trial waiting on its NVIDIA OpenCL build
# (docs/results/2026-11-26-scaling-h200.md). This runs the same two-device campaign on local
# devices (no Dask) with and without --build-jobs, each with a cold compile cache and its own
# store, and prints trials/s for each.
#
# Before sending (on the CPU machine, from the project root): ../shared/gpu/fetch-wheels.sh
# Then on nvidia-h100-x2 (or nvidia-h200-x2), carrying .whl:
#   bash experiments/2026-11-26-multi-build-jobs/gpu_run.sh
# BUDGET (default 300 configurations), JOBS (default 14 compiling processes), GPUS (default:
# every NVIDIA OpenCL GPU; e.g. GPUS="opencl:0:0.0 opencl:0:0.1" KERNEL=... on PoCL for a
# smoke run). Writes $OUT/devices.json, $OUT/<jobs>.json (perfport tune --json), $OUT/<jobs>.log
# and $OUT/summary.txt.
set -euo pipefail
OUT=${OUT:-/tmp/perfport-multi-build-jobs}
BUDGET=${BUDGET:-300}
JOBS=${JOBS:-14}
KERNEL=${KERNEL:-convolution2d}
PROBLEM=${PROBLEM:-height=1024 width=1024}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD/src
  [ -e /etc/OpenCL/vendors/nvidia.icd ] ||
    echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
PY=${PY:-python3}
$PY -m perfport devices --json > "$OUT/devices.json"
GPUS=${GPUS:-$($PY -c '
import json, sys
ds = json.load(open(sys.argv[1]))
ds = ds["devices"] if isinstance(ds, dict) else ds
print(" ".join(d["id"] for d in ds if d["type"] == "gpu" and d["backend"] == "opencl"))' "$OUT/devices.json")}
[ "$(wc -w <<< "$GPUS")" -ge 2 ] || { echo "need two devices, found: $GPUS" >&2; exit 1; }
DEVICES=$(printf -- '--device %s ' $GPUS)
: > "$OUT/summary.txt"
for jobs in 0 "$JOBS"; do
  # A cold cache each run (NVIDIA OpenCL's compute cache, CUDA's, PoCL's), so the builds
  # compiled ahead are the only ones found built.
  cache=$(mktemp -d)
  ahead=$([ "$jobs" = 0 ] || echo "--build-jobs $jobs")
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # DEVICES, PROBLEM and ahead are lists of words
  CUDA_CACHE_PATH=$cache/cuda POCL_CACHE_DIR=$cache/pocl XDG_CACHE_HOME=$cache \
    $PY -m perfport tune "$KERNEL" --problem $PROBLEM $DEVICES --strategy brute_force \
    --budget "$BUDGET" --repeats 7 $ahead --db "$OUT/$jobs.db" \
    --json > "$OUT/$jobs.json" 2> "$OUT/$jobs.log" || { tail -3 "$OUT/$jobs.log" >&2; exit 1; }
  end=$(date +%s.%N)
  $PY -c '
import json, sys
jobs, wall, path = sys.argv[1], float(sys.argv[2]) - float(sys.argv[3]), sys.argv[4]
measured = sum(c["measured_this_session"] for c in json.load(open(path))["campaigns"])
print(f"--build-jobs {jobs}: {measured} trials in {wall:.1f} s, {measured / wall:.2f} trials/s")
' "$jobs" "$end" "$start" "$OUT/$jobs.json" | tee -a "$OUT/summary.txt"
  rm -rf "$cache"
done
