# Call 12: stencil_wide (the 3x3 box mean) after the one-path change: the 60 s default search,
# cold, through NVIDIA OpenCL and CUDA, re-timed against the same run's copy. About 200 s.
source experiments/2026-11-26-gpu-session-b/common.sh
KERNEL=stencil_wide RUN_NAME=stencil-wide TUNE_TIME=60 RECHECK_TIME=10 DEADLINE=230 \
  OUT=$R bash experiments/2026-11-26-roofline-size/gpu_run.sh
for f in "$R"/stencil-wide/compare-*.json; do
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1], d['config'], d['at_problem'], d['cupy_copy'])" "$f"
done
gzip -9 "$R"/stencil-wide/roof.db
rm -rf "$R"/stencil-wide/compare-*-work
finish
