# Call 14: as call 13 through CUDA (DEV=cuda:0).
# 4096^3 through NVIDIA OpenCL, the default strategy cold for 200 s (lvw=4 in its space), its
# best re-timed twice beside cuBLAS SGEMM (CuPy) in the same run. About 300 s.
source experiments/2026-11-26-gpu-session-b/common.sh
DEV=${DEV:-cuda:0}
mkdir -p "$R/matmul"
timeout 560 python3 experiments/2026-11-26-builtins/builtins_compare.py --part matmul --scale gpu \
  --devices "$DEV" --budget 3411 --max-time 200 --recheck 2 --only-new --out "$R/matmul" \
  > "$R/matmul.log" 2>&1
echo "rc=$?"
tail -n 15 "$R/matmul.log" | grep -v ETA
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [print(c) for c in d.get('comparison', [])]" "$R/matmul/matmul.json"
finish
