#!/bin/sh
# The shared-memory opt-in check with the old devices/cuda.py (first: git show dd78701:src/perfport/devices/cuda.py > experiments/2026-11-27-cuda-audit/shared/cuda_old.py; run after the wheels are installed in /tmp/site).
set -u
rm -rf /tmp/old-src && cp -r src /tmp/old-src && cp experiments/2026-11-27-cuda-audit/shared/cuda_old.py /tmp/old-src/perfport/devices/cuda.py
PYTHONPATH=/tmp/site:/tmp/old-src python3 -m perfport tune experiments/2026-11-27-cuda-audit/shared/sh.toml --device cuda:0 --strategy brute_force --db $OUT/old.db --json > $OUT/sh-old.json 2> $OUT/sh-old.err
echo "old rc=$?"
PYTHONPATH=/tmp/site:/tmp/old-src python3 -m perfport results --db $OUT/old.db >> $OUT/sh-old.err 2>&1
