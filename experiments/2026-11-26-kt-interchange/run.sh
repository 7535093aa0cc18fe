#!/usr/bin/env bash
# Round trips with Kernel Tuner itself, which perfport never depends on: it goes into a
# throwaway venv. Needs the package index once (pip install kernel_tuner==1.5.0) and PoCL in
# perfport's own environment. Writes into $OUT (default: ./out).
#   experiments/2026-11-26-kt-interchange/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-$here/out}
PY=${PY:-python}  # perfport's interpreter
KTVENV=${KTVENV:-/tmp/ktvenv}
mkdir -p "$OUT"
[ -x "$KTVENV/bin/python" ] || { python3 -m venv "$KTVENV" && "$KTVENV/bin/pip" install -q kernel_tuner==1.5.0; }
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
cd "$OUT"
rm -f kt.db crashed.db crashed.json
# perfport -> Kernel Tuner: tune every configuration on PoCL, export, simulate in Kernel Tuner.
"$PY" -m perfport tune vector_add --problem n=65536 --strategy brute_force --db kt.db --json > tune.json
"$PY" -m perfport export --db kt.db --format kt-cache -o vector_add_kt.json
cp vector_add_kt.json exported-before-kt.json
"$KTVENV/bin/python" "$here/kt_simulate.py" vector_add_kt.json > kt_simulate.json
cmp vector_add_kt.json exported-before-kt.json && echo "Kernel Tuner left the file unchanged"
"$PY" -m perfport results --db kt.db --json > perfport_results.json
# Kernel Tuner -> perfport: an open-ended cache from Kernel Tuner's own writer.
"$KTVENV/bin/python" "$here/kt_interrupted_cache.py" crashed.json > kt_reads_back.txt
"$PY" -m perfport import crashed.json --db crashed.db --json > import.json
"$PY" - <<'PY'
import json
kt, ours = json.load(open("kt_simulate.json")), json.load(open("perfport_results.json"))["results"][0]
print(f"Kernel Tuner simulation: {kt['kt_configs']} configurations, best {kt['kt_best']} at "
      f"{kt['kt_best_time']} ms; perfport best {ours['best']['config']} at {ours['best']['time_ms']} ms")
print(f"open-ended cache: Kernel Tuner reads {open('kt_reads_back.txt').read().strip()} entries, "
      f"perfport imports {json.load(open('import.json'))['configs']}")
PY
