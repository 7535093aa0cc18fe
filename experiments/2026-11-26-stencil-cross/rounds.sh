#!/usr/bin/env bash
# stencil_cross at 4096x4096 against a copy of the same bytes, in alternating rounds, so the
# fraction comes with its spread (issue 29). Per round and device: `perfport roofline` (its
# copy ladder times a copy of the same 128 MiB) and then `perfport tune --configs configs.json`
# (the default search's best of call 4 and its neighbours), each into a fresh database.
#
#   OUT=... bash experiments/2026-11-26-stencil-cross/rounds.sh     # about 120 s on an H200
#   python experiments/2026-11-26-stencil-cross/analyse.py $OUT/rounds
#
# Locally on PoCL: DEVICES=opencl:0:0 SIZE=512 ROUNDS=2 PYTHON=python
set -uo pipefail
OUT=${OUT:?set OUT}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
DEVICES=${DEVICES:-opencl:0:0 cuda:0}
SIZE=${SIZE:-4096} ROUNDS=${ROUNDS:-5}
DIR=$OUT/rounds
mkdir -p "$DIR"
for round in $(seq 1 "$ROUNDS"); do
    for dev in $DEVICES; do
        tag=${dev//:/_}-$round
        timeout 30 $PY -m perfport roofline --device "$dev" --db "$DIR/roof-$tag.db" --json \
            > "$DIR/roofline-$tag.json" || echo "roofline $tag: status $?" >&2
        timeout 60 $PY -m perfport tune stencil_cross --problem width="$SIZE" height="$SIZE" \
            --device "$dev" --configs "$HERE/configs.json" --db "$DIR/tune-$tag.db" --json \
            > "$DIR/tune-$tag.json" || echo "tune $tag: status $?" >&2
        $PY -m perfport export --db "$DIR/tune-$tag.db" --format json | $PY -c "import json, sys; \
rows = json.load(sys.stdin); [r.pop('times_ms', None) for r in rows]; json.dump(rows, sys.stdout)" \
            > "$DIR/results-$tag.json"
        rm -f "$DIR/roof-$tag.db" "$DIR/tune-$tag.db"
    done
done
echo "rounds.sh took $SECONDS s" >&2
