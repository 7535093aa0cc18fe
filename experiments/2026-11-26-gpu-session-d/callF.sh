#!/usr/bin/env bash
# Device call F (nvidia-h200-x2): on the first GPU, matmul_tiled's lvw=4 after the alignment
# fix against lvw=1 and cuBLAS (experiments/2026-11-26-matmul-tiled-b, under 194 s); on the
# second, issue 24's local-memory strides in 16 x 16 work-groups (experiments/2026-11-26-model-gpu-e,
# under 4 minutes). Run as `OUT=$OUT bash experiments/2026-11-26-gpu-session-d/callF.sh`
# carrying .whl.
source experiments/2026-11-26-gpu-session-b/common.sh
start=$SECONDS
read -r -a nv <<< "$(python3 -c "import json; d=json.load(open('$R/devices.json'))['devices']; print(' '.join(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")"
(
  OUT=$R/model-e DEVICE=${nv[1]:-${nv[0]}} timeout 230 bash experiments/2026-11-26-model-gpu-e/gpu_run.sh \
    > "$R/model-e.log" 2>&1
  echo "model-e rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
) &
DEVICES="${nv[0]} cuda:0" timeout 220 bash experiments/2026-11-26-matmul-tiled-b/gpu_run.sh > "$R/matmul-b.log" 2>&1
echo "matmul-b rc=$? at $((SECONDS - start)) s" >> "$R/times.txt"
wait
finish > /dev/null
cat "$R/times.txt" "$R/matmul-b/summary.json"; tail -n 5 "$R/model-e.log"
