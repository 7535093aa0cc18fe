# Call 10: stencil_cross with one path for every whole run (probe4.py), about 25 s.
source experiments/2026-11-26-gpu-session-b/common.sh
timeout 200 python3 experiments/2026-11-26-stencil-persist/probe4.py --out "$R/probe4.json" > "$R/probe4.txt" 2>&1
cat "$R/probe4.txt"
finish
