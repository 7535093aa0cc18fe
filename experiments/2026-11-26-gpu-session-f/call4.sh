#!/usr/bin/env bash
# Regression of this session's split changes on the GPU machine: time-stepping (its buffers
# now chosen per run: GPUs and CUDA keep copies) on two H200s through NVIDIA OpenCL and CUDA,
# and on GPU + Xeon with rebalancing; and rebalancing (`--iterations 4`) after a plan from
# the roofline's times (`--times model`: the rebalancer's stop rule now compares with the
# device measured alone, not the model's time) and from the stored times. About 230 s on
# nvidia-h200-x2. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-f/call4.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
mkdir -p "$R/logs"
db=/tmp/split.db
gunzip -c experiments/2026-11-26-gpu-session-f/call2/split.db.gz > "$db"  # tuned, ceilings
read -r g0 g1 <<< "$(python3 -c "import json; d=json.load(open('$R/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")"
cpu=$pocl
step() {  # NAME SECONDS ARGS...: perfport split ARGS
  local name=$1 secs=$2; shift 2
  timeout "$secs" python3 -m perfport split "$@" --db "$db" --json > "$R/$name.json" 2> "$R/logs/$name.err"
  echo "$name rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
}
S16=(--problem width=16384 height=16384 --dimension 1) C26=(--problem n=67108864 mask=625 --dimension 0)
step steps-opencl 40 stencil --device $g0 --device $g1 "${S16[@]}" --steps 50 --halo device --rebalance
step steps-cuda 30 stencil --device cuda:0 --device cuda:1 "${S16[@]}" --steps 50 --halo device
step steps-cpugpu 50 stencil --device $g0 --device $cpu "${S16[@]}" --steps 20 --rebalance --cpu-reserve 0
step conv26-model-iter 60 convolution --device $g0 --device $cpu "${C26[@]}" --cpu-reserve 0 --times model --iterations 4
step stencil-store-iter 50 stencil --device $g0 --device $cpu "${S16[@]}" --cpu-reserve 0 --times store --iterations 4
gzip -c "$db" > "$R/split.db.gz"
finish > /dev/null
cat "$R/times.txt"
python3 - "$R" <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    try:
        d = json.loads(p.read_text() or "{}")
    except ValueError:
        print(p.stem, "unreadable"); continue
    if "decision" not in d:
        continue
    keys = ("parts", "final_parts", "theoretical_ms", "measured_ms", "step_ms", "chosen_ms",
            "speedup_over_best_single", "decision", "verified", "halo_path", "buffers")
    print(p.stem, {k: d[k] for k in keys if k in d}, "best", d["best_single"],
          "iterations", [(i.get("parts"), round(i.get("measured_ms", i.get("wall_ms", 0)) or 0, 3), i.get("imbalance")) for i in d.get("iterations", [])])
PY
