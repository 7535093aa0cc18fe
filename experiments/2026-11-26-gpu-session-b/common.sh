# Sourced by each call script: the wheels, the NVIDIA ICD file, and what the machine is.
set -u
OUT=${OUT:?set OUT}
R=$OUT/r  # everything goes here, then into one tar file (the run tool caps the file count)
mkdir -p "$R"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD/src
[ -e /etc/OpenCL/vendors/nvidia.icd ] ||
  echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$R/gpus.csv" 2>&1 || true
lscpu > "$R/lscpu.txt" 2>&1
python3 -m perfport devices --json > "$R/devices.json" 2> "$R/devices.err"
pocl=$(python3 -c "import json; print(next(d['id'] for d in json.load(open('$R/devices.json'))['devices'] if d['type'] == 'cpu'))")
finish() { tar czf "$OUT/outputs.tgz" -C "$R" . && ls -la "$OUT"; }
