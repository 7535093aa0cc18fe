#!/usr/bin/env bash
# Device call 2 (any kind with one GPU or more): issue 29's size-aware roofline and default
# search on stencil_wide (under 240 s), then issue 23's daemon pinned to 2 cores with its load
# generator on 4 others (under 150 s). .whl must hold the serve extra's wheels (fastapi,
# uvicorn, httptools, uvloop, pydantic and their dependencies; see
# experiments/2026-11-26-daemon-pinned/gpu_run.sh).
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
OUT=$R timeout 250 bash experiments/2026-11-26-roofline-size/gpu_run.sh > "$R/roofline-size.log" 2>&1
echo "roofline-size rc=$? at $((SECONDS - start)) s" | tee "$R/times.txt"
OUT=$R/daemon timeout 160 bash experiments/2026-11-26-daemon-pinned/gpu_run.sh > "$R/daemon.log" 2>&1
echo "daemon rc=$? at $((SECONDS - start)) s" | tee -a "$R/times.txt"
finish
cat "$R/times.txt"; tail -n 15 "$R/roofline-size.log" "$R/daemon.log"
