#!/usr/bin/env bash
# Device call B (nvidia-h200-x2 or h100-x2), two parts side by side, one per GPU:
#  - first GPU: issue 29's size-aware roofline and default 60 s search of stencil_wide 4096²
#    through NVIDIA OpenCL and CUDA (roofline-size/gpu_run.sh, under 250 s), then the tiled
#    matmul 4096³ searched 150 s through NVIDIA OpenCL beside cuBLAS SGEMM in the same run;
#  - second GPU: issue 24's model collection, calibration, evaluation and model-guided search
#    (model-gpu/gpu_run.sh), cut at 545 s (its store is packed either way).
# Run as `OUT=$OUT bash experiments/2026-11-26-gpu-session-d/callB.sh` carrying .whl.
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
read -r -a nv <<< "$(python3 -c "import json; d=json.load(open('$R/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")"
echo "nvidia opencl: ${nv[*]}" | tee "$R/times.txt"
(
  mkdir -p "$R/model"
  OUT=$R/model DEVICE=${nv[1]:-${nv[0]}} timeout 545 bash experiments/2026-11-26-model-gpu/gpu_run.sh \
    > "$R/model.log" 2>&1
  echo "model rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
  [ -e "$R/model/model.db.gz" ] || gzip -c /tmp/model-gpu.db > "$R/model/model.db.gz"
) &
OUT=$R DEVICES="${nv[0]} cuda:0" timeout 250 bash experiments/2026-11-26-roofline-size/gpu_run.sh \
  > "$R/roofline-size.log" 2>&1
echo "roofline-size rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
mkdir -p "$R/matmul"
timeout 290 python3 experiments/2026-11-26-builtins/builtins_compare.py --part matmul --scale gpu \
  --devices "${nv[0]}" --budget 2304 --max-time 150 --recheck 2 --only-new --out "$R/matmul" \
  > "$R/matmul.log" 2>&1
echo "matmul rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
wait
finish
cat "$R/times.txt"; tail -n 12 "$R/roofline-size.log" "$R/matmul.log" "$R/model.log"
