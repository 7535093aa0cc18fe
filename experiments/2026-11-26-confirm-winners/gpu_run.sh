#!/usr/bin/env bash
# Trustworthy winners on a GPU (issue 26 item 5): tune built-in kernels with the end-of-campaign
# re-timing on, and record, per kernel, the search's first-pass best, the confirmed winner, its
# interval and the candidates it cannot be told from; also whether NVIDIA's compiler output is
# kept out of stderr. Run on the GPU machine from the repository root, with .whl (pyopencl and
# its dependencies, ../shared/gpu/fetch-wheels.sh) carried along:
#   experiments/2026-11-26-confirm-winners/gpu_run.sh
# Outputs under $OUT (default ./out): one tune JSON and stderr per kernel, summary.json.
set -euo pipefail
OUT=${OUT:-$PWD/experiments/2026-11-26-confirm-winners/out}
mkdir -p "$OUT"
if [ -d .whl ] && ! python3 -c "import pyopencl" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
[ -w /etc/OpenCL/vendors ] && [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] &&
  echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
python3 -m perfport devices --json > "$OUT/devices.json"
DEVICE=${DEVICE:-$(python3 - "$OUT/devices.json" <<'PY'
import json, sys
devices = json.load(open(sys.argv[1]))["devices"]
gpu = [d for d in devices if d["type"] == "gpu" and d["backend"] == "opencl"]
print((gpu or devices)[0]["id"])
PY
)}
run() {  # name, then tune arguments
  local name=$1; shift
  python3 -m perfport tune "$@" --device "$DEVICE" --db "$OUT/confirm.db" --confirm 5 \
    --confirm-seconds 20 --json > "$OUT/$name.json" 2> "$OUT/$name.stderr" || true
}
run vector_add vector_add --problem n=16777216 --strategy brute_force
run stencil stencil --problem width=4096 height=4096 --strategy brute_force
run matmul matmul --budget 120 --strategy random
python3 - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
summary = {}
for name in ("vector_add", "stencil", "matmul"):
    try:
        r = json.loads((out / f"{name}.json").read_text())
    except (OSError, ValueError) as exc:
        summary[name] = {"error": str(exc)}
        continue
    c = r.get("confirmed") or {}
    summary[name] = {
        "best_after": r["best"], "confirmed": c, "configs_total": r["configs_total"],
        "stderr_has_compiler_output": "warning" in (out / f"{name}.stderr").read_text().lower(),
    }
(out / "summary.json").write_text(json.dumps(summary, indent=1))
for name, s in summary.items():
    c = s.get("confirmed") or {}
    print(name, c.get("winner"), c.get("interval_ms"), "ties:", len(c.get("indistinguishable", [])),
          "rounds:", c.get("rounds"), "s:", c.get("seconds"))
PY
