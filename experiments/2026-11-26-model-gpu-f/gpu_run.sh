#!/usr/bin/env bash
# Issue 24: two measurements no earlier GPU call made. (1) lmem_hoist_pattern: a local load
# whose index does not change in an inner loop of 8 (invariant), against one whose index does
# (dependent, the control) and the load hoisted by hand (manual); the issued-load rule
# (src/perfport/model/hoist.py) says invariant costs what manual costs. (2) lmem_stride_pattern
# at stride 1 and m:4 in 1-D work-groups of 64 to 1024: FD's shape (a global load, a local
# store, a barrier, a few local loads) at group sizes that leave 32 to 2 groups resident per
# SM, which no calibration kernel varies (docs/model.md, status). Run from the repository
# root on the GPU machine after ../shared/GPU.md's wheel recipe (PYTHONPATH=/tmp/site:$PWD/src,
# NVIDIA ICD file):
#   OUT=/some/dir bash experiments/2026-11-26-model-gpu-f/gpu_run.sh
# Under 3 minutes (18 + 15 kernels, 100 s and 60 s at most; resumable). Leaves in $OUT:
# collect-hoist.json, collect-groups.json, model.db.gz, analyse.txt, logs/. Then, with no GPU:
#   python experiments/2026-11-26-model-gpu-f/analyse.py $OUT
# Overrides: DEVICE (default the first NVIDIA OpenCL device), NEL (nel tags, e.g. nel:4096 on
# PoCL; default the generators' sizes for the device), M (default m:16,64 for the hoisting
# kernels), LSIZES (default lsize_0:64,128,256,512,1024).
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/perfport-model-cache}
db=${DB:-/tmp/model-gpu-f.db}
if [ -z "${DEVICE:-}" ]; then
  python3 -m perfport devices --json > "$OUT/devices.json" 2> "$OUT/logs/devices.err"
  DEVICE=$(python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(next(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")
fi
echo "device=$DEVICE" | tee "$OUT/logs/device.txt"
# shellcheck disable=SC2086  # M, NEL and LSIZES are tag lists
timeout 100 python3 -m perfport model collect --device "$DEVICE" --db "$db" \
  --filter lmem_hoist_pattern dtype:float32 ${M:-m:16,64} ${NEL:-} --json \
  > "$OUT/collect-hoist.json" 2> "$OUT/logs/collect-hoist.err"
# the generator's three nel (multiples of 1024 on every device) unless NEL is given
# shellcheck disable=SC2086
timeout 60 python3 -m perfport model collect --device "$DEVICE" --db "$db" \
  --filter lmem_stride_pattern dtype:float32 lid_stride_0:1 lsize_1:1 m:4 \
  ${LSIZES:-lsize_0:64,128,256,512,1024} ${NEL:-} --json > "$OUT/collect-groups.json" 2> "$OUT/logs/collect-groups.err"
gzip -c "$db" > "$OUT/model.db.gz"
python3 experiments/2026-11-26-model-gpu-f/analyse.py "$OUT" | tee "$OUT/analyse.txt"
