#!/usr/bin/env bash
# Issue 25: `perfport split --times store|model` (plans from the tuned times in the store, or
# from the roofline's prediction, running only the device given the least time alone) on
# GPU + Xeon (convolution 2^26, stencil 16384^2) and two GPUs (stencil 16384^2), after
# `perfport roofline` of each device into the same database; `--times measured` last, side by
# side, where the budget allows. Issue 24: `perfport tune examples/loopy_transpose.py` (a
# user's loopy space file) on the second H200, every configuration, then model-guided from
# an H200 calibration of paper-linear.json made here from session d's measurement kernels.
# About 450 s on nvidia-h200-x2 (on nvidia-h200, one GPU, the two-GPU runs are skipped). Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-f/call2.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
BUDGET=${BUDGET:-540}
mkdir -p "$R/logs"
db=/tmp/split.db
gunzip -c experiments/2026-11-26-gpu-session-b/call3/split/split.db.gz > "$db"
cpu=$pocl
# NVIDIA OpenCL's GPUs: the first, and the second where there is one (nvidia-h200 has one:
# the two-GPU runs are skipped)
read -r g0 g1 <<< "$(python3 -c "import json; d=json.load(open('$R/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")"
g1=${g1:-}
step() {  # NAME SECONDS CMD...: run under timeout, skipped when it could end past BUDGET
  local name=$1 secs=$2; shift 2
  if (( SECONDS - start + secs > BUDGET )); then echo "$name: skipped" >> "$R/times.txt"; return; fi
  timeout "$secs" "$@" > "$R/$name.json" 2> "$R/logs/$name.err"
  echo "$name rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
}
for d in $g0 ${g1:-} $cpu; do
  step "roofline-${d//:/_}" 40 python3 -m perfport roofline --device "$d" --db "$db" --json
done
C26=(--problem n=67108864 mask=625 --dimension 0) S16=(--problem width=16384 height=16384 --dimension 1)
for t in store model measured; do
  step "cpugpu-conv26-$t" 45 python3 -m perfport split convolution --device $g0 --device $cpu \
    "${C26[@]}" --cpu-reserve 0 --times $t --db "$db" --json
  step "cpugpu-stencil16384-$t" 45 python3 -m perfport split stencil --device $g0 --device $cpu \
    "${S16[@]}" --cpu-reserve 0 --times $t --db "$db" --json
  [ -n "$g1" ] && step "twogpu-stencil16384-$t" 30 python3 -m perfport split stencil --device $g0 --device $g1 \
    "${S16[@]}" --times $t --db "$db" --json
  [ $t = model ] && BUDGET=$((BUDGET - 150))  # leave the loopy part its time
done
BUDGET=${BUDGET_ALL:-560}
gunzip -c experiments/2026-11-26-gpu-session-d/callB/model/model.db.gz > /tmp/model.db
step calibrate 90 python3 -m perfport model calibrate src/perfport/datasets/model/paper-linear.json \
  --device ${g1:-$g0} --db /tmp/model.db --out "$R/h200-paper-linear.json" --nonnegative --json
step loopy-default 60 python3 -m perfport tune examples/loopy_transpose.py --device ${g1:-$g0} \
  --problem n=8192 --db /tmp/loopy.db --json
step loopy-guided 60 python3 -m perfport tune examples/loopy_transpose.py --device ${g1:-$g0} \
  --problem n=8192 --strategy model_guided --calibration "$R/h200-paper-linear.json" \
  --budget 4 --db /tmp/loopy-guided.db --json
gzip -c "$db" > "$R/split.db.gz"; gzip -c /tmp/loopy.db > "$R/loopy.db.gz"
gzip -c /tmp/loopy-guided.db > "$R/loopy-guided.db.gz"
finish > /dev/null
cat "$R/times.txt"
python3 - "$R" <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*-*.json")):
    try:
        d = json.loads(p.read_text() or "{}")
    except ValueError:
        continue
    if "decision" in d:
        print(p.stem, d["times"], [c["time_ms"] for c in d["configs"]], "parts", d["parts"],
              "theo", round(d["theoretical_ms"], 3), "measured", round(d["measured_ms"], 3),
              "best", d["best_single"], "x", round(d["speedup_over_best_single"], 3), d["decision"], d["verified"])
PY
