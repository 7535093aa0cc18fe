#!/bin/sh
# Budget-500 runs of the strategies benchmarks/strategies.py had at 200 only, on the GPU
# machine's 16 CPU cores (replay only; no GPU). Carry [".gpu-in"]: .gpu-in/hub holds the six
# caches of ../shared/data and t1_inputs; .gpu-in/whl Optuna 5.0.0 and its dependencies the
# machine lacks (cp312); .gpu-in/part.json.gz, if there, the runs of an earlier call (a call
# cut short by its time limit resumes from them).
#   STRATEGIES=portfolio,bayes_ts SEEDS=30 OUT=$OUT sh experiments/2026-11-27-budget500-all/call.sh
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu-in/whl/*.whl 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
{ nproc --all; lscpu | grep 'Model name'; python3 -c "import numpy; print('numpy', numpy.__version__)"; date -u; } > $OUT/machine.txt 2>&1
[ -f .gpu-in/part.json.gz ] && cp .gpu-in/part.json.gz $OUT/runs.json.gz
timeout ${T:-560} python3 benchmarks/strategies.py --data .gpu-in/hub --seeds ${SEEDS:-30} --budgets 500 \
  --jobs 16 --strategies "${STRATEGIES:?set STRATEGIES}" --kt-strategies "" --runs $OUT/runs.json.gz >> $OUT/log.txt 2>&1
echo "rc $? $(date -u)" >> $OUT/log.txt
tail -n 4 $OUT/log.txt
