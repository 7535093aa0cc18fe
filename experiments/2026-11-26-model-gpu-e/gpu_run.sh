#!/usr/bin/env bash
# Issue 24: local loads by lid(0) stride in the application kernels' 16 x 16 work-groups, beside
# the 1-D groups of 256 that GPU session d measured (docs/results/2026-11-26-model-h200-d.md: the
# 1-D cost is 1, 2, 16 and 32 times the stride-1 cost at strides 1, 2, 16, 32, the bank-conflict
# degree of a 32-lane sub-group; in 16 x 16 groups a sub-group spans 2 lid(1) rows, so stride 16
# should conflict 8-fold, not 16-fold). Run from the repository root on the GPU machine after
# ../shared/GPU.md's wheel recipe (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file):
#   OUT=/some/dir bash experiments/2026-11-26-model-gpu-e/gpu_run.sh
# Under 4 minutes (two collections of 30 kernels, 100 s each at most; resumable). Leaves in $OUT:
# collect-2d.json (lsize_0:16 lsize_1:16), collect-1d.json (lsize_0:256, session d's layout,
# to check this GPU against session d's), model.db.gz, logs/. Then, with no GPU:
#   python experiments/2026-11-26-model-gpu-e/analyse.py $OUT
# Overrides: DEVICE (default the first NVIDIA OpenCL device), NEL (nel tags, e.g. nel:4096 on
# PoCL; default the generator's sizes for the device), M (default m:64,256).
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/perfport-model-cache}
db=${DB:-/tmp/model-gpu-e.db}
if [ -z "${DEVICE:-}" ]; then
  python3 -m perfport devices --json > "$OUT/devices.json" 2> "$OUT/logs/devices.err"
  DEVICE=$(python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(next(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")
fi
echo "device=$DEVICE" | tee "$OUT/logs/device.txt"
for layout in 2d:"lsize_0:16 lsize_1:16" 1d:"lsize_0:256 lsize_1:1"; do
  # shellcheck disable=SC2086  # the layout's tags and NEL are word lists
  timeout 100 python3 -m perfport model collect --device "$DEVICE" --db "$db" \
    --filter lmem_stride_pattern dtype:float32 ${layout#*:} ${M:-m:64,256} ${NEL:-} --json \
    > "$OUT/collect-${layout%%:*}.json" 2> "$OUT/logs/collect-${layout%%:*}.err"
done
gzip -c "$db" > "$OUT/model.db.gz"
python3 experiments/2026-11-26-model-gpu-e/analyse.py "$OUT" | tee "$OUT/analyse.txt"
