#!/bin/sh
# perfport CUDA back-end audit: run as  cd <repo copy> && OUT=<dir> sh /path/gpu/run.sh
# Needs: python3 with perfport importable (PYTHONPATH), CuPy, one NVIDIA GPU; NVIDIA OpenCL
# optional (the OpenCL twins of some tests are skipped without it). Writes everything to $OUT.
set -u
OUT=${OUT:?set OUT}
HERE=$(cd "$(dirname "$0")" && pwd)
START=$(date +%s)
LIMIT=190                      # start no new test after this many seconds
P="python3 -m perfport"
DB=$OUT/audit.db
LOG=$OUT/log.txt
FAST="--confirm 0 --repeats 20"
: > "$LOG"

run() {  # run NAME SECONDS command...: stdout/stderr to $OUT/NAME.out/.err, rc in the log
    name=$1; lim=$2; shift 2
    t0=$(date +%s)
    if [ $((t0 - START)) -gt $LIMIT ]; then echo "### [$name] SKIPPED (elapsed $((t0 - START)) s)" >> "$LOG"; return; fi
    echo "### [$name] $*" >> "$LOG"
    timeout -k 5 "$lim" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
    rc=$?
    echo "### [$name] rc=$rc ($(( $(date +%s) - t0 )) s)" >> "$LOG"
    tail -n 6 "$OUT/$name.err" | cut -c1-400 | sed 's/^/    err| /' >> "$LOG"
    head -c 600 "$OUT/$name.out" | sed 's/^/    out| /' >> "$LOG"
    echo >> "$LOG"
}

# NVIDIA OpenCL, as the project's smoke check registers it (ignored where it cannot).
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ]; then
    mkdir -p /etc/OpenCL/vendors 2>/dev/null && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd 2>/dev/null
fi

run env 20 sh -c 'nvidia-smi -L; python3 -c "import cupy; print(\"cupy\", cupy.__version__)"'
run devices 45 $P devices --json
NV=$(python3 - "$OUT/devices.out" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))["devices"]
    print(next(x["id"] for x in d if x["backend"] == "opencl" and "NVIDIA" in (x.get("name", "") + x.get("vendor", ""))))
except Exception:
    print("")
PY
)
echo "NV=$NV" >> "$LOG"
nv() { if [ -n "$NV" ]; then run "$@"; else echo "### [$1] SKIPPED (no NVIDIA OpenCL device)" >> "$LOG"; fi; }

