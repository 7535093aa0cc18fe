#!/usr/bin/env bash
# Issue 31 on the GPU machine (see /work/shared/GPU.md for the wheels in .whl): for every
# device there (NVIDIA OpenCL, CUDA, PoCL), a described stencil that reads outside its
# borders in a loop (expect wrong_result, never ok), one that faults (expect crashed, never
# launch_refused), one with a constant offset outside its borders (expect exit 2, no
# database), and the features' cost (a PoCL compile per new stencil, the disk cache, none).
# Outputs under $OUT. Run from the repository root:
#   bash experiments/2026-11-26-described-stencils/gpu_run.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
HERE=experiments/2026-11-26-described-stencils
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
  echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export PYTHONPATH=/tmp/site:$PWD/src
W=$(mktemp -d)
echo '{"name": "oob_loop", "body": "ELEM s = 0; for (int dy = 0; dy <= 3; ++dy) s += GET(0, dy); return (OUT)s;", "south": 1}' > "$W/oob_loop.json"
echo '{"name": "wild_read", "body": "return (OUT)tile[(long)lx << 38];"}' > "$W/wild_read.json"
echo '{"name": "oob_south", "body": "return GET(0, 3);", "south": 1}' > "$W/oob_south.json"
python3 -m perfport devices --json > "$OUT/devices.json"
for id in $(python3 -c "import json; print(' '.join(d['id'] for d in json.load(open('$OUT/devices.json'))['devices']))"); do
  tag=${id//:/_}
  for k in oob_loop wild_read; do
    timeout 300 python3 -m perfport tune "$W/$k.json" --device "$id" --problem width=512 height=512 \
      --budget 12 --repeats 3 --timeout 10 --db "$OUT/$tag.db" --json > "$OUT/$tag-$k.json" 2> "$OUT/$tag-$k.err"
    echo "$id $k rc=$? $(python3 -c "import json; print(json.load(open('$OUT/$tag-$k.json'))['outcomes'])" 2>/dev/null)"
  done
  python3 -m perfport tune "$W/oob_south.json" --device "$id" --db "$OUT/$tag-oob_south.db" 2> "$OUT/$tag-oob_south.err"
  echo "$id oob_south rc=$? db_created=$([ -e "$OUT/$tag-oob_south.db" ] && echo yes || echo no) $(cat "$OUT/$tag-oob_south.err")"
done | tee "$OUT/summary.txt"
python3 -m perfport results --db "$OUT"/opencl_0_0.db --json > /dev/null 2>&1 || true
if python3 -c "import llvmlite" 2>/dev/null; then
  python3 "$HERE/feature_cost.py" --stencils 10 && cp "$HERE/feature_cost.json" "$OUT/feature_cost-gpu-host.json"
else
  echo "llvmlite missing: no feature cost here (add it to .whl)" | tee -a "$OUT/summary.txt"
fi
