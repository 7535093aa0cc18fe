#!/bin/sh
# perfport's runs on the held-out caches, on the GPU machine's 16 CPU cores (replay only; no
# GPU). Before, on the CPU machine, fill .gpu-in/hub with get_caches.py's copy, one kernel
# family group at a time (the carry limit is 64 MiB with the repository):
#   call 1: dedispersion_milo, pnpoly (+ t1_inputs); call 2: gemm, convolution, convolution_milo
# Run with carry [".gpu-in"]: OUT=$OUT sh experiments/2026-11-27-heldout-caches/call.sh
# Kernel Tuner's runs were made on the CPU machine (its dependencies do not fit the carry).
set -u
OUT=${OUT:?set OUT}
export PYTHONPATH=$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
{ nproc; lscpu | grep 'Model name'; python3 -c "import numpy; print('numpy', numpy.__version__)"; } > $OUT/machine.txt 2>&1
ls .gpu-in/hub/kerneltuner-benchmark_hub/*/ >> $OUT/machine.txt
timeout ${T:-560} python3 benchmarks/strategies.py --data .gpu-in/hub --seeds 30 --budgets 200 \
  --jobs 16 --strategies prior,bayes_sweep,random --kt-strategies "" \
  --caches "${CACHES:?set CACHES}" --runs $OUT/runs.json.gz > $OUT/log.txt 2>&1
echo "rc $?" >> $OUT/log.txt
tail -n 25 $OUT/log.txt
