#!/bin/sh
# Optuna's GP sampler (it needs torch, which the GPU machine has) on the held-out caches, cold,
# 10 seeds, on the GPU machine's 16 cores. .gpu-in/whl: optuna 5.0.0, cmaes and their
# dependencies the machine lacks (cp312; experiments/2026-11-26-gpu-session-h/README.md);
# .gpu-in/hub: the caches of this call only (the carry limit).
# Run with carry [".gpu-in"]: CACHES=... OUT=$OUT sh experiments/2026-11-27-heldout-caches/call_optuna.sh
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu-in/whl/*.whl 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src OMP_NUM_THREADS=1
timeout ${T:-540} python3 benchmarks/strategies.py --data .gpu-in/hub --seeds 10 --budgets 200 \
  --jobs 16 --strategies optuna_gp --kt-strategies "" --caches "${CACHES:?set CACHES}" \
  --runs $OUT/optuna-runs.json.gz > $OUT/optuna-log.txt 2>&1
echo "rc $?" >> $OUT/optuna-log.txt
tail -n 20 $OUT/optuna-log.txt
