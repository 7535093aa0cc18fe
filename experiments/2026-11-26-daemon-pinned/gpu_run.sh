#!/usr/bin/env bash
# Issue 23's last goal, measured as it is meant: the daemon on 2 cores of its own, the load
# generator on 4 others (on the 2-core development machine they share the two cores).
# benchmarks/daemon_load.py --workers 1,2 --rounds 3, the daemon pinned to SERVER_CPUS and the
# client to CLIENT_CPUS (defaults 2,3 and 4-7: clear of CPU 0, where the kernel's own work
# lands). The host runs only CPU work here; any GPU host of 8+ cores does.
# From the repository root, after experiments/2026-11-26-gpu-session-b/common.sh (the wheels on
# PYTHONPATH; .whl must hold the 'serve' and 'features' extras, see
# docs/results/2026-11-26-daemon-pinned.md):
#   source experiments/2026-11-26-gpu-session-b/common.sh
#   OUT=$R/daemon bash experiments/2026-11-26-daemon-pinned/gpu_run.sh; finish
# About 80-120 s (the first daemon trains the default model, about 30 s, then it is cached);
# the whole script stays under 150 s (`timeout`, counted from its start). Leaves in $OUT:
# daemon-pinned.txt (the table), daemon-pinned.json, daemon-pinned.err (progress), env.txt.
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT"
SERVER_CPUS=${SERVER_CPUS:-2,3}
CLIENT_CPUS=${CLIENT_CPUS:-4-7}
{
  echo "nproc=$(nproc) server_cpus=$SERVER_CPUS client_cpus=$CLIENT_CPUS"
  uptime
  for m in fastapi uvicorn httptools uvloop llvmlite sklearn; do
    python3 -c "import $m; print('$m', getattr($m, '__version__', '?'))" 2>&1 | tail -n 1
  done
} > "$OUT/env.txt" 2>&1
# Without llvmlite (its cp312 wheel is 57 MiB, too big to carry beside the others), the daemon
# serves a model of the compile-free features, which compiles nothing; env.txt says which ran.
model=()
if ! python3 -c "import llvmlite.binding" 2> /dev/null; then
  data=$(python3 -c "from perfport.wg.model import shipped_dataset; print(shipped_dataset())")
  timeout 45 python3 -m perfport wg train --data "$data" --compile-free \
    --out "$OUT/compile-free.model" >> "$OUT/env.txt" 2>&1 && model=(--model "$OUT/compile-free.model")
fi
echo "model: ${model[*]:-the default (every feature)}" >> "$OUT/env.txt"
timeout $((150 - SECONDS)) python3 benchmarks/daemon_load.py "${model[@]}" \
  --workers 1,2 --rounds 3 --server-cpus "$SERVER_CPUS" --client-cpus "$CLIENT_CPUS" \
  --json-out "$OUT/daemon-pinned.json" > "$OUT/daemon-pinned.txt" 2> "$OUT/daemon-pinned.err"
echo "exit $?" >> "$OUT/env.txt"
cat "$OUT/daemon-pinned.txt"
