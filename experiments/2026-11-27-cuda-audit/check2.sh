#!/bin/sh
# After the CUDA layout fix: the audit's local-buffer, grid and name cases, and the built-in
# portable kernels that use LOCAL_PARAM, on cuda:0 (and NVIDIA OpenCL for the stencil).
set -u
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export PYTHONPATH=/tmp/site:$PWD/src
P="python3 -m perfport"; H=experiments/2026-11-27-cuda-audit/gpu; DB=$OUT/c2.db; F="--confirm 0 --repeats 20"
run() { echo "### $*"; timeout 90 "$@" 2>&1 | tail -4; echo "### rc=$?"; }
{
run $P tune $H/t3_twolocal.toml --device cuda:0 $F --db $DB
run $P tune $H/t3_twolocal_noref.toml --device cuda:0 $F --db $DB
run $P tune $H/t4_align.toml --device cuda:0 $F --db $DB
run $P tune $H/t6_gridx.toml --device cuda:0 $F --no-verify --db $DB
run $P tune $H/t5_gridy.toml --device cuda:0 $F --db $DB
run $P tune $H/t8_mangled.toml --device cuda:0 $F --db $DB
run $P tune stencil --device cuda:0 --budget 30 --db $DB
run $P tune convolution --device cuda:0 --strategy brute_force --db $DB
run $P tune matmul_tiled --device cuda:0 --budget 20 --db $DB --problem M=1024 --problem N=1024 --problem K=1024
run $P tune stencil_wide --device cuda:0 --budget 30 --db $DB
run $P tune convolution_wide --device cuda:0 --budget 30 --db $DB
run $P tune experiments/2026-11-27-cuda-audit/shared/sh.toml --device cuda:0 --strategy brute_force --db $DB
} > $OUT/check2.txt 2>&1
python3 -m perfport export --db $DB --format csv -o $OUT/c2.csv 2>&1 | tail -1
python3 - "$DB" > $OUT/outcomes.txt <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for row in c.execute("select k.name, r.outcome, count(*), min(substr(r.message,1,160)) from results r join campaigns g on g.id=r.campaign_id join kernels k on k.id=g.kernel_id group by k.name, r.outcome"):
    print(*row, sep=" | ")
PY
cat $OUT/outcomes.txt
