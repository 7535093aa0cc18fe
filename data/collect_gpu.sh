#!/usr/bin/env bash
# The GPU-machine collection runs behind the datasets here: run from the repository root there, after the
# wheel recipe of ../shared/GPU.md (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file).
#   bash data/collect_gpu.sh WG_SECONDS GEMM_SECONDS [GEMM_PROBLEMS [POCL_JOB]]
# On NVIDIA OpenCL, first stencil work-group scenarios (perfport wg collect) for WG_SECONDS,
# then the matmul sweep over GEMM_PROBLEMS (default lawson-gemm) for GEMM_SECONDS; all the
# while PoCL on the 16-core host runs POCL_JOB in the background: "wg" (default) collects
# stencil scenarios, "gemm" sweeps matmul over lawson-gemm, smallest shapes first.
# Each run resumes from the databases in $IN (from an earlier run) and leaves its databases in
# $OUT (gzipped, in parts of at most 15 MB: NAME.db.gz.part-aa, -ab, ...) with logs.tar.gz.
set -u
wg_seconds=$1 gemm_seconds=$2 problems=${3:-lawson-gemm} pocl_job=${4:-wg}
IN=${IN:-.gpu-in}
work=/tmp/collect logs=/tmp/collect/logs
mkdir -p "$work" "$logs"
for first in "$IN"/*.db.gz.part-aa; do
  [ -e "$first" ] && cat "${first%-aa}"-* | gunzip -c > "$work/$(basename "${first%.gz.part-aa}")"
done
python3 -m perfport devices --json > "$logs/devices.json"
pick() { python3 -c "import json,sys; d=json.load(open('$logs/devices.json'))['devices']; print(next(x['id'] for x in d if x['id'].startswith('opencl') and $1))"; }
nvidia=$(pick "'NVIDIA' in x['vendor'].upper()") pocl=$(pick "x['type'] == 'cpu'")
echo "nvidia=$nvidia pocl=$pocl"
total=$((wg_seconds + gemm_seconds))
if [ "$pocl_job" = gemm ]; then
  timeout $((total + 40)) python3 -m perfport sweep matmul --problems lawson-gemm \
    --device "$pocl" --max-time "$total" --db "$work/gemm-pocl16.db" --json \
    > "$logs/gemm-pocl16.jsonl" 2>&1 &
else
  timeout $((total + 40)) python3 -m perfport wg collect --device "$pocl" --scenarios 400 \
    --sizes 512,1024 --repeats 3 --max-time "$total" --db "$work/wg-pocl16.db" --json \
    > "$logs/wg-pocl16.jsonl" 2>&1 &
fi
if [ "$wg_seconds" -gt 0 ]; then
  python3 -m perfport wg collect --device "$nvidia" --scenarios 400 --max-time "$wg_seconds" \
    --db "$work/wg-nvidia.db" --json > "$logs/wg-nvidia.jsonl" 2>&1
fi
if [ "$gemm_seconds" -gt 0 ]; then
  python3 -m perfport sweep matmul --problems "$problems" --device "$nvidia" \
    --db "$work/gemm-nvidia.db" --max-time "$gemm_seconds" --json > "$logs/gemm-nvidia.jsonl" 2>&1
fi
wait
for db in "$work"/*.db; do
  python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$db"
  gzip -c "$db" | split -b 15M - "$OUT/$(basename "$db").gz.part-"
done
tar -czf "$OUT/logs.tar.gz" -C "$work" logs
ls -la "$OUT"
