# Call 4: the new 5-point built-in stencil_cross at 4096x4096, default strategy, cold, through
# NVIDIA OpenCL and CUDA; its best re-timed against the same run's copy of the same bytes.
source experiments/2026-11-26-gpu-session-b/common.sh
KERNEL=stencil_cross RUN_NAME=stencil-cross TUNE_TIME=60 RECHECK_TIME=10 DEADLINE=300 \
  OUT=$R bash experiments/2026-11-26-roofline-size/gpu_run.sh
for f in "$R"/stencil-cross/compare-*.json; do
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1], d['config'], d['at_problem'], d['cupy_copy'])" "$f"
done
finish
