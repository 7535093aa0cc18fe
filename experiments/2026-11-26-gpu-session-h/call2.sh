#!/bin/sh
# Goes on from call1.sh's runs (carried in .gpu-in/prev, its $OUT's runs files): budget 500 to
# 30 seeds (12 processes) and Optuna's GP to 20 seeds (4 processes). Run with carry [".gpu-in"]:
#   OUT=$OUT sh experiments/2026-11-26-gpu-session-h/call2.sh
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu-in/whl/*.whl 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
D=.gpu-in/data R=benchmarks/results P=.gpu-in/prev T=${T:-540}
timeout $T python3 benchmarks/strategies.py --data $D --seeds 20 --jobs 4 --strategies optuna_gp \
  --kt-strategies genetic_algorithm --runs $OUT/gp-runs.json.gz,$P/gp-runs.json.gz > $OUT/gp.txt 2>&1 &
timeout $T python3 benchmarks/strategies.py --data $D --seeds 30 --jobs 12 --budgets 20,50,100,200,500 \
  --strategies prior,bayes_sweep,bayes_rf --kt-strategies "" \
  --runs $OUT/500-runs.json.gz,$P/500-runs.json.gz > $OUT/500.txt 2>&1 &
wait
tail -n 5 $OUT/*.txt
ls -la $OUT
