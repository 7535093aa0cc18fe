#!/bin/sh
# Budget-500 runs of the two strategies the benchmark still lacked there (optuna_gp and Kernel
# Tuner's bayes_opt), on the GPU machine's 16 CPU cores (replay only; no GPU). Carry
# .gpu-in/hub (the six caches of ../shared/data and t1_inputs), .gpu-in/part.json.gz (if there,
# an earlier call's runs, resumed) and the wheels the machine lacks (cp312): .gpu-in/kt for
# Kernel Tuner 1.5.0, .gpu-in/whl for Optuna 5.0.0; both at once pass the 64 MiB limit.
#   KT=bayes_opt TK=540 OUT=$OUT sh experiments/2026-11-27-budget500-gp/call.sh        # kt
#   STRATEGIES=optuna_gp T=540 OUT=$OUT sh experiments/2026-11-27-budget500-gp/call.sh # whl
set -u
OUT=${OUT:?set OUT}
# Either wheel folder may be left behind (the working tree's 64 MiB): install what came.
python3 -m pip install -q --no-index --no-deps --target /tmp/site $(ls .gpu-in/whl/*.whl .gpu-in/kt/*.whl 2>/dev/null) 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
{ nproc --all; lscpu | grep 'Model name'; python3 -c "import numpy, torch; print('numpy', numpy.__version__, 'torch', torch.__version__)"; date -u; } > $OUT/machine.txt 2>&1
[ -f .gpu-in/part.json.gz ] && cp .gpu-in/part.json.gz $OUT/runs.json.gz
run() {  # seconds, perfport strategies, Kernel Tuner strategies
  timeout "$1" python3 benchmarks/strategies.py --data .gpu-in/hub --seeds 30 --budgets 500 \
    --jobs 16 --strategies "$2" --kt-strategies "$3" --runs $OUT/runs.json.gz >> $OUT/log.txt 2>&1
  echo "rc $? $(date -u)" >> $OUT/log.txt
}
[ -n "${KT:-}" ] && run "${TK:-300}" "" "$KT"
[ -n "${STRATEGIES:-}" ] && run "${T:-300}" "$STRATEGIES" ""
tail -n 6 $OUT/log.txt
