#!/usr/bin/env bash
# Issue 24, item 6 on the GPU machine: measure the measurement-kernel collection and the two
# matmul variants on the NVIDIA OpenCL device, calibrate the shipped linear model on the
# collection only, and evaluate its matmul predictions. Run from the repository root there,
# after ../shared/GPU.md's wheel recipe (PYTHONPATH=/tmp/site:$PWD/src, NVIDIA ICD file):
#   OUT=/some/dir bash experiments/2026-11-26-model-gpu/gpu_run.sh
# About 6 minutes, and up to 3.5 more for model-guided search (each step under `timeout`;
# the collection is resumable, so a step cut short still leaves what it measured). Leaves in
# $OUT: model.db.gz (every measurement), data.csv (the slim measurements, to ship under
# src/perfport/datasets/model/), collect.json, measure-*.json, calibration.json,
# calibrate.json, evaluate.json, predict.json, and each step's stderr in logs/.
# Overrides (the test runs it on PoCL with tiny sizes): DEVICE (an id; default the first
# NVIDIA OpenCL device), SIZES (matmul n values), COLLECT (the collect filter tags),
# COLLECT_S (the collection's time limit, seconds, default 150), DG_SIZES (nelements of the DG
# variants), FD_SIZES (n of the stencils), MM_WR (n of the work-removed matmuls),
# LMEM_STRIDE (lmem_stride_pattern's variant tags, default m:64,256) and LMEM_STRIDE_S,
# GMEM_S and GSTORE_S (gmem_pattern's and gstore_pattern's time limits, 60 and 30 s).
# Also leaves collect-gmem.json, collect-gstore.json (store-only kernels: p_gstore apart from
# the loads), collect-wr-*.json and evaluate-paper.json (the per-access-pattern model,
# src/perfport/datasets/model/paper-linear.json), evaluate-overlap.json and
# evaluate-paper-overlap.json (form (8) of both), evaluate-paper-groups.json and
# evaluate-paper-lstride.json (paper-linear-groups.json, paper-linear-lstride.json), each
# evaluate-*.json also as evaluate-*-nonnegative.json (costs bounded at 0),
# collect-lmem-stride.json, figures-<model>/ (the paper's Figures 7-9,
# matmul-, dg- and fd-<device>.svg, and breakdown-<device>.svg, each term's share), and
# guided-measure.txt, guided.json, guided.txt and guided.db.gz (model-guided search against
# the default on the full spaces, benchmarks/model_guided.py; GUIDED_ARGS overrides its
# sizes; at most 3.5 min more, GUIDED=0 leaves it out).
set -u
OUT=${OUT:?set OUT}
mkdir -p "$OUT/logs"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/perfport-model-cache}
db=${DB:-/tmp/model-gpu.db}
model=src/perfport/datasets/model/matmul-linear.json
pp() { python3 -m perfport "$@"; }

if [ -z "${DEVICE:-}" ]; then
  pp devices --json > "$OUT/devices.json" 2> "$OUT/logs/devices.err"
  DEVICE=$(python3 -c "import json; d=json.load(open('$OUT/devices.json'))['devices']; print(next(x['id'] for x in d if x['id'].startswith('opencl') and 'NVIDIA' in x['vendor'].upper()))")
fi
echo "device=$DEVICE" | tee "$OUT/logs/device.txt"
SIZES=${SIZES:-512,1024,2048,3072,4096}
# The generators' default sizes scale with compute units; global-memory arrays that large
# would not fit, so gmem gets sizes of 64-512 MiB per array (about 0.03-0.3 ms each on an
# H100's 3 TB/s, the shortest of the collection).
COLLECT=${COLLECT:-flops_madd_pattern flops_add_pattern gmem_pattern gstore_pattern lmem_pattern \
barrier_pattern empty_kernel dtype:float32 lid_stride_0:1 nel:16777216,67108864,134217728}
read -r -a tags <<< "$COLLECT"

# gmem's size tags (nel, lid_stride_0, n_arrays) would apply to every generator that has
# them, or name one that no other has: gmem runs apart from the others, with them, and so does
# gstore (the same arguments: stores only, which separate p_gstore from the load costs).
others=() gmem=()
for t in "${tags[@]}"; do
  case $t in nel:* | lid_stride_0:* | n_arrays:*) gmem+=("$t") ;; *) others+=("$t") ;; esac
done
timeout "${COLLECT_S:-150}" python3 -m perfport model collect --device "$DEVICE" --db "$db" \
  --match intersect --filter $(printf '%s\n' "${others[@]}" | grep -vx 'gmem_pattern\|gstore_pattern') \
  --json > "$OUT/collect.json" 2> "$OUT/logs/collect.err"
# The two share the 90 s gmem had alone (the store kernels are the simpler to count).
for g in gmem:${GMEM_S:-60} gstore:${GSTORE_S:-30}; do
  if printf '%s\n' "${others[@]}" | grep -qx "${g%%:*}_pattern"; then
    timeout "${g#*:}" python3 -m perfport model collect --device "$DEVICE" --db "$db" \
      --filter "${g%%:*}_pattern" dtype:float32 "${gmem[@]}" --json \
      > "$OUT/collect-${g%%:*}.json" 2> "$OUT/logs/collect-${g%%:*}.err"
  fi
done
for v in matmul-prefetch matmul-noprefetch; do
  timeout 60 python3 -m perfport model measure "$v" --sizes "n=$SIZES" --device "$DEVICE" \
    --db "$db" --json > "$OUT/measure-$v.json" 2> "$OUT/logs/measure-$v.err"
done
timeout 60 python3 -m perfport model calibrate "$model" --device "$DEVICE" --db "$db" \
  --out "$OUT/calibration.json" --json > "$OUT/calibrate.json" 2> "$OUT/logs/calibrate.err"
