#!/bin/sh
# On the GPU machine's 16 CPU cores (replay only; no GPU): the capped forest at budget 1,000 on
# the two held-out caches that need more than 256 evaluations, and capped against uncapped at
# budget 500 on the six development caches; then the overhead, one process.
# Carry [".gpu-in/hub"] with convolution, convolution_milo, gemm, pnpoly and t1_inputs.
set -u
OUT=${OUT:?set OUT}
export PYTHONPATH=$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
E=experiments/2026-11-27-forest-rows
{ lscpu | grep 'Model name'; python3 -c "import numpy; print('numpy', numpy.__version__)"; } > $OUT/machine.txt 2>&1
timeout 300 python3 $E/run.py --data .gpu-in/hub --seeds 30 --budgets 1000 --jobs 16 \
  --strategies bayes_sweep --kt-strategies "" --caches convolution_milo/W6600,pnpoly/RTX_Titan \
  --runs $OUT/runs1000.json.gz > $OUT/log1000.txt 2>&1
echo "rc $?" >> $OUT/log1000.txt
timeout 200 python3 $E/run.py --data .gpu-in/hub --seeds 10 --budgets 500 --jobs 16 \
  --strategies bayes_sweep,sweep_allrows --kt-strategies "" \
  --caches convolution/RTX_3090,convolution_milo/A100,convolution_milo/A4000,convolution_milo/MI250X,gemm/RTX_2080_Ti,gemm/RTX_3090 \
  --runs $OUT/runs500.json.gz > $OUT/log500.txt 2>&1
echo "rc $?" >> $OUT/log500.txt
timeout 90 python3 $E/overhead.py --data .gpu-in/hub --rounds 2 > $OUT/overhead.txt 2>&1
tail -n 5 $OUT/log1000.txt $OUT/log500.txt $OUT/overhead.txt
