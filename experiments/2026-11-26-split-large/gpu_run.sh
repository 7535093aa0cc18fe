#!/usr/bin/env bash
# Issue 25, the goals left by experiments/2026-11-26-split-gpu: large problems. Two GPUs on
# the largest stencil (16384^2, OpenCL and CUDA, one launch and 50 time steps), and CPU + GPU
# on large problems, now that a balanced split slower than the fastest device alone falls back
# to it (run 2 had matmul 1024 within 4% already; a CPU takes seconds per 4096^3 matmul).
# Run from the repository root on nvidia-h200-x2 / nvidia-h100-x2, after ../shared/GPU.md's
# wheel recipe (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file):
#   OUT=/some/dir bash experiments/2026-11-26-split-large/gpu_run.sh
# About 7-8 minutes; every step under `timeout`. PART=gpus runs only the two-GPU cases (OpenCL
# and CUDA), PART=cpu only CPU + GPU (each about half). Leaves split.db.gz, every command's JSON and
# its stderr (logs/) in $OUT.
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
db=/tmp/split-large.db  # kept between PART=gpus and PART=cpu on one machine
python3 -m perfport devices --json > "$OUT/devices.json"
ids() { python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and $1))"; }
read -r -a gpus <<< "$(ids "'NVIDIA' in x['vendor'].upper()")"
cpu=$(ids "x['type'] == 'cpu'" | cut -d' ' -f1)
echo "gpus=${gpus[*]} cpu=$cpu cores=$(nproc)" | tee "$OUT/logs/devices.txt"
g=${gpus[0]}

tune() {  # NAME DEVICE SECONDS BUDGET KERNEL PROBLEM...
  local name=$1 dev=$2 secs=$3 budget=$4 kernel=$5; shift 5
  timeout $((secs + 60)) python3 -m perfport tune "$kernel" --device "$dev" --problem "$@" \
    --budget "$budget" --max-time "$secs" --db "$db" --json \
    > "$OUT/tune-$name.json" 2> "$OUT/logs/tune-$name.err"
}
split() {  # NAME TIMEOUT SWEEP DIMENSION KERNEL PROBLEM... -- DEVICES...
  local name=$1 secs=$2 sweep=$3 dim=$4 kernel=$5; shift 5
  local problem=() devs=()
  while [ "$1" != -- ]; do problem+=("$1"); shift; done; shift
  for d in "$@"; do devs+=(--device "$d"); done
  timeout "$secs" python3 -m perfport split "$kernel" "${devs[@]}" --problem "${problem[@]}" \
    --dimension "$dim" --sweep "$sweep" --iterations 5 --db "$db" --json \
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
PART=${PART:-all}
# The CPU tunes while the GPU does (as in run 1); identical GPUs share a fingerprint.
if [ "$PART" != gpus ]; then
  ( tune cpu-stencil16384 "$cpu" 30 30 stencil "${S16[@]}"
    tune cpu-conv26 "$cpu" 30 12 convolution "${C26[@]}" ) &
fi
tune gpu-stencil16384 "$g" 25 60 stencil "${S16[@]}"
[ "$PART" != gpus ] && tune gpu-conv26 "$g" 20 40 convolution "${C26[@]}"
wait

if [ "$PART" != cpu ] && [ "${#gpus[@]}" -ge 2 ]; then
  split gpugpu-stencil16384 120 11 1 stencil "${S16[@]}" -- "${gpus[0]}" "${gpus[1]}"
  steps gpugpu-stencil16384 100 50 "${S16[@]}" -- "${gpus[0]}" "${gpus[1]}"
fi
if [ "$PART" != gpus ]; then
  split cpugpu-stencil16384 90 6 1 stencil "${S16[@]}" -- "$g" "$cpu"
  split cpugpu-conv26 90 6 0 convolution "${C26[@]}" -- "$g" "$cpu"
fi

ncuda=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 0)
echo "cuda devices: $ncuda" >> "$OUT/logs/devices.txt"
if [ "$PART" != cpu ] && [ "$ncuda" -ge 2 ]; then
  tune cuda-stencil16384 cuda:0 20 40 stencil "${S16[@]}"  # cuda:1 shares its fingerprint
  split cudacuda-stencil16384 100 11 1 stencil "${S16[@]}" -- cuda:0 cuda:1
  steps cudacuda-stencil16384 100 50 "${S16[@]}" -- cuda:0 cuda:1
fi
gzip -c "$db" > "$OUT/split.db.gz"
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("s*-*.json")):
    try:
        o = json.loads(f.read_text())
    except ValueError:
        print(f.stem, "no JSON (see logs)"); continue
    best = o.get("best_single", {})
    print(f.stem, "measured", round(o.get("measured_ms", 0), 3), "theoretical",
          round(o.get("theoretical_ms", 0), 3), "best single", best.get("device"),
          round(best.get("time_ms", 0) or 0, 3), "speedup", o.get("speedup_over_best_single"),
          "decision", o.get("decision"), "verified", o.get("verified"))
PY
