# Call 9: stencil_cross's source patched (loads first; no border path) beside the original and
# the hand-written cross (probe3.py), about 20 s.
source experiments/2026-11-26-gpu-session-b/common.sh
timeout 200 python3 experiments/2026-11-26-stencil-persist/probe3.py --out "$R/probe3.json" > "$R/probe3.txt" 2>&1
cat "$R/probe3.txt"
finish
