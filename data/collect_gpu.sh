#!/usr/bin/env bash
# The GPU-machine collection runs behind data/: run from the repository root there, after the
# wheel recipe of ../shared/GPU.md (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file).
#   bash data/collect_gpu.sh PHASE SECONDS
# Phase "gemm": the matmul sweep over lawson-gemm on NVIDIA OpenCL, while PoCL on the 16-core
#   host collects stencil work-group scenarios.
# Phase "wg": stencil work-group scenarios on NVIDIA OpenCL, while PoCL sweeps matmul.
# Each phase resumes from the databases in $IN (gzipped, from an earlier phase) and leaves its
# databases in $OUT (gzipped, in parts), with JSON-lines logs.
set -u
phase=$1 seconds=$2
IN=${IN:-.gpu-in}
work=/tmp/collect
mkdir -p "$work"
# Databases travel gzipped, in parts of at most 15 MB (NAME.db.gz.part-aa, -ab, ...).
for first in "$IN"/*.db.gz.part-aa; do
  [ -e "$first" ] && cat "${first%-aa}"-* | gunzip -c > "$work/$(basename "${first%.gz.part-aa}")"
done
python3 -m perfport devices --json > "$OUT/devices.json"
nvidia=$(python3 -c "import json,sys; d=json.load(open('$OUT/devices.json'))['devices']; print(next(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")
pocl=$(python3 -c "import json,sys; d=json.load(open('$OUT/devices.json'))['devices']; print(next(x['id'] for x in d if x['id'].startswith('opencl') and x['type']=='cpu'))")
echo "nvidia=$nvidia pocl=$pocl"
case $phase in
gemm)
  timeout $((seconds + 60)) python3 -m perfport wg collect --device "$pocl" --scenarios 300 \
    --sizes 512,1024,2048 --max-time "$seconds" --db "$work/wg-pocl16.db" --json \
    > "$OUT/wg-pocl16.jsonl" 2>&1 &
  python3 -m perfport sweep matmul --problems lawson-gemm --device "$nvidia" \
    --db "$work/gemm-nvidia.db" --max-time "$seconds" --json > "$OUT/gemm-nvidia.jsonl" 2>&1
  ;;
wg)
  timeout $((seconds + 60)) python3 -m perfport sweep matmul --problems lawson-gemm \
    --device "$pocl" --db "$work/gemm-pocl16.db" --max-time "$seconds" --json \
    > "$OUT/gemm-pocl16.jsonl" 2>&1 &
  python3 -m perfport wg collect --device "$nvidia" --scenarios 300 --max-time "$seconds" \
    --db "$work/wg-nvidia-opencl.db" --json > "$OUT/wg-nvidia.jsonl" 2>&1
  ;;
esac
wait
for db in "$work"/*.db; do
  python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$db"
  gzip -c "$db" | split -b 15M - "$OUT/$(basename "$db").gz.part-"
done
ls -la "$OUT"