n=${SIZES##*,}
timeout 60 python3 -m perfport model predict "$OUT/calibration.json" matmul-prefetch \
  --problem "n=$n" --json > "$OUT/predict.json" 2> "$OUT/logs/predict.err"

# Issue 24 items 4-5: the work-removed application kernels (one cost per tagged access
# pattern) and the DG and finite-difference variants, about 2.5 minutes at most in all.
DG_SIZES=${DG_SIZES:-65536,262144,1048576}
FD_SIZES=${FD_SIZES:-4480,8960,17920}
MM_WR=${MM_WR:-${SIZES%%,*},$n}
timeout 40 python3 -m perfport model collect --device "$DEVICE" --db "$db" --match intersect \
  --filter wr_matmul_prefetch wr_matmul_noprefetch keep:a,b "n:$MM_WR" --json \
  > "$OUT/collect-wr-matmul.json" 2> "$OUT/logs/collect-wr-matmul.err"
timeout 40 python3 -m perfport model collect --device "$DEVICE" --db "$db" --match intersect \
  --filter wr_dg_plain wr_dg_prefetch_u wr_dg_prefetch_dm wr_dg_prefetch_dm_tr keep:diff_mat,u \
  "nelements:$DG_SIZES" --json > "$OUT/collect-wr-dg.json" 2> "$OUT/logs/collect-wr-dg.err"
timeout 20 python3 -m perfport model collect --device "$DEVICE" --db "$db" --match intersect \
  --filter wr_fd_16x16 wr_fd_18x18 "n:$FD_SIZES" --json \
  > "$OUT/collect-wr-fd.json" 2> "$OUT/logs/collect-wr-fd.err"
# The local read patterns of the prefetching variants (lid(0) stride 0: broadcast; 16: bank
# conflicts), which lmem_pattern's stride-1 moves do not inform (docs/results/
# 2026-11-26-model-accuracy.md): lmem_stride_pattern, for paper-linear-lstride.json.
timeout "${LMEM_STRIDE_S:-90}" python3 -m perfport model collect --device "$DEVICE" --db "$db" \
  --filter lmem_stride_pattern dtype:float32 ${LMEM_STRIDE:-m:64,256} --json \
  > "$OUT/collect-lmem-stride.json" 2> "$OUT/logs/collect-lmem-stride.err"
for v in dg-plain dg-prefetch-u dg-prefetch-dm dg-prefetch-dm-tr; do
  timeout 12 python3 -m perfport model measure "$v" --sizes "nelements=$DG_SIZES" \
    --device "$DEVICE" --db "$db" --json > "$OUT/measure-$v.json" 2> "$OUT/logs/measure-$v.err"
done
for v in fd-16x16 fd-18x18; do
  timeout 12 python3 -m perfport model measure "$v" --sizes "n=$FD_SIZES" --device "$DEVICE" \
    --db "$db" --json > "$OUT/measure-$v.json" 2> "$OUT/logs/measure-$v.err"
done
timeout 60 python3 -m perfport model evaluate --db "$db" --write-data "$OUT/data.csv" --json \
  --figures "$OUT/figures-matmul-linear" > "$OUT/evaluate.json" 2> "$OUT/logs/evaluate.err"
for m in paper:paper-linear overlap:matmul-overlap paper-overlap:paper-overlap \
  paper-groups:paper-linear-groups paper-lstride:paper-linear-lstride; do
  timeout 40 python3 -m perfport model evaluate --db "$db" --json \
    --model "src/perfport/datasets/model/${m#*:}.json" --figures "$OUT/figures-${m#*:}" \
    > "$OUT/evaluate-${m%%:*}.json" 2> "$OUT/logs/evaluate-${m%%:*}.err"
  timeout 40 python3 -m perfport model evaluate --db "$db" --json --nonnegative \
    --model "src/perfport/datasets/model/${m#*:}.json" \
    > "$OUT/evaluate-${m%%:*}-nonnegative.json" 2> "$OUT/logs/evaluate-${m%%:*}-nn.err"
done

# Issue 24 item 7: model-guided search on the full matmul, DG and FD spaces, calibrated on
# this device's collection (data.csv above), against the default strategy over 20 seeds.
GUIDED_ARGS=${GUIDED_ARGS:---sizes matmul=2048,dg=131072,fd=8960}
if [ "${GUIDED:-1}" = 1 ]; then
  # A store of its own: a store files a kernel whose source it already holds (dg tile 16,
  # fd lsize 16 are the built-in variants) under the name it was first stored with.
  gdb=${db%.db}-guided.db
  timeout 120 python3 benchmarks/model_guided.py measure --db "$gdb" --device "$DEVICE" \
    $GUIDED_ARGS > "$OUT/guided-measure.txt" 2> "$OUT/logs/guided-measure.err"
  timeout 90 python3 benchmarks/model_guided.py replay --db "$gdb" --data "$OUT/data.csv" \
    $GUIDED_ARGS --json "$OUT/guided.json" > "$OUT/guided.txt" 2> "$OUT/logs/guided.err"
  gzip -c "$gdb" > "$OUT/guided.db.gz"
fi
gzip -c "$db" > "$OUT/model.db.gz"
tail -n 3 "$OUT"/logs/*.err | grep -v Warning | tail -n 20
cat "$OUT/guided.txt" 2> /dev/null
for e in evaluate evaluate-paper evaluate-overlap evaluate-paper-overlap; do
python3 -c "import json; e=json.load(open('$OUT/$e.json')); print({r['variant']: round(r['geomean_rel_error'], 3) for r in e['results']}, 'overall', round(e['geomean_rel_error'], 3), 'ranking', e['ranking_correct'])" \
  || echo "evaluation failed: see $OUT/logs/$e.err"
done
