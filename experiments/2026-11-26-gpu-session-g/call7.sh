# Call 7: cache hints for the 5-point stencil (probe2.py), about 30 s.
source experiments/2026-11-26-gpu-session-b/common.sh
timeout 200 python3 experiments/2026-11-26-stencil-persist/probe2.py --out "$R/probe2.json" > "$R/probe2.txt" 2>&1
cat "$R/probe2.txt"
finish
