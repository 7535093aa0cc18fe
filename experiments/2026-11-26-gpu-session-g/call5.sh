# Call 5: stencil_cross's fraction of a copy of the same bytes with its spread (5 alternating
# rounds per device), then a longer default search through CUDA (120 s).
source experiments/2026-11-26-gpu-session-b/common.sh
ROUNDS=5 OUT=$R bash experiments/2026-11-26-stencil-cross/rounds.sh
python3 experiments/2026-11-26-stencil-cross/analyse.py "$R/rounds" | tee "$R/rounds/analyse.txt"
KERNEL=stencil_cross RUN_NAME=stencil-cross-long DEVICES=cuda:0 TUNE_TIME=120 RECHECK_TIME=10 \
  DEADLINE=200 OUT=$R bash experiments/2026-11-26-roofline-size/gpu_run.sh
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['config'], d['at_problem'], d['cupy_copy'])" \
  "$R/stencil-cross-long/compare-cuda_0.json"
finish
