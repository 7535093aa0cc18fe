#!/usr/bin/env bash
# Issue 25: `perfport split --times model` again after call 2, now that a device with no
# measured time alone gets a line proportional through its probe (call 2's line through the
# roofline's point planned the Xeon 2.4x too much), and `--times store` on the CPU + GPU
# stencil again (call 2's Xeon part ran 26.7 us a row against 10.1 in the measured run).
# About 130 s on nvidia-h200-x2. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-f/call3.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
mkdir -p "$R/logs"
db=/tmp/split.db
gunzip -c experiments/2026-11-26-gpu-session-f/call2/split.db.gz > "$db"  # ceilings stored
read -r g0 g1 <<< "$(python3 -c "import json; d=json.load(open('$R/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")"
cpu=$pocl
step() {  # NAME SECONDS CMD...
  local name=$1 secs=$2; shift 2
  timeout "$secs" "$@" > "$R/$name.json" 2> "$R/logs/$name.err"
  echo "$name rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
}
C26=(--problem n=67108864 mask=625 --dimension 0) S16=(--problem width=16384 height=16384 --dimension 1)
step cpugpu-conv26-model 45 python3 -m perfport split convolution --device $g0 --device $cpu \
  "${C26[@]}" --cpu-reserve 0 --times model --db "$db" --json
step cpugpu-stencil16384-model 45 python3 -m perfport split stencil --device $g0 --device $cpu \
  "${S16[@]}" --cpu-reserve 0 --times model --db "$db" --json
step twogpu-stencil16384-model 30 python3 -m perfport split stencil --device $g0 --device $g1 \
  "${S16[@]}" --times model --db "$db" --json
step cpugpu-stencil16384-store 45 python3 -m perfport split stencil --device $g0 --device $cpu \
  "${S16[@]}" --cpu-reserve 0 --times store --db "$db" --json
step cpugpu-conv26-model-2 45 python3 -m perfport split convolution --device $g0 --device $cpu \
  "${C26[@]}" --cpu-reserve 0 --times model --db "$db" --json
gzip -c "$db" > "$R/split.db.gz"
finish > /dev/null
cat "$R/times.txt"
python3 - "$R" <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*-*.json")):
    d = json.loads(p.read_text() or "{}")
    if "decision" in d:
        print(p.stem, d["times"], [round(c["time_ms"], 3) for c in d["configs"]], "parts", d["parts"],
              "kern", [round(k, 3) for k in d["part_kernel_ms"]], "probe", d["probe_ms"],
              "lines", d["lines"], "measured", round(d["measured_ms"], 3), "best", d["best_single"],
              "x", round(d["speedup_over_best_single"], 3), d["decision"], d["verified"])
PY
