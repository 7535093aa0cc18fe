cd /work/wt-daemon
export PYTHONPATH=$PWD/src
for r in 1 2 3; do
  uptime >> OUT/load.txt
  timeout 200 /work/main/.venv/bin/python benchmarks/daemon_load.py --workers 1,2 --clients 1,32 --rounds 1 --json-out OUT/shared-$r.json > OUT/shared-$r.txt 2>&1
  timeout 200 /work/main/.venv/bin/python benchmarks/daemon_load.py --workers 1,2 --clients 1,32 --rounds 1 --server-cpus 0 --client-cpus 1 --json-out OUT/pinned-$r.json > OUT/pinned-$r.txt 2>&1
done
uptime >> OUT/load.txt
echo done > OUT/done
