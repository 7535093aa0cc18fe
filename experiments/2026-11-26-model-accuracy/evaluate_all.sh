#!/usr/bin/env bash
# Issue 24's accuracy: the per-access-pattern model before and after, on the stored H200 run
# and the shipped PoCL data; one evaluation each (the application times are the test set).
#   bash experiments/2026-11-26-model-accuracy/evaluate_all.sh [OUTDIR]
set -euo pipefail
out=${1:-docs/results/2026-11-26-model-accuracy}
mkdir -p "$out"
models=src/perfport/datasets/model
declare -A data=(
  [h200]=experiments/2026-11-26-gpu-session-b/call1/model/data.csv
  [pocl]=$models/pocl-paper.csv
  [pocl-barriers]=$models/pocl-paper-barriers.csv
)
for where in h200 pocl pocl-barriers; do
  for model in paper-linear paper-linear-groups; do
    for fit in lm nonnegative; do
      flag=(); [ "$fit" = nonnegative ] && flag=(--nonnegative)
      perfport model evaluate --data "${data[$where]}" --model "$models/$model.json" \
        "${flag[@]}" --json > "$out/$where-$model-$fit.json"
    done
  done
done
