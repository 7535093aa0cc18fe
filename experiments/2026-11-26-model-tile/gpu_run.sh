#!/usr/bin/env bash
# Issue 24: the cost of 2-D tile loads with a halo, measured apart from any application.
# tile_halo_pattern (src/perfport/model/generators_tile.py): lsize x lsize work-groups each
# load an lsize x lsize tile (rows of lsize words, neighbouring tiles overlapping by 2*halo)
# into local memory, a barrier, one store per work-item; lsize 8 to 32 (multiples of 4, and
# 11 and 27), halo 1. One collect per lsize so that every lsize runs about the same number
# of work-items (groups per side ng = side / lsize, two sides). FD is not measured here: it
# is what the model is scored on. Run from the repository root on the GPU machine after
# ../shared/GPU.md's wheel recipe (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file):
#   OUT=/some/dir bash experiments/2026-11-26-model-tile/gpu_run.sh
# Under 150 s on an H200 (18 kernels of 67M and 268M work-items, about 0.3 and 1.2 ms each;
# the collects stop at 130 s; resumable). Leaves in $OUT: collect-tile-<lsize>.json,
# model.db.gz, analyse.txt (the per-lsize table), logs/. Then, with no GPU:
#   python experiments/2026-11-26-model-tile/make_data.py $OUT
#   python experiments/2026-11-26-model-tile/analyse.py
# Overrides: DEVICE (default the first NVIDIA OpenCL device), LSIZES (default "8 11 12 16 20
# 24 27 28 32"), SIDES (work-items per side, default "8192 16384"), HALOS (default halo:1).
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/perfport-model-cache}
db=${DB:-/tmp/model-tile.db}
if [ -z "${DEVICE:-}" ]; then
  python3 -m perfport devices --json > "$OUT/devices.json" 2> "$OUT/logs/devices.err"
  DEVICE=$(python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(next(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")
fi
echo "device=$DEVICE" | tee "$OUT/logs/device.txt"
start=$SECONDS
for w in ${LSIZES:-8 11 12 16 20 24 27 28 32}; do
  left=$(( 130 - (SECONDS - start) ))
  if [ "$left" -le 5 ]; then echo "lsize $w: out of time" | tee -a "$OUT/logs/times.txt"; continue; fi
  ng=""
  for side in ${SIDES:-8192 16384}; do ng="$ng${ng:+,}$(( (side + w / 2) / w ))"; done
  # shellcheck disable=SC2086  # HALOS is a tag
  timeout "$left" python3 -m perfport model collect --device "$DEVICE" --db "$db" \
    --filter tile_halo_pattern dtype:float32 "lsize:$w" ${HALOS:-halo:1} "ng:$ng" --json \
    > "$OUT/collect-tile-$w.json" 2> "$OUT/logs/collect-tile-$w.err"
  echo "lsize $w ng:$ng rc=$? at $((SECONDS - start)) s" | tee -a "$OUT/logs/times.txt"
done
gzip -c "$db" > "$OUT/model.db.gz"
python3 experiments/2026-11-26-model-tile/analyse.py --table-only "$OUT" | tee "$OUT/analyse.txt"
