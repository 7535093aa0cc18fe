# Call 8: registers and SASS of stencil_cross against the hand-written cross (sass.py), ~15 s.
source experiments/2026-11-26-gpu-session-b/common.sh
export PATH=$PATH:/usr/local/cuda/bin
which nvcc cuobjdump
timeout 120 python3 experiments/2026-11-26-stencil-persist/sass.py --out "$R/sass" 2>&1 | tee "$R/sass.txt"
finish
