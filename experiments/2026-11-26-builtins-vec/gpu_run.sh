#!/usr/bin/env bash
# Vector accesses in stencil_wide and convolution_wide against a CuPy copy of the same bytes on
# the GPU machine, through NVIDIA OpenCL and CUDA (issue 29). From the repository root, with
# .whl carried (/work/shared/GPU.md):
#
#   OUT=... experiments/2026-11-26-builtins-vec/gpu_run.sh          # about 3 minutes
#
# Measures each GPU's ceilings (perfport roofline), then measures builtins_compare.py's focus
# list (--focus vector: the earlier scalar winners, then vector accesses at shapes a GPU fills)
# of stencil_wide at 4096x4096 float and convolution_wide at n = 2^24 with masks 3, 7 and 17,
# STENCIL_TIME and CONV_TIME seconds per device, re-measures each best once in a fresh
# database and times a CuPy device-to-device copy of the same bytes in the same process.
# Every step runs under timeout, none past DEADLINE seconds from the start (default 195), so
# the whole script stays under 200 s. Results:
# $OUT/roofline-*.json, $OUT/stencil/stencil.json, $OUT/conv-mask*/convolution.json
# ("comparison": fraction_of_vendor is the copy's time over the kernel's), and the databases.
# SMOKE=1 runs it on PoCL (opencl:0:0) at the tiny scale in about a minute.
set -euo pipefail
OUT=${OUT:-$PWD/builtins-vec-out}
HERE=$(cd "$(dirname "$0")" && pwd)
COMPARE="$HERE/../2026-11-26-builtins/builtins_compare.py"
if [ "${SMOKE:-0}" = 1 ]; then
    SCALE=tiny DEVICES=${DEVICES:-opencl:0:0} STENCIL_TIME=${STENCIL_TIME:-20} CONV_TIME=${CONV_TIME:-8}
    CONV_N=5000
else
    SCALE=gpu DEVICES=${DEVICES:-gpu} STENCIL_TIME=${STENCIL_TIME:-20} CONV_TIME=${CONV_TIME:-4}
    CONV_N=16777216
fi
PY=${PYTHON:-python3}
DEADLINE=${DEADLINE:-195}
mkdir -p "$OUT"
# A step's limit: its own, or what is left before the deadline if that is less.
limit() { local left=$((DEADLINE - SECONDS)); echo $(($1 < left ? $1 : (left > 1 ? left : 1))); }

if ! $PY -c "import pyopencl" 2>/dev/null && [ -d .whl ]; then
    $PY -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
NV=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
if [ -f "$NV" ] && [ -d /etc/OpenCL/vendors ] && [ ! -f /etc/OpenCL/vendors/nvidia.icd ]; then
    echo "$NV" > /etc/OpenCL/vendors/nvidia.icd
fi

timeout "$(limit 40)" $PY -m perfport devices --json > "$OUT/devices.json" || true
if [ "$DEVICES" = gpu ]; then
    ids=$($PY -c "import sys, json; print(' '.join(d['id'] for d in json.load(open(sys.argv[1]))['devices'] if d['backend'] == 'cuda' or 'nvidia' in (d['vendor'] + d['name']).lower()))" "$OUT/devices.json")
else
    ids=${DEVICES//,/ }
fi
for dev in $ids; do
    timeout "$(limit 20)" $PY -m perfport roofline --device "$dev" --json > "$OUT/roofline-${dev//:/_}.json" || echo "roofline on $dev ended with status $?" >&2
done

common=(--scale "$SCALE" --devices "$DEVICES" --focus vector --only-new --recheck 1 --repeats 50)
timeout "$(limit $((2 * STENCIL_TIME + 50)))" $PY "$COMPARE" --part stencil --max-time "$STENCIL_TIME" "${common[@]}" \
    --out "$OUT/stencil" || echo "stencil ended with status $?" >&2
for mask in 3 7 17; do
    timeout "$(limit $((2 * CONV_TIME + 32)))" $PY "$COMPARE" --part convolution --max-time "$CONV_TIME" "${common[@]}" \
        --problem n=$CONV_N mask=$mask --out "$OUT/conv-mask$mask" || echo "convolution mask $mask ended with status $?" >&2
done
echo "gpu_run.sh took $SECONDS s" >&2
