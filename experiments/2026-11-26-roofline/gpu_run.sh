#!/usr/bin/env bash
# Device ceilings (perfport roofline) on the GPU machine's NVIDIA OpenCL, CUDA and PoCL
# devices, then the built-in stencil tuned at 4096x4096 float on each, reporting its fraction
# of the ceiling. Run from the project root with .whl carried (docs: /work/shared/GPU.md):
#   bash experiments/2026-11-26-roofline/gpu_run.sh
# Everything lands under $OUT (default ./out): one database, JSON per step, a log.
set -euo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD/src
    [ -f /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && \
        echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
DB="$OUT/roofline.db"
python3 -m perfport devices --json > "$OUT/devices.json"
# Every device: NVIDIA OpenCL (gpu), PoCL (cpu), and CUDA through CuPy where it is there.
DEVICES=$(python3 -c '
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    print(d["id"])' "$OUT/devices.json")
for dev in $DEVICES; do
    slug=${dev//:/-}
    echo "== roofline $dev" | tee -a "$OUT/log.txt"
    ( time python3 -m perfport roofline --device "$dev" --db "$DB" --json ) \
        > "$OUT/roofline-$slug.json" 2>> "$OUT/log.txt" || echo "roofline $dev failed" >> "$OUT/log.txt"
    echo "== stencil 4096x4096 on $dev" | tee -a "$OUT/log.txt"
    python3 -m perfport tune stencil --problem width=4096 height=4096 --device "$dev" \
        --db "$DB" --max-time 150 --json > "$OUT/stencil-$slug.json" 2>> "$OUT/log.txt" \
        || echo "tune $dev failed" >> "$OUT/log.txt"
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
b = r["best"] or {}
print(sys.argv[2], "best", b.get("config"), b.get("time_ms"), "ms", b.get("metrics"),
      "roofline", r["roofline"])' "$OUT/stencil-$slug.json" "$dev" | tee -a "$OUT/log.txt" || true
done
python3 -m perfport results --db "$DB" --json > "$OUT/results.json"
python3 -m perfport export --db "$DB" --format csv -o "$OUT/results.csv"
