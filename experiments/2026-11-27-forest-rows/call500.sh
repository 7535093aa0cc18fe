#!/bin/sh
# perfport's default, bayes_sweep and bayes_rf at budget 500, 30 seeds, on the six caches of
# ../shared/data (carry [".gpu-in/hub"] holding exactly those), GPU machine's 16 CPU cores.
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
lscpu | grep 'Model name' > $OUT/machine.txt
# A second call resumes: carry the first call's runs as .gpu-in/runs500.json.gz too.
[ -f .gpu-in/runs500.json.gz ] && cp .gpu-in/runs500.json.gz $OUT/runs500.json.gz
timeout 570 python3 benchmarks/strategies.py --data .gpu-in/hub --seeds 30 --budgets 500 --jobs 16 \
  --strategies prior,bayes_sweep,bayes_rf --kt-strategies "" --runs $OUT/runs500.json.gz > $OUT/log500.txt 2>&1
echo "rc $?" >> $OUT/log500.txt
tail -n 12 $OUT/log500.txt
