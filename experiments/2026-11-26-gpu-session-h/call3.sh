#!/bin/sh
# Optuna's GP to 30 seeds (from call2.sh's runs, carried in .gpu-in/prev) and its own cost per
# evaluation over 500 evaluations on the GEMM cache (one process). Carry [".gpu-in"]:
#   OUT=$OUT sh experiments/2026-11-26-gpu-session-h/call3.sh
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu-in/whl/*.whl 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
D=.gpu-in/data P=.gpu-in/prev T=${T:-400}
timeout $T python3 experiments/2026-11-26-optuna-strategies/gp_probe.py \
  $D/kerneltuner-benchmark_hub/gemm/RTX_3090.json.gz 500 > $OUT/gp_overhead.txt 2>&1 &
timeout $T python3 benchmarks/strategies.py --data $D --seeds 30 --jobs 14 --strategies optuna_gp \
  --kt-strategies genetic_algorithm --runs $OUT/gp-runs.json.gz,$P/gp-runs.json.gz > $OUT/gp.txt 2>&1 &
wait
tail -n 5 $OUT/*.txt
