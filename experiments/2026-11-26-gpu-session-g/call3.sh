# Call 3: the shape (cross or box) and division against multiplication, beside the built-in.
source experiments/2026-11-26-gpu-session-b/common.sh
P=experiments/2026-11-26-stencil-persist
for dev in $(nvidia-smi --query-gpu=index --format=csv,noheader); do
  CUDA_VISIBLE_DEVICES=$dev timeout 200 python3 $P/probe.py --out "$R/probe-cuda$dev.json" --rounds 40 \
    > "$R/probe-cuda$dev.txt" 2>&1 &
done
wait
cat "$R"/probe-cuda0.txt | head -100
finish
