#!/bin/sh
# Optuna's samplers again on the three development caches that hold failed configurations,
# after failures became worse than every success (2026-11-27), on the GPU machine's 16 CPU
# cores (replay only). Before, on the CPU machine: .gpu-in/whl as in
# experiments/2026-11-26-gpu-session-h/README.md, and .gpu-in/data6 holding
# kerneltuner-benchmark_hub/{t1_inputs,convolution/RTX_3090.json.gz,
# convolution_milo/A100.json.gz,convolution_milo/A4000.json.gz} from ../shared/data.
# Run with carry [".gpu-in/whl", ".gpu-in/data6"]: OUT=$OUT sh experiments/2026-11-27-optuna-failures/call.sh
set -u
OUT=${OUT:?set OUT}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu-in/whl/*.whl 2> $OUT/pip.err
export PYTHONPATH=/tmp/site:$PWD/src:$PWD/benchmarks OMP_NUM_THREADS=1
D=.gpu-in/data6 T=${T:-530}
python3 -c "import optuna, torch, numpy; print('optuna', optuna.__version__, 'torch', torch.__version__, 'numpy', numpy.__version__)" > $OUT/machine.txt 2>&1
nproc >> $OUT/machine.txt
timeout $T python3 benchmarks/strategies.py --data $D --seeds 30 --jobs 7 --budgets 20,50,100,200 \
  --strategies optuna_tpe,optuna_cmaes,optuna_qmc --kt-strategies "" --runs $OUT/optuna-runs.json.gz > $OUT/optuna.txt 2>&1 &
timeout $T python3 benchmarks/strategies.py --data $D --seeds 30 --jobs 9 --budgets 20,50,100,200 \
  --strategies optuna_gp --kt-strategies "" --runs $OUT/gp-runs.json.gz,${GP_IN:-/dev/null/x} > $OUT/gp.txt 2>&1 &
wait
mkdir -p /tmp/keep && cp $OUT/*.json.gz /tmp/keep/
tail -n 30 $OUT/optuna.txt $OUT/gp.txt
