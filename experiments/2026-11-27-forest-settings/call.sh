#!/bin/sh
# Candidates' cold runs on the GPU machine's 16 CPU cores (replay only; no GPU), beside the
# stored bayes_sweep runs that experiments/2026-11-27-heldout-caches made there.
# Before, on the CPU machine, fill .gpu-in/hub with get_caches.py's copy, one group at a time
# (the carry limit): call 1 gemm, convolution, convolution_milo (+ t1_inputs).
# Run with carry [".gpu-in"]: OUT=$OUT SPECS=... SEEDS=10 sh experiments/2026-11-27-forest-settings/call.sh
set -u
OUT=${OUT:?set OUT}
export PYTHONPATH=$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
{ lscpu | grep 'Model name'; python3 -c "import numpy; print('numpy', numpy.__version__)"; } > $OUT/machine.txt 2>&1
timeout ${T:-560} python3 experiments/2026-11-27-forest-settings/run.py --data .gpu-in/hub \
  --seeds ${SEEDS:?set SEEDS} --jobs 16 --candidates "${SPECS:?set SPECS}" ${CACHES:+--caches "$CACHES"} \
  --runs $OUT/runs.json.gz,experiments/2026-11-27-heldout-caches/runs.json.gz > $OUT/log.txt 2>&1
echo "rc $?" >> $OUT/log.txt
tail -n 40 $OUT/log.txt
