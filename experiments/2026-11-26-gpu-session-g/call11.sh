# Call 11: stencil_cross after the one-path change (commit "one direct vector path for every
# whole run"): the 60 s default search, cold, through NVIDIA OpenCL and CUDA, re-timed; then
# 5 alternating rounds against the same round's copy of the same bytes. About 350 s.
source experiments/2026-11-26-gpu-session-b/common.sh
KERNEL=stencil_cross RUN_NAME=stencil-cross TUNE_TIME=60 RECHECK_TIME=10 DEADLINE=220 \
  OUT=$R bash experiments/2026-11-26-roofline-size/gpu_run.sh
for f in "$R"/stencil-cross/compare-*.json; do
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1], d['config'], d['at_problem'], d['cupy_copy'])" "$f"
done
ROUNDS=5 OUT=$R bash experiments/2026-11-26-stencil-cross/rounds.sh
python3 experiments/2026-11-26-stencil-cross/analyse.py "$R/rounds" | tee "$R/rounds/analyse.txt"
gzip -9 "$R"/stencil-cross/roof.db
rm -rf "$R"/stencil-cross/compare-*-work
finish
