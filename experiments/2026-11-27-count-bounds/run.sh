#!/bin/sh
# benchmarks/model_counts.py at REV (default c2dfdc1, before the change) and at the checkout,
# alternating, three rounds each; JSON outputs beside this script. Run from the checkout root
# with the project's venv active (pip install -e '.[pocl,model]').
set -e
REV=${REV:-c2dfdc1}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(pwd)
OLD=$(mktemp -d)/before
git worktree add -q "$OLD" "$REV"
for round in 1 2 3; do
    (cd "$OLD" && PYTHONPATH="$OLD/src" python benchmarks/model_counts.py --sizes 64 --json) \
        > "$HERE/before-$round.json"
    (cd "$ROOT" && PYTHONPATH="$ROOT/src" python benchmarks/model_counts.py --sizes 64 --json) \
        > "$HERE/after-$round.json"
done
git worktree remove --force "$OLD"
python "$HERE/summary.py" "$HERE"
