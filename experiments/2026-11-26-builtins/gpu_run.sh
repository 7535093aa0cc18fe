#!/usr/bin/env bash
# The new built-ins against the old ones and the vendor's figures on the GPU machine, through
# NVIDIA OpenCL and CUDA (CuPy). From the repository root, with .whl carried (/work/shared/GPU.md):
#
#   experiments/2026-11-26-builtins/gpu_run.sh stencil        # then convolution, then matmul
#
# Each part tunes the old built-in and its twin on both GPU devices for MAX_TIME seconds each
# (default 40, 60 for the matmul: 3 to 5 minutes a part), measures each best configuration again in RECHECK
# alternating rounds (default 2), and times the CuPy baseline (a device-to-device copy of the
# same bytes, or cuBLAS SGEMM) in the same run; 'all' runs the three parts (about 12 minutes: over one device call's 10). Results: $OUT/<part>.json, the tuning databases, devices.json and, where this
# checkout has 'perfport roofline', the measured ceilings. BUILTINS_SCALE=tiny and
# DEVICES=opencl:0:0 try the script on PoCL.
set -euo pipefail
PART=${1:-all}
OUT=${OUT:-$PWD/builtins-out}
MAX_TIME=${MAX_TIME:-}  # empty: 40 s, 60 s for the matmul (2,304 configurations, slower trials)
BUDGET=${BUDGET:-400}
RECHECK=${RECHECK:-2}
SCALE=${BUILTINS_SCALE:-gpu}
DEVICES=${DEVICES:-gpu}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"

if ! python3 -c "import pyopencl" 2>/dev/null && [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
NV=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
if [ -f "$NV" ] && [ -d /etc/OpenCL/vendors ] && [ ! -f /etc/OpenCL/vendors/nvidia.icd ]; then
    echo "$NV" > /etc/OpenCL/vendors/nvidia.icd
fi

timeout 120 python3 -m perfport devices --json > "$OUT/devices.json" || true
if python3 -m perfport roofline --help > /dev/null 2>&1; then
    for dev in $(python3 -c "import sys, json; print(' '.join(d['id'] for d in json.load(open(sys.argv[1]))['devices']))" "$OUT/devices.json"); do
        timeout 120 python3 -m perfport roofline --device "$dev" --json > "$OUT/roofline-${dev//:/_}.json" || true
    done
fi

parts=$PART
[ "$PART" = all ] && parts="stencil convolution matmul"
for part in $parts; do
    seconds=${MAX_TIME:-$([ "$part" = matmul ] && echo 60 || echo 40)}
    # Four tuning runs and the rechecks, each bounded inside too, the baseline, and slack.
    timeout $(((4 + 4 * RECHECK) * (seconds + 120) + 300)) python3 "$HERE/builtins_compare.py" --part "$part" \
        --scale "$SCALE" --devices "$DEVICES" --budget "$BUDGET" --max-time "$seconds" --recheck "$RECHECK" --out "$OUT" \
        || echo "part $part ended with status $?" >&2
done
