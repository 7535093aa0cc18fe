#!/usr/bin/env bash
# Issue 25, what the large-problem runs left open: (1) CPU + GPU convolution n=2^26 (and the
# 16384^2 stencil) with the CPU's part on all its cores (--cpu-reserve 0) and on a sub-device
# that leaves one core to the NVIDIA driver's host thread (--cpu-reserve 1, the default beside
# one GPU); (2) two-GPU time-stepping, 16384^2 stencil, 50 steps, halo rows exchanged device to
# device (one OpenCL context over both GPUs; CUDA peer copies) against through the host, on
# both backends. Configurations come from call 3's tuned database (same machine kind).
# Run from the repository root on nvidia-h200-x2 (or nvidia-h100-x2) after
#   source experiments/2026-11-26-gpu-session-b/common.sh
#   OUT=$R/next bash experiments/2026-11-26-split-next/gpu_run.sh
# (call.sh does both). Every command runs under `timeout`, and a command that would end past
# BUDGET seconds (default 470) is skipped: the whole script stays under 500 s. Leaves each
# command's JSON, logs/ and summary.txt in $OUT.
# SMALL=1 checks the script on PoCL alone (small sizes; GPUS and CPU name the devices, e.g.
# GPUS="opencl:0:0.0 opencl:0:0.1" CPU=opencl:0:0).
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
BUDGET=${BUDGET:-470}
started=$SECONDS
db=/tmp/split-next.db
gunzip -c experiments/2026-11-26-gpu-session-b/call3/split/split.db.gz > "$db"
python3 -m perfport devices --json > "$OUT/devices.json" 2> "$OUT/logs/devices.err"
ids() { python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and $1))"; }
read -r -a gpus <<< "${GPUS:-$(ids "'NVIDIA' in x['vendor'].upper()")}"
cpu=${CPU:-$(ids "x['type'] == 'cpu'" | cut -d' ' -f1)}
ncuda=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 0)
echo "gpus=${gpus[*]} cpu=$cpu cuda=$ncuda cores=$(nproc)" | tee "$OUT/logs/devices.txt"

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
  C26=(n=65536 mask=65) S16=(width=256 height=256) STEPS=5 T=1
else
  C26=(n=67108864 mask=625) S16=(width=16384 height=16384) STEPS=50 T=0
fi
g=${gpus[0]}
for k in 0 1; do  # the CPU's part on every core, then leaving one to the GPU's host thread
  run "cpugpu-conv26-reserve$k" $((T ? 60 : 75)) convolution --device "$g" --device "$cpu" \
    --problem "${C26[@]}" --dimension 0 --iterations 5 --cpu-reserve "$k"
done
for k in 0 1; do
  run "cpugpu-stencil16384-reserve$k" 45 stencil --device "$g" --device "$cpu" \
    --problem "${S16[@]}" --dimension 1 --iterations 3 --cpu-reserve "$k"
done
if [ "${#gpus[@]}" -ge 2 ]; then
  for h in device host; do
    run "steps-opencl-$h" 50 stencil --device "${gpus[0]}" --device "${gpus[1]}" \
      --problem "${S16[@]}" --steps "$STEPS" --halo "$h"
  done
fi
if [ "$ncuda" -ge 2 ]; then
  for h in device host; do
    run "steps-cuda-$h" 50 stencil --device cuda:0 --device cuda:1 \
      --problem "${S16[@]}" --steps "$STEPS" --halo "$h"
  done
fi
gzip -c "$db" > "$OUT/split.db.gz"
python3 experiments/2026-11-26-split-next/summary.py "$OUT" | tee "$OUT/summary.txt"
