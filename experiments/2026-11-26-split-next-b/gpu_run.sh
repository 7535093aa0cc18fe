#!/usr/bin/env bash
# Issue 25, after GPU session d: two-GPU time-stepping (16384^2 stencil, 50 steps) with halo
# rows device to device against through the host, on NVIDIA OpenCL (one context over both
# GPUs; halos now cross in halo-sized boxes, never a part's whole buffer) and on CUDA (peer
# copies; --halo host now really stages through the host). Session d's steps-opencl-device
# timed out at 50 s; steps-cuda-host ran peer copies.
# Run from the repository root on nvidia-h200-x2 (or nvidia-h100-x2) after
#   source experiments/2026-11-26-gpu-session-b/common.sh
#   OUT=$R/next-b bash experiments/2026-11-26-split-next-b/gpu_run.sh
# (call.sh does both). Every command runs under `timeout`, and one that could end past BUDGET
# seconds (default 140) is skipped: the script stays under 150 s. Leaves each command's JSON,
# logs/ and summary.txt in $OUT.
# SMALL=1 checks the script on PoCL alone (small sizes; GPUS names the two devices, e.g.
# GPUS="opencl:0:0.0 opencl:0:0.1").
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
BUDGET=${BUDGET:-140}
started=$SECONDS
db=/tmp/split-next-b.db
gunzip -c experiments/2026-11-26-gpu-session-b/call3/split/split.db.gz > "$db"
timeout 20 python3 -m perfport devices --json > "$OUT/devices.json" 2> "$OUT/logs/devices.err"
ids() { python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and $1))"; }
read -r -a gpus <<< "${GPUS:-$(ids "'NVIDIA' in x['vendor'].upper()")}"
ncuda=$(timeout 20 python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 0)
echo "gpus=${gpus[*]} cuda=$ncuda cores=$(nproc)" | tee "$OUT/logs/devices.txt"

run() {  # NAME SECONDS ARGS...: perfport split ARGS, skipped when it could end past BUDGET
  local name=$1 secs=$2; shift 2
  if (( SECONDS - started + secs > BUDGET )); then
    echo "$name: skipped, $((SECONDS - started)) s gone of $BUDGET" | tee -a "$OUT/logs/skipped.txt"
    return
  fi
  timeout "$secs" python3 -m perfport split "$@" --db "$db" --json \
    > "$OUT/$name.json" 2> "$OUT/logs/$name.err"
  echo "$name: rc $? at $((SECONDS - started)) s" >> "$OUT/logs/times.txt"
}
if [ "${SMALL:-0}" = 1 ]; then
  S16=(width=256 height=256) STEPS=5
else
  S16=(width=16384 height=16384) STEPS=50
fi
if [ "${#gpus[@]}" -ge 2 ]; then  # session d: host 20 s; device first, it hung before
  run steps-opencl-device 35 stencil --device "${gpus[0]}" --device "${gpus[1]}" \
    --problem "${S16[@]}" --steps "$STEPS" --halo device
  run steps-opencl-host 30 stencil --device "${gpus[0]}" --device "${gpus[1]}" \
    --problem "${S16[@]}" --steps "$STEPS" --halo host
fi
if [ "$ncuda" -ge 2 ]; then  # session d: 18 s each
  for h in device host; do
    run "steps-cuda-$h" 25 stencil --device cuda:0 --device cuda:1 \
      --problem "${S16[@]}" --steps "$STEPS" --halo "$h"
  done
fi
gzip -c "$db" > "$OUT/split.db.gz"
python3 experiments/2026-11-26-split-next/summary.py "$OUT" | tee "$OUT/summary.txt"
python3 experiments/2026-11-26-split-next-b/warm.py "$OUT" | tee -a "$OUT/summary.txt"
