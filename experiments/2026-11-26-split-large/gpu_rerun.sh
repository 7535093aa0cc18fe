#!/usr/bin/env bash
# Issue 25, after the fixes to what call 3 of experiments/2026-11-26-gpu-session-b showed:
# the parts enqueued then waited for (no thread per part), the halo exchange per device side
# by side, re-splits only when they pay, and a split decided only when it wins by more than
# 3%. Reuses call 3's tuned configurations (its split.db.gz: the same H200s' fingerprints;
# on other cards the kernels' defaults are used and each JSON's configs say "default").
# Run from the repository root on nvidia-h200-x2, after ../shared/GPU.md's wheel recipe
# (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file):
#   OUT=/some/dir bash experiments/2026-11-26-split-large/gpu_rerun.sh
# About 2 minutes; every step under `timeout`. Same layout as gpu_run.sh: every command's
# JSON, its stderr in logs/, split.db.gz and summary.txt in $OUT.
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
here=$(dirname "$0")
db=/tmp/split-rerun.db
gunzip -c "$here/../2026-11-26-gpu-session-b/call3/split/split.db.gz" > "$db"
timeout 30 python3 -m perfport devices --json > "$OUT/devices.json"
ids() { python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and $1))"; }
read -r -a gpus <<< "$(ids "'NVIDIA' in x['vendor'].upper()")"
cpu=$(ids "x['type'] == 'cpu'" | cut -d' ' -f1)
ncuda=$(timeout 30 python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 0)
echo "gpus=${gpus[*]} cpu=$cpu cores=$(nproc) cuda=$ncuda" | tee "$OUT/logs/devices.txt"

split() {  # NAME TIMEOUT SWEEP ITERATIONS DIMENSION KERNEL PROBLEM... -- DEVICES...
  local name=$1 secs=$2 sweep=$3 its=$4 dim=$5 kernel=$6; shift 6
  local problem=() devs=()
  while [ "$1" != -- ]; do problem+=("$1"); shift; done; shift
  for d in "$@"; do devs+=(--device "$d"); done
  timeout "$secs" python3 -m perfport split "$kernel" "${devs[@]}" --problem "${problem[@]}" \
    --dimension "$dim" --sweep "$sweep" --iterations "$its" --db "$db" --json \
    > "$OUT/split-$name.json" 2> "$OUT/logs/split-$name.err"
}
steps() {  # NAME TIMEOUT STEPS PROBLEM... -- DEVICES...
  local name=$1 secs=$2 n=$3; shift 3
  local problem=() devs=()
  while [ "$1" != -- ]; do problem+=("$1"); shift; done; shift
  for d in "$@"; do devs+=(--device "$d"); done
  timeout "$secs" python3 -m perfport split stencil "${devs[@]}" --problem "${problem[@]}" \
    --steps "$n" --rebalance --db "$db" --json \
    > "$OUT/steps-$name.json" 2> "$OUT/logs/steps-$name.err"
}
S16=(width=16384 height=16384)
C26=(n=67108864 mask=625)
if [ "${#gpus[@]}" -ge 2 ]; then
  split gpugpu-stencil16384 40 5 3 1 stencil "${S16[@]}" -- "${gpus[0]}" "${gpus[1]}"
  steps gpugpu-stencil16384 30 50 "${S16[@]}" -- "${gpus[0]}" "${gpus[1]}"
  # the launch and exchange paths before/after, side by side on the two GPUs
  timeout 25 python3 benchmarks/split_launch.py --device "${gpus[0]}" --device "${gpus[1]}" \
    --size 8192 --steps 30 --repeats 1 --json "$OUT/split-launch-gpugpu.json" \
    > "$OUT/logs/split-launch-gpugpu.txt" 2>&1
fi
if [ "$ncuda" -ge 2 ]; then
  split cudacuda-stencil16384 40 5 3 1 stencil "${S16[@]}" -- cuda:0 cuda:1
  steps cudacuda-stencil16384 30 50 "${S16[@]}" -- cuda:0 cuda:1
fi
# the decision check: call 3 decided "split" here for a split at 0.76x of the GPU alone
[ -n "$cpu" ] && [ "${#gpus[@]}" -ge 1 ] && split cpugpu-conv26 45 0 5 0 convolution "${C26[@]}" -- "${gpus[0]}" "$cpu"
gzip -c "$db" > "$OUT/split.db.gz"
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("s*-*.json")):
    try:
        o = json.loads(f.read_text())
    except ValueError:
        print(f.stem, "no JSON (see logs)"); continue
    if "summary" in o:  # benchmarks/split_launch.py
        print(f.stem, json.dumps(o["summary"])); continue
    best = o.get("best_single", {})
    print(f.stem, "measured", round(o.get("measured_ms", 0), 3), "theoretical",
          round(o.get("theoretical_ms", 0), 3), "best single", best.get("device"),
          round(best.get("time_ms", 0) or 0, 3), "speedup", o.get("speedup_over_best_single"),
          "decision", o.get("decision"), "chosen_ms", o.get("chosen_ms"),
          "moved_ms", o.get("moved_ms"), "exchange_ms", o.get("exchange_ms"),
          "verified", o.get("verified"))
PY
