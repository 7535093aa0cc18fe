#!/usr/bin/env bash
# Device call 5 (nvidia-h200-x2, warm after call 4): call 4's two single-launch splits, cut by
# their timeouts there, again with --iterations 3 and no sweep. This is the call's command:
source experiments/2026-11-26-gpu-session-b/common.sh >/dev/null 2>&1
gunzip -c experiments/2026-11-26-gpu-session-b/call3/split/split.db.gz > /tmp/s5.db
for d in "opencl:0:0 opencl:0:1" "cuda:0 cuda:1"; do
  set -- $d; n=${1%%:*}
  timeout 65 python3 -m perfport split stencil --device "$1" --device "$2" \
    --problem width=16384 height=16384 --dimension 1 --iterations 3 --db /tmp/s5.db --json \
    > "$R/split-$n.json" 2> "$R/split-$n.err"
done
finish >/dev/null
