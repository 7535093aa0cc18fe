#!/usr/bin/env bash
# Device call 2 (nvidia-h200-x2): issue 28 item 4, a brute-force campaign of 2,000
# configurations on one GPU and on both through Dask (ONLY=one|many to run one of them).
source experiments/2026-11-26-gpu-session-b/common.sh
OUT=$R/cluster timeout 570 bash experiments/2026-11-26-cluster/gpu_run.sh > "$R/cluster.log" 2>&1
finish
tail -n 20 "$R/cluster.log"; tail -n 5 "$R"/cluster/scaling-dask.log
