#!/usr/bin/env bash
# Issue 31: stencil work-group scenarios on the GPU machine's host CPU through PoCL, at two
# thread counts, in 8 interleaved rounds; at most about 285 s in all (BUDGET=270 seconds, plus
# the timeouts' slack). Each scenario measures 32 candidate sizes that cover the shipped CPU
# scenarios' best ones, and w(32x4) (--candidates: about 7x fewer launches and builds than all
# 229), so each thread count is expected to get 15 or more scenarios where all sizes gave 1-2.
# Run from the repository root (GPU.md's wheels in .whl; llvmlite is not needed there):
#   bash experiments/2026-11-26-wg-cpu/gpu_host_collect.sh
#   THREADS="16" BUDGET=200 bash experiments/2026-11-26-wg-cpu/gpu_host_collect.sh
# Outputs under $OUT: cpu-T.db.gz (one store per thread count T), devices-T.json (what PoCL
# reports at T: whether its compute units follow the thread count), log-T.txt, lscpu.txt.
# Then, here (features need PoCL and llvmlite; each T its own dataset):
#   gunzip -k cpu-T.db.gz && perfport wg dataset --db cpu-T.db --out cpu-T.npz --json
#   python experiments/2026-11-26-wg-cpu/wg_cpu_eval.py --add cpu-32.npz --add cpu-8.npz ...
#   python experiments/2026-11-22-wg-repeatability/wg_rounds.py --from-db cpu-T.db --rounds 8 --save cpu-T.samples.npz
#   perfport wg evaluate --data MERGED.npz --partitions kernel --samples cpu-T.samples.npz --json   # README.md
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
HERE=experiments/2026-11-26-wg-cpu
PY=${PYTHON:-python3}  # the GPU machine's python3; PYTHON=... elsewhere
if [ -d .whl ]; then
  "$PY" -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD/src
CORES=$(nproc)
THREADS=${THREADS:-"$CORES $((CORES / 4))"}
BUDGET=${BUDGET:-270}
PREBUILD_S=${PREBUILD_S:-45}
# Which scenarios: the real-world kernels at 512^2 first, then compact synthetic stencils of a
# seed the shipped dataset has not used (its compact ones are --seed 1).
PICK=${PICK:-"--scenarios 40 --sizes 512 --max-border 5 --seed 7 --rounds 8 --repeats 1 --candidates 32"}
lscpu > "$OUT/lscpu.txt" 2>&1
# PoCL 5 names the thread limit POCL_CPU_MAX_CU_COUNT, older PoCL (pip's 3.0) POCL_MAX_PTHREAD_COUNT.
limit() { env POCL_CPU_MAX_CU_COUNT="$1" POCL_MAX_PTHREAD_COUNT="$1" "${@:2}"; }
DEV=$("$PY" -m perfport devices --json | "$PY" -c "
import json, sys
print(next(d['id'] for d in json.load(sys.stdin)['devices'] if d['type'] == 'cpu'))")
echo "host CPU device: $DEV; thread counts: $THREADS; budget ${BUDGET} s" | tee "$OUT/summary.txt"
started=$SECONDS
# Every size's PoCL specialisation, built once by one-thread workers into PoCL's kernel cache
# (its key does not depend on the thread count); --max-time 0: then measure nothing.
limit 1 timeout $((PREBUILD_S + 10)) "$PY" "$HERE/../2026-11-23-wg-xeon-rounds/wg_collect_rounds.py" \
  --device "$DEV" $PICK --prebuild "$CORES" --prebuild-time "$PREBUILD_S" --max-time 0 \
  --db "$OUT/prebuild.db" > "$OUT/log-prebuild.txt" 2>&1
rm -f "$OUT/prebuild.db"
set -- $THREADS
left=$((BUDGET - (SECONDS - started)))
share=$((left / $#))
for T in $THREADS; do
  limit "$T" "$PY" -m perfport devices --json > "$OUT/devices-$T.json"
  # --max-time starts no scenario after the share; timeout ends one that overruns (it is lost;
  # with 33 sizes a scenario takes seconds, so the slack is small).
  limit "$T" timeout $((share + 5)) "$PY" "$HERE/../2026-11-23-wg-xeon-rounds/wg_collect_rounds.py" \
    --device "$DEV" $PICK --prebuild 0 --max-time $((share - 10)) --db "$OUT/cpu-$T.db" \
    > "$OUT/log-$T.txt" 2>&1
  echo "T=$T rc=$? compute_units=$("$PY" -c "
import json; print([d['compute_units'] for d in json.load(open('$OUT/devices-$T.json'))['devices'] if d['type'] == 'cpu'])") \
scenarios=$(grep -c '"scenario"' "$OUT/log-$T.txt")" | tee -a "$OUT/summary.txt"
  gzip -9 -n -f "$OUT/cpu-$T.db" 2>/dev/null
done
echo "done in $((SECONDS - started)) s" | tee -a "$OUT/summary.txt"