# T3: two LOCAL_PARAM buffers (portable): CUDA aliases them?
run t3_cuda 45 $P tune "$HERE/t3_twolocal.toml" --device cuda:0 $FAST --db "$DB" --json
nv  t3_nv   45 $P tune "$HERE/t3_twolocal.toml" --device "$NV" $FAST --db "$DB" --json
run t3_noref_cuda 45 $P tune "$HERE/t3_twolocal_noref.toml" --device cuda:0 $FAST --db "$DB" --json
# T2: timing of a tiny kernel, CUDA events vs OpenCL profiling; T2b/T6b: direct session checks
run t2_cuda 45 $P tune "$HERE/t2_tiny.toml" --device cuda:0 --confirm 0 --db "$DB" --json
nv  t2_nv   45 $P tune "$HERE/t2_tiny.toml" --device "$NV" --confirm 0 --db "$DB" --json
run direct  45 python3 "$HERE/direct.py" "$HERE/gridx.cu"
# T6: grid x over 2**31 - 1 through tune
run t6_cuda 45 $P tune "$HERE/t6_gridx.toml" --device cuda:0 $FAST --no-verify --db "$DB" --json
# T5: grid y over 65535
run t5_cuda 45 $P tune "$HERE/t5_gridy.toml" --device cuda:0 $FAST --db "$DB" --json
nv  t5_nv   45 $P tune "$HERE/t5_gridy.toml" --device "$NV" $FAST --db "$DB" --json
# T7: illegal address, trap, hung kernel: stored outcomes and worker restarts
run t7_cuda 80 $P tune "$HERE/t7_faults.toml" --device cuda:0 $FAST --strategy brute_force --timeout 5 --db "$DB" --json
run t7b_cuda 60 $P tune "$HERE/t7b_badpc.toml" --device cuda:0 $FAST --strategy brute_force --db "$DB" --json
# T17: fewer args than parameters, signature unreadable (portable; OpenCL twin)
run t17_cuda 45 $P tune "$HERE/t17_argcount.toml" --device cuda:0 $FAST --db "$DB" --json
nv  t17_nv   45 $P tune "$HERE/t17_argcount.toml" --device "$NV" $FAST --db "$DB" --json
# T8: no extern "C"; T9: NVRTC compile error
run t8_cuda 45 $P tune "$HERE/t8_mangled.toml" --device cuda:0 $FAST --db "$DB" --json
run t9_cuda 45 $P tune "$HERE/t9_cerr.toml" --device cuda:0 $FAST --strategy brute_force --db "$DB" --json
# T10: __constant__ memory (CUDA and portable), and an argument larger than the declared array
run t10_cuda 45 $P tune "$HERE/t10_const_cuda.toml" --device cuda:0 $FAST --db "$DB" --json
run t10_cuda_m32 45 $P tune "$HERE/t10_const_cuda.toml" --device cuda:0 $FAST --problem m=32 --db "$DB" --json
run t10_port_cuda 45 $P tune "$HERE/t10_const_portable.toml" --device cuda:0 $FAST --db "$DB" --json
nv  t10_port_nv   45 $P tune "$HERE/t10_const_portable.toml" --device "$NV" $FAST --db "$DB" --json
# T4: alignment of dynamic shared memory after static shared memory
run t4_cuda 45 $P tune "$HERE/t4_align.toml" --device cuda:0 $FAST --db "$DB" --json
# T20: a define value with a space (CUDA one option; OpenCL joined by spaces)
run t20_cuda 45 $P tune "$HERE/t20_deftype.toml" --device cuda:0 $FAST --db "$DB" --json
nv  t20_nv   45 $P tune "$HERE/t20_deftype.toml" --device "$NV" $FAST --db "$DB" --json
# T14: device selection errors (one line each, exit 2 expected)
run t14_cuda1 30 $P tune "$HERE/t1_saxpy.toml" --device cuda:1 --budget 1 --db "$OUT/t14.db"
run t14_opencl_on_cuda 30 $P tune "$HERE/opencl_only.toml" --device cuda:0 --budget 1 --db "$OUT/t14.db"
run t14_cuda00 30 $P space "$HERE/t1_saxpy.toml" --device cuda:00
# T1: ordinary flows (TOML and Python specs), results and export
run t1_toml 45 $P tune "$HERE/t1_saxpy.toml" --device cuda:0 --budget 8 --db "$DB" --json
run t1_py   45 $P tune "$HERE/t1_saxpy.py" --device cuda:0 $FAST --budget 4 --db "$DB" --json
run t1_results 30 $P results --db "$DB" --kernel audit_saxpy_cuda --json
run t1_ktcache 30 $P export --db "$DB" --kernel audit_saxpy_cuda --device cuda:0 --format kt-cache -o "$OUT/saxpy-kt.json"
# T13: #include of a header beside the spec, from the repo root and from the spec's folder
run t13_cuda_root 45 $P tune "$HERE/t13_include_cuda.toml" --device cuda:0 $FAST --db "$OUT/inc_root.db" --json
run t13_cuda_here 45 sh -c "cd '$HERE' && $P tune t13_include_cuda.toml --device cuda:0 $FAST --db '$OUT/inc_here.db' --json"
# T12: double / size_t scalars; half with cuda_fp16.h
run t12_types 45 $P tune "$HERE/t12_types.toml" --device cuda:0 $FAST --db "$DB" --json
run t12_half  45 $P tune "$HERE/t12_half.toml" --device cuda:0 $FAST --db "$DB" --json
# T11: 3-D blocks (bz = 128 over CUDA's 64 must be pruned)
run t11_cuda 45 $P tune "$HERE/t11_3d.toml" --device cuda:0 $FAST --budget 6 --db "$DB" --json
# T19: compiler warnings kept with results (CUDA vs OpenCL)
run t19_cuda 45 $P tune "$HERE/t19_warn.toml" --device cuda:0 $FAST --db "$DB" --json
nv  t19_nv   45 $P tune "$HERE/t19_warn.toml" --device "$NV" $FAST --db "$DB" --json
# T18: compiling ahead in spawned processes (--build-jobs) on CUDA
run t18_prebuild 60 $P tune "$HERE/t1_saxpy.toml" --device cuda:0 $FAST --strategy brute_force --build-jobs 2 --db "$OUT/pre.db" --json

# Every stored measurement, with its message
timeout 30 $P export --db "$DB" --format csv -o "$OUT/all.csv" 2>> "$LOG"
timeout 30 python3 "$HERE/summary.py" "$OUT/all.csv" > "$OUT/summary.txt" 2>> "$LOG"
for d in inc_root inc_here pre; do
    [ -e "$OUT/$d.db" ] && timeout 30 $P export --db "$OUT/$d.db" --format csv -o "$OUT/$d.csv" 2>> "$LOG" \
        && timeout 30 python3 "$HERE/summary.py" "$OUT/$d.csv" >> "$OUT/summary.txt" 2>> "$LOG"
done
echo "### total $(( $(date +%s) - START )) s" >> "$LOG"
