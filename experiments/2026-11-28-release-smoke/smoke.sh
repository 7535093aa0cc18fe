#!/bin/sh
# Release smoke check of main on the GPU machine: NVIDIA OpenCL, CUDA (CuPy) and PoCL.
# Run by the device tool from the project root with carry [".whl"]: sh experiments/2026-11-28-release-smoke/smoke.sh
set -u
OUT=${OUT:?}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
P="python3 -m perfport"
CUDA_SAXPY=experiments/2026-11-27-cuda-audit/gpu/t1_saxpy.toml
run() { echo "### $*"; "$@"; echo "### rc=$?"; }
{
git log --oneline -1 2>/dev/null || true
run $P --version
run $P devices
$P devices --json > $OUT/devices.json
NV=$(python3 -c "import json;d=json.load(open('$OUT/devices.json'))['devices'];print(next(x['id'] for x in d if x['backend']=='opencl' and 'NVIDIA' in x['name']))")
CPU=$(python3 -c "import json;d=json.load(open('$OUT/devices.json'))['devices'];print(next(x['id'] for x in d if x['backend']=='opencl' and x['type']=='cpu'))")
echo "NV=$NV CPU=$CPU"
run $P tune stencil --device $NV --budget 40 --db $OUT/s.db --json
run $P tune stencil --device cuda:0 --budget 40 --db $OUT/s.db --json
run $P tune examples/saxpy.toml --device $NV --budget 20 --db $OUT/s.db
run $P tune examples/saxpy.py --device $NV --budget 10 --db $OUT/s.db --json
run $P tune vector_add --device $NV --budget 20 --objective GBps --db $OUT/s.db --json
run $P tune $CUDA_SAXPY --device cuda:0 --budget 20 --db $OUT/s.db
run $P tune loopy-fd --device $NV --budget 6 --db $OUT/s.db
run $P tune examples/kernel_tuner/convolution.toml --device $NV --budget 30 --db $OUT/s.db
run $P tune matmul --device cuda:0 --budget 30 --db $OUT/s.db --problem M=1024 --problem N=1024 --problem K=1024
# several devices: each kind's campaign re-times its best (--confirm's default 3)
run $P tune stencil_wide --device $NV --device cuda:0 --budget 30 --db $OUT/s.db --json
run $P tune vector_add --device $NV --device $CPU --budget 12 --db $OUT/s.db
run $P results --db $OUT/s.db
run $P roofline --device $NV --db $OUT/s.db --json
run $P roofline --device cuda:0 --db $OUT/s.db --json
# the stencil has a numpy reference: the split is verified against it (verified_against)
run $P split stencil --device $NV --device $CPU --problem width=4096 --problem height=4096 --db $OUT/s.db --json
run $P wg predict --kernel stencil --device $NV --json
run $P model evaluate --nonnegative --device H100 --json
run $P export --format kt-cache --kernel stencil --device cuda:0 --db $OUT/s.db -o $OUT/stencil-kt.json
run $P report -o $OUT/report --db $OUT/s.db
} > $OUT/smoke.txt 2>&1
gzip -f $OUT/s.db
