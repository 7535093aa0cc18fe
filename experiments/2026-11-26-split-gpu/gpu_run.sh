#!/usr/bin/env bash
# erdem2018 on the GPU machine: tune each kernel on a GPU and on PoCL (the host's Xeon), then
# split it across CPU + GPU (the paper's PLT setting) and, where the host has two GPUs, across
# both, each with a split-factor sweep and rebalancing. Run from the repository root there,
# after ../shared/GPU.md's wheel recipe (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file):
#   OUT=/some/dir [TUNED=earlier/split.db.gz] bash experiments/2026-11-26-split-gpu/gpu_run.sh
# Leaves split.db.gz, every command's JSON (*.json) and its stderr (logs/) in $OUT.
# ONLY_CUDA=1 runs only the last section (CUDA devices through CuPy, time-stepping), about
# 10 minutes at most: give it a device call of its own.
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
db=/tmp/split.db
pp() { python3 -m perfport "$@"; }
pp devices --json > "$OUT/devices.json"
ids() { python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and $1))"; }
read -r -a gpus <<< "$(ids "'NVIDIA' in x['vendor'].upper()")"
cpu=$(ids "x['type'] == 'cpu'" | cut -d' ' -f1)
echo "gpus=${gpus[*]} cpu=$cpu" | tee "$OUT/logs/devices.txt"
nproc >> "$OUT/logs/devices.txt"

tune() {  # NAME DEVICE SECONDS BUDGET KERNEL PROBLEM...
  local name=$1 dev=$2 secs=$3 budget=$4 kernel=$5; shift 5
  timeout $((secs + 60)) python3 -m perfport tune "$kernel" --device "$dev" --problem "$@" \
    --budget "$budget" --max-time "$secs" --db "$db" --json \
    > "$OUT/tune-$name.json" 2> "$OUT/logs/tune-$name.err"
}
split() {  # NAME DIMENSION KERNEL PROBLEM... -- DEVICES...
  local name=$1 dim=$2 kernel=$3; shift 3
  local problem=() devs=()
  while [ "$1" != -- ]; do problem+=("$1"); shift; done; shift
  for d in "$@"; do devs+=(--device "$d"); done
  timeout 150 python3 -m perfport split "$kernel" "${devs[@]}" --problem "${problem[@]}" \
    --dimension "$dim" --sweep 11 --iterations 5 --db "$db" --json \
    > "$OUT/split-$name.json" 2> "$OUT/logs/split-$name.err"
}

g=${gpus[0]}
if [ -z "${ONLY_CUDA:-}" ]; then
if [ -n "${TUNED:-}" ]; then  # a split.db.gz of an earlier run: split with its configurations
  gunzip -c "$TUNED" > "$db"
else
# PoCL tunes on the host's cores while the GPU tunes; identical GPUs share a fingerprint, so
# tuning the first serves both.
( tune cpu-matmul1024 "$cpu" 40 40 matmul M=1024 N=1024 K=1024
  tune cpu-stencil4096 "$cpu" 30 40 stencil width=4096 height=4096
  tune cpu-conv22 "$cpu" 30 30 convolution n=4194304 mask=625 ) &
tune gpu-matmul4096 "$g" 40 60 matmul M=4096 N=4096 K=4096
tune gpu-stencil8192 "$g" 25 60 stencil width=8192 height=8192
tune gpu-conv24 "$g" 20 40 convolution n=16777216 mask=625
tune gpu-matmul1024 "$g" 20 60 matmul M=1024 N=1024 K=1024
tune gpu-stencil4096 "$g" 20 60 stencil width=4096 height=4096
tune gpu-conv22 "$g" 15 40 convolution n=4194304 mask=625
wait
fi

split cpugpu-matmul1024 1 matmul M=1024 N=1024 K=1024 -- "$g" "$cpu"
split cpugpu-stencil4096 1 stencil width=4096 height=4096 -- "$g" "$cpu"
split cpugpu-conv22 0 convolution n=4194304 mask=625 -- "$g" "$cpu"
if [ "${#gpus[@]}" -ge 2 ]; then
  split gpugpu-matmul4096 1 matmul M=4096 N=4096 K=4096 -- "${gpus[0]}" "${gpus[1]}"
  split gpugpu-stencil8192 1 stencil width=8192 height=8192 -- "${gpus[0]}" "${gpus[1]}"
  split gpugpu-conv24 0 convolution n=16777216 mask=625 -- "${gpus[0]}" "${gpus[1]}"
fi
fi  # ONLY_CUDA

# CUDA devices as parts (CuPy sessions), time-stepping with halo exchange, and a mixed
# OpenCL + CUDA split. Each command is bounded by its timeout.
steps() {  # NAME TIMEOUT STEPS PROBLEM... -- DEVICES...
  local name=$1 secs=$2 n=$3; shift 3
  local problem=() devs=()
  while [ "$1" != -- ]; do problem+=("$1"); shift; done; shift
  for d in "$@"; do devs+=(--device "$d"); done
  timeout "$secs" python3 -m perfport split stencil "${devs[@]}" --problem "${problem[@]}" \
    --steps "$n" --rebalance --db "$db" --json \
    > "$OUT/steps-$name.json" 2> "$OUT/logs/steps-$name.err"
}
ncuda=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 0)
echo "cuda devices: $ncuda" >> "$OUT/logs/devices.txt"
if [ "$ncuda" -ge 2 ]; then
  tune cuda-matmul4096 cuda:0 20 40 matmul M=4096 N=4096 K=4096  # cuda:1 shares its fingerprint
  tune cuda-stencil8192 cuda:0 15 40 stencil width=8192 height=8192
  split cudacuda-matmul4096 1 matmul M=4096 N=4096 K=4096 -- cuda:0 cuda:1
  split cudacuda-stencil8192 1 stencil width=8192 height=8192 -- cuda:0 cuda:1
  steps cudacuda-stencil8192 120 50 width=8192 height=8192 -- cuda:0 cuda:1
  [ "${#gpus[@]}" -ge 2 ] && steps gpugpu-stencil8192 120 50 width=8192 height=8192 -- "${gpus[0]}" "${gpus[1]}"
  [ "${#gpus[@]}" -ge 1 ] && steps mixed-stencil8192 90 50 width=8192 height=8192 -- "${gpus[0]}" cuda:1
fi
gzip -c "$db" > "$OUT/split.db.gz"
ls -la "$OUT"
