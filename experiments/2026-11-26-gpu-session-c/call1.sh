#!/usr/bin/env bash
# Device call 1 (nvidia-h200-x2): issue 28 item 4, a brute-force campaign of 2,000
# stencil_wide configurations (2048 x 2048) on one GPU and on both through Dask.
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R/cluster timeout 540 bash experiments/2026-11-26-cluster/gpu_run.sh > "$R/cluster.log" 2>&1
echo "cluster rc=$? after $((SECONDS - start)) s" | tee "$R/times.txt"
grep -v "distributed\.\|^\s*$" "$R/cluster/scaling-dask.log" | tail -n 8 > "$R/cluster/progress-tail.txt"
gzip -9 "$R/cluster/scaling-dask.log"
finish
cat "$R/times.txt" "$R/cluster.log"; cat "$R/cluster/progress-tail.txt"
