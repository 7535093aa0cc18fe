#!/usr/bin/env bash
# Issue 25, Deliver item 1 on the GPU machine's devices: erdem2018's Tables 1-2 cases
# (matmul 1024^3, convolution mask 625 over 2^16) counted by `perfport space` per device and
# legal on all of them, for the two H200s through NVIDIA OpenCL, the Xeon through PoCL and the
# H200s through CUDA, with and without --min-work-groups (Eq. 3); the built-in register-tiled
# `matmul`, the local-memory `matmul_tiled` (the paper's kind of kernel, Eq. 10) and the
# wide kernels too. About 30 s on nvidia-h200-x2. Run as
#   OUT=$OUT bash experiments/2026-11-26-gpu-session-f/call5.sh      (carry: [".whl"])
source experiments/2026-11-26-gpu-session-b/common.sh
read -r g0 g1 <<< "$(python3 -c "import json; d=json.load(open('$R/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")"
devs=(--device "$g0" --device "$g1" --device "$pocl" --device cuda:0 --device cuda:1)
MM=(--problem M=1024 N=1024 K=1024) CV=(--problem n=65536 mask=625)
for k in matmul matmul_tiled; do
  for e in "" --min-work-groups; do
    timeout 60 python3 -m perfport space $k "${MM[@]}" "${devs[@]}" $e --json > "$R/space-$k${e:+-min}.json" 2> "$R/space-$k${e:+-min}.err"
  done
done
for k in convolution convolution_wide; do
  for e in "" --min-work-groups; do
    timeout 60 python3 -m perfport space $k "${CV[@]}" "${devs[@]}" $e --json > "$R/space-$k${e:+-min}.json" 2> "$R/space-$k${e:+-min}.err"
  done
done
finish > /dev/null
python3 - "$R" <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("space-*.json")):
    try:
        d = json.loads(p.read_text())
    except ValueError:
        print(p.stem, "failed:", p.with_suffix(".err").read_text()[-300:]); continue
    print(p.stem, [(x["device"], x["cartesian"], x["legal"], x["pruned"]) for x in d["per_device"]], "common", d["common"])
PY
