#!/bin/sh
# region_sweep's runs on the GPU machine's 16 CPU cores (replay only; no GPU). .gpu-in/hub holds
# the hub caches of this call (the carry limit is 64 MiB with the repository):
#   call A: gemm, convolution, convolution_milo and t1_inputs (PART=A: the five development
#           caches with relatives first, then the held-out ones of those kernels);
#   call B: dedispersion_milo, pnpoly and t1_inputs (PART=B: held-out only);
#   call 500: the six caches of ../shared/data and t1_inputs (PART=500: the new default,
#           prior keeping to its region, at budget 500 on the five caches with a relative).
# Run with carry [".gpu-in/hub"]: PART=A OUT=$OUT sh experiments/2026-11-27-region-sweep/call.sh
set -u
OUT=${OUT:?set OUT}
export PYTHONPATH=$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
E=experiments/2026-11-27-region-sweep
{ nproc; lscpu | grep 'Model name'; python3 -c "import numpy; print('numpy', numpy.__version__)"; } > $OUT/machine.txt 2>&1
if [ "$PART" = 500 ]; then
  timeout ${T:-570} python3 benchmarks/strategies.py --data .gpu-in/hub --seeds 30 --budgets 500 --jobs 16 \
    --strategies prior --kt-strategies "" --caches convolution_milo,gemm --runs $OUT/runs500.json.gz > $OUT/log500.txt 2>&1
  echo "rc $?" >> $OUT/log500.txt; tail -n 12 $OUT/log500.txt
elif [ "$PART" = A ] && [ "${STEP:-dev}" = dev ]; then
  # the development protocol's store holds the six caches of ../shared/data only
  D=/tmp/dev/kerneltuner-benchmark_hub; mkdir -p $D
  cp -r .gpu-in/hub/kerneltuner-benchmark_hub/t1_inputs $D/
  for c in convolution/RTX_3090 convolution_milo/A100 convolution_milo/A4000 convolution_milo/MI250X gemm/RTX_2080_Ti gemm/RTX_3090; do
    mkdir -p $D/$(dirname $c); cp .gpu-in/hub/kerneltuner-benchmark_hub/$c.json.gz $D/$c.json.gz
  done
  timeout ${T:-560} python3 benchmarks/prior_relatives.py --data /tmp/dev --strategy prior_region \
    --seeds ${SEEDS:-30} --jobs 16 --conditions ${CONDS:-relatives:stall=10} --runs $OUT/dev-runs.json.gz >> $OUT/dev-log.txt 2>&1
  echo "rc $?" >> $OUT/dev-log.txt; tail -n 5 $OUT/dev-log.txt
else
  timeout ${T:-560} python3 $E/heldout.py --data .gpu-in/hub --seeds 30 --budgets 200 --jobs 16 \
    --strategies region_sweep --kt-strategies "" --caches "${CACHES:?set CACHES}" \
    --runs $OUT/heldout-runs.json.gz >> $OUT/heldout-log.txt 2>&1
  echo "rc $?" >> $OUT/heldout-log.txt; tail -n 5 $OUT/heldout-log.txt
fi
