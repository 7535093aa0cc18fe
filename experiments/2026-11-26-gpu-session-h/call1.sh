#!/bin/sh
# Issue 27, item 4's gaps, replayed on the GPU machine's 16 CPU cores (no GPU is used):
# Optuna's GP sampler (needs torch, which the 2-core machine lacks), the other Optuna samplers
# to 30 seeds, and budget 500 to 30 seeds. Before, on the CPU machine (README.md):
#   .gpu-in/whl: optuna and the dependencies the device machine lacks (cp312; README.md)
#   .gpu-in/data: a copy of ../shared/data/kerneltuner-benchmark_hub
# Run with carry [".gpu-in"]: OUT=$OUT sh experiments/2026-11-26-gpu-session-h/call1.sh
# A part cut short by its timeout keeps its runs (saved every 30 s); call2.sh goes on from them.
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu-in/whl/*.whl 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
D=.gpu-in/data R=benchmarks/results
{ nproc; lscpu | grep 'Model name'; python3 -c "import optuna, torch, numpy; print('optuna', optuna.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__)"; } > $OUT/machine.txt 2>&1
T=${T:-540}
# Optuna's GP, 10 seeds per cache at budget 200 (5 processes)
timeout $T python3 benchmarks/strategies.py --data $D --seeds 10 --jobs 5 --strategies optuna_gp \
  --kt-strategies genetic_algorithm --runs $OUT/gp-runs.json.gz,${GP_IN:-/dev/null/x},$R/strategies-runs.json.gz \
  > $OUT/gp.txt 2>&1 &
# TPE, CMA-ES and QMC from 10 to 30 seeds (5 processes)
timeout $T python3 benchmarks/strategies.py --data $D --seeds 30 --jobs 5 --strategies optuna_tpe,optuna_cmaes,optuna_qmc \
  --kt-strategies genetic_algorithm --runs $OUT/optuna-runs.json.gz,${OPTUNA_IN:-$R/optuna-runs-2026-11-26.json.gz},$R/strategies-runs.json.gz \
  > $OUT/optuna.txt 2>&1 &
# Budget 500 from 10 to 30 seeds (6 processes)
timeout $T python3 benchmarks/strategies.py --data $D --seeds 30 --jobs ${J500:-6} --budgets 20,50,100,200,500 \
  --strategies prior,bayes_sweep,bayes_rf --kt-strategies "" \
  --runs $OUT/500-runs.json.gz,${B500_IN:-$R/strategies-500-runs-2026-11-26.json.gz},$R/strategies-runs.json.gz \
  > $OUT/500.txt 2>&1 &
wait
mkdir -p /tmp/keep && cp $OUT/*.json.gz /tmp/keep/  # a warm machine's next call can go on from these
tail -n 5 $OUT/*.txt
ls -la $OUT
