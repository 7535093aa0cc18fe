#!/usr/bin/env bash
# The first GPU-machine call of 2026-11-26's second half (nvidia-h200-x2 / h100-x2), within one
# 10-minute device call: device ceilings (issue 29), the built-in stencil and matmul against
# their twins, a CuPy copy and cuBLAS (issue 29), and described stencils that fault (issue 31).
#   OUT=... bash experiments/2026-11-26-gpu-session/call1.sh    (from the repository root)
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
mkdir -p "$OUT/roofline" "$OUT/builtins" "$OUT/described"
python3 -m perfport devices --json > "$OUT/devices.json"
for dev in opencl:0:0 cuda:0 opencl:1:0; do
  ( time timeout 60 python3 -m perfport roofline --device "$dev" --db "$OUT/roofline/roofline.db" --json ) \
    > "$OUT/roofline/${dev//:/_}.json" 2> "$OUT/roofline/${dev//:/_}.err"
done
OUT=$OUT/builtins DEVICES=opencl:0:0,cuda:0 MAX_TIME=30 RECHECK=1 timeout 200 bash experiments/2026-11-26-builtins/gpu_run.sh stencil \
  > "$OUT/builtins/stencil.log" 2>&1
OUT=$OUT/builtins DEVICES=opencl:0:0,cuda:0 MAX_TIME=40 RECHECK=1 timeout 220 bash experiments/2026-11-26-builtins/gpu_run.sh matmul \
  > "$OUT/builtins/matmul.log" 2>&1
W=$(mktemp -d)
echo '{"name": "oob_loop", "body": "ELEM s = 0; for (int dy = 0; dy <= 3; ++dy) s += GET(0, dy); return (OUT)s;", "south": 1}' > "$W/oob_loop.json"
echo '{"name": "wild_read", "body": "return (OUT)tile[(long)lx << 38];"}' > "$W/wild_read.json"
echo '{"name": "oob_south", "body": "return GET(0, 3);", "south": 1}' > "$W/oob_south.json"
for id in opencl:0:0 cuda:0; do
  tag=${id//:/_}
  for k in oob_loop wild_read; do
    timeout 40 python3 -m perfport tune "$W/$k.json" --device "$id" --problem width=512 height=512 \
      --budget 12 --repeats 3 --timeout 10 --confirm 0 --db "$OUT/described/$tag.db" --json \
      > "$OUT/described/$tag-$k.json" 2> "$OUT/described/$tag-$k.err"
    echo "$id $k rc=$? $(python3 -c "import json; print(json.load(open('$OUT/described/$tag-$k.json'))['outcomes'])" 2>/dev/null)"
  done
  timeout 30 python3 -m perfport tune "$W/oob_south.json" --device "$id" --db "$OUT/described/$tag-oob_south.db" \
    2> "$OUT/described/$tag-oob_south.err"
  echo "$id oob_south rc=$? db_created=$([ -e "$OUT/described/$tag-oob_south.db" ] && echo yes || echo no) $(cat "$OUT/described/$tag-oob_south.err")"
done | tee "$OUT/described/summary.txt"
# The device tool brings back a limited number of files: one archive.
tar czf /tmp/call1.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/call1.tgz "$OUT/"
