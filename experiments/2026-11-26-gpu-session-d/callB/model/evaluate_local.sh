#!/usr/bin/env bash
# The evaluations and the guided replay of gpu_run.sh, run again with no GPU on this run's
# stored measurements (every evaluate and the replay crashed on the GPU machine: loopy could
# not count lmem_stride_pattern at lid_stride_0:2; fixed in perfport.model.gather). From the
# repository root, about 4 minutes on the 2-core machine (the guided replays 2 minutes each):
#   bash experiments/2026-11-26-gpu-session-d/callB/model/evaluate_local.sh
# Writes evaluate*.json, figures-*/, guided*.json, guided*.txt and logs/local-*.err here.
set -u
here=experiments/2026-11-26-gpu-session-d/callB/model
db=${DB:-/tmp/model-h200-d.db} gdb=${GDB:-/tmp/model-h200-d-guided.db}
gunzip -c "$here/model.db.gz" > "$db" && gunzip -c "$here/guided.db.gz" > "$gdb"
pp() { python3 -m perfport "$@"; }
models=src/perfport/datasets/model
pp model evaluate --db "$db" --write-data "$here/data.csv" --json \
  --figures "$here/figures-matmul-linear" > "$here/evaluate.json" 2> "$here/logs/local-evaluate.err"
pp model evaluate --db "$db" --json --nonnegative \
  > "$here/evaluate-nonnegative.json" 2> "$here/logs/local-evaluate-nn.err"
for m in paper:paper-linear overlap:matmul-overlap paper-overlap:paper-overlap \
  paper-groups:paper-linear-groups paper-lstride:paper-linear-lstride; do
  pp model evaluate --db "$db" --json --model "$models/${m#*:}.json" \
    --figures "$here/figures-${m#*:}" > "$here/evaluate-${m%%:*}.json" \
    2> "$here/logs/local-evaluate-${m%%:*}.err"
  pp model evaluate --db "$db" --json --nonnegative --model "$models/${m#*:}.json" \
    > "$here/evaluate-${m%%:*}-nonnegative.json" 2> "$here/logs/local-evaluate-${m%%:*}-nn.err"
done
# The default model (matmul-linear, as gpu_run.sh) and the two per-access-pattern models.
for m in "" paper-linear-groups paper-linear; do
  sfx=${m:+-$m}
  python3 benchmarks/model_guided.py replay --db "$gdb" --data "$here/data.csv" \
    ${m:+--model $models/$m.json} --sizes matmul=2048,dg=131072,fd=8960 \
    --json "$here/guided$sfx.json" > "$here/guided$sfx.txt" 2> "$here/logs/local-guided$sfx.err"
done
