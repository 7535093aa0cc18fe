#!/bin/sh
# What docs/results/2026-11-26-optuna-strategies.md could not measure on the 2-core machine
# (optuna_gp needs torch; the 30-seed runs and the 1M-result prior need cores), on the GPU
# machine's CPUs (no GPU is used). Before, on the CPU machine, from the project root:
#   mkdir -p .whl .gpu-in/data && cp -r ../shared/data/kerneltuner-benchmark_hub .gpu-in/data/
#   (cd .whl && pip download --only-binary=:all: --python-version 3.12 --no-deps optuna cmaes
#    colorlog tqdm alembic mako sqlalchemy)  # sqlalchemy: the manylinux cp312 wheel
# then run it with .whl and .gpu-in carried: sh experiments/2026-11-26-optuna-strategies/gpu_run.sh
set -u
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src OMP_NUM_THREADS=1
D=.gpu-in/data J=$(nproc)
nproc > $OUT/machine.txt; lscpu | grep 'Model name' >> $OUT/machine.txt
python3 -c "import optuna, torch, numpy, sqlite3; print('optuna', optuna.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__, 'sqlite', sqlite3.sqlite_version)" >> $OUT/machine.txt
# Kernel Tuner's stored runs (it is not installed there): reused, never remade.
python3 -c "
import gzip, json
r = json.load(gzip.open('benchmarks/results/strategies-runs.json.gz', 'rt'))
json.dump({k: v for k, v in r.items() if k.startswith('kernel_tuner|')}, gzip.open('/tmp/kt.json.gz', 'wt'))"
# 1. the prior at scale (one core)
timeout 560 python3 benchmarks/prior_scale.py --data $D --devices 64 --db /tmp/scale.db > $OUT/prior_scale.txt 2>&1 &
# 2. Optuna's GP: its cost per evaluation over 500 evaluations on GEMM (one core)
timeout 560 python3 experiments/2026-11-26-optuna-strategies/gp_probe.py $D/kerneltuner-benchmark_hub/gemm/RTX_3090.json.gz 500 > $OUT/gp_overhead.txt 2>&1 &
# 3. GP, 10 seeds per cache
timeout 560 python3 benchmarks/strategies.py --data $D --seeds 10 --jobs $((J / 2 - 2)) --strategies optuna_gp --runs $OUT/runs_gp.json.gz,/tmp/kt.json.gz --json $OUT/summary_gp.json > $OUT/log_gp.txt 2>&1 &
# 4. the others, 30 seeds per cache, and their overhead at 500 evaluations
timeout 560 python3 benchmarks/strategies.py --data $D --seeds 30 --jobs $((J / 2)) --overhead 500 --strategies optuna_tpe,optuna_cmaes,optuna_qmc,bayes_rf,random --runs $OUT/runs.json.gz,/tmp/kt.json.gz --json $OUT/summary.json > $OUT/log.txt 2>&1
echo "main rc=$?"
wait
tail -3 $OUT/log_gp.txt $OUT/gp_overhead.txt $OUT/prior_scale.txt
