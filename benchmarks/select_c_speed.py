"""How long a generated C selector takes to choose a configuration, next to a baseline.

    pip install -e '.[models]'          # scikit-learn fits the tree; gcc compiles the C
    python benchmarks/select_c_speed.py [--leaves 16] [--passes 2000] [--rounds 7]
    python benchmarks/select_c_speed.py --bundle DIR      # a bundle's own selector.c

A decision tree (``max_leaf_nodes`` = --leaves, log2 features, as a deployed selector would
be) is fitted on the 431 lawson-gemm shapes with synthetic labels (4 configurations by output
size, depth and transpose: labels only shape the tree; its depth is what costs time). The
generated ``selector.c`` is compiled with ``gcc -O2`` into a small harness, in its own
translation unit (no LTO), so every decision is a real call, as from a library. The harness
calls it for every shape, in a shuffled order so branch prediction cannot learn one sequence,
``--passes`` times, and times the same loop calling a baseline of the same signature in
another translation unit (a table lookup): both in one process, alternating, best of
``--rounds``. It prints ns per decision for each, their ratio, and the selector's own cost
(the difference). Target: under 1 microsecond (1000 ns) per decision.

With ``--bundle DIR`` (from ``perfport select fit``) the bundle's own ``selector.c`` is timed
instead, on the lawson-gemm shapes in the bundle's feature order, and its answers are checked
against the bundle's tree walk (which answers as the fitted model does).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from perfport.kernels import load_problems
from perfport.select.bundle import load_bundle
from perfport.select.emit_c import generate_c
from perfport.select.tree import SelectorTree, Transform, model_inputs

FEATURES = ("M", "N", "K", "batch", "trans_a", "trans_b")
PARAMS = ("row_tile", "acc_tile", "col_tile", "wg_rows", "wg_cols")
CONFIGS = [
    {"row_tile": r, "acc_tile": a, "col_tile": c, "wg_rows": wr, "wg_cols": wc}
    for r, a, c, wr, wc in ((1, 2, 4, 8, 8), (4, 4, 4, 16, 16), (8, 1, 2, 1, 64), (2, 8, 8, 128, 1))
]

BASELINE = """
/* The same signature as the selector, answering by a table lookup. */
static const int table[8] = {0, 1, 2, 3, 3, 2, 1, 0};
int baseline_select(long M, long N, long K, long batch, long trans_a, long trans_b)
{
    return table[(M + N + K + batch + trans_a + trans_b) & 7];
}
"""

HARNESS = """
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "%(header)s"
#define gemm_select %(function)s

int baseline_select(long M, long N, long K, long batch, long trans_a, long trans_b);
typedef int (*select_fn)(long, long, long, long, long, long);

static const long shapes[][6] = {
%(shapes)s
};
#define SHAPES ((long)(sizeof shapes / sizeof shapes[0]))

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* ns per decision over passes x all shapes; the answers are summed so none can be skipped. */
static double per_decision(select_fn f, long passes, long *sink)
{
    double start = now_ns();
    long sum = 0;
    for (long p = 0; p < passes; ++p)
        for (long i = 0; i < SHAPES; ++i) {
            const long *s = shapes[i];
            sum += f(s[0], s[1], s[2], s[3], s[4], s[5]);
        }
    *sink += sum;
    return (now_ns() - start) / (double)(passes * SHAPES);
}

int main(int argc, char **argv)
{
    long passes = atol(argv[1]), rounds = atol(argv[2]), sink = 0;
    double best_sel = 1e30, best_base = 1e30;
    for (long i = 0; i < SHAPES; ++i) /* the answers, for a check against the model */
        printf("%%d%%c", gemm_select(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3],
                                   shapes[i][4], shapes[i][5]), i + 1 < SHAPES ? ' ' : '\\n');
    per_decision(gemm_select, passes / 10 + 1, &sink); /* warm-up */
    per_decision(baseline_select, passes / 10 + 1, &sink);
    for (long r = 0; r < rounds; ++r) {
        double sel = per_decision(gemm_select, passes, &sink);
        double base = per_decision(baseline_select, passes, &sink);
        if (sel < best_sel) best_sel = sel;
        if (base < best_base) best_base = base;
    }
    printf("%%.3f %%.3f %%ld\\n", best_sel, best_base, sink);
    return 0;
}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=16, help="max_leaf_nodes of the tree")
    parser.add_argument("--passes", type=int, default=2000, help="passes over all shapes")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (best is kept)")
    parser.add_argument("--bundle", metavar="DIR", help="time this bundle's selector.c instead")
    parser.add_argument("--smoke", action="store_true", help="seconds: 20 passes, one round")
    args = parser.parse_args()
    if args.smoke:
        args.passes, args.rounds = 20, 1
    if shutil.which("gcc") is None:
        print("gcc is not installed; nothing to measure", file=sys.stderr)
        return 2
    features = FEATURES
    if args.bundle:
        bundle = load_bundle(args.bundle)
        features = bundle.features
        if sorted(features) != sorted(FEATURES):
            print(f"the bundle reads {features}, not the GEMM shape {FEATURES}", file=sys.stderr)
            return 2
    rows = np.array([[float(p[f]) for f in features] for p in load_problems("lawson-gemm")])
    shuffled = rows[np.random.default_rng(0).permutation(len(rows))].astype(np.int64)
    if args.bundle:
        function = _c_function(args.bundle)
        about = f"bundle {args.bundle}: {len(bundle.configs)} configurations, "
        about += f"{len(bundle.tree.derived)} derived features, depth {bundle.tree.depth}"
        expected = np.array([bundle.choose(dict(zip(features, r, strict=True))) for r in shuffled])
        sources = {"gemm.h": Path(args.bundle, "selector.h").read_text(),
                   "gemm.c": Path(args.bundle, "selector.c").read_text().replace(
                       '#include "selector.h"', '#include "gemm.h"')}  # fmt: skip
    else:
        from sklearn.tree import DecisionTreeClassifier

        m, n, k = rows[:, 0], rows[:, 1], rows[:, 2]
        labels = ((np.log2(m * n) // 5 + (k > 2000) + rows[:, 4]) % len(CONFIGS)).astype(int)
        transforms = [Transform.LOG2] * len(FEATURES)
        model = DecisionTreeClassifier(max_leaf_nodes=args.leaves, random_state=0)
        model.fit(model_inputs(rows, transforms), labels)
        tree = SelectorTree.from_sklearn(model, FEATURES, transforms)
        function = "gemm_select"
        about = f"tree: {model.get_n_leaves()} leaves, depth {model.get_depth()} (log2 features)"
        expected = model.predict(model_inputs(shuffled.astype(np.float64), transforms))
        code = generate_c(tree, "gemm", PARAMS, CONFIGS)
        sources = {"gemm.h": code.header, "gemm.c": code.source}

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, text in sources.items():
            (work / name).write_text(text)
        # The baseline and the harness call with the bundle's argument order.
        args_c = ", ".join(f"long {f}" for f in features)
        (work / "baseline.c").write_text(
            BASELINE.replace("long M, long N, long K, long batch, long trans_a, long trans_b", args_c)
            .replace("M + N + K + batch + trans_a + trans_b", " + ".join(features))
        )  # fmt: skip
        shapes = ",\n".join("    {" + ", ".join(map(str, r)) + "}" for r in shuffled)
        (work / "main.c").write_text(
            HARNESS % {"shapes": shapes, "header": "gemm.h", "function": function}
        )
        exe = work / "speed"
        subprocess.run(
            ["gcc", "-O2", "-o", str(exe), "main.c", "gemm.c", "baseline.c"],
            cwd=work, check=True,
        )  # fmt: skip
        out = subprocess.run(
            [str(exe), str(args.passes), str(args.rounds)],
            check=True, capture_output=True, text=True,
        ).stdout.splitlines()  # fmt: skip

    answers = [int(x) for x in out[0].split()]
    agrees = bool(np.array_equal(answers, expected))
    selector_ns, baseline_ns = (float(x) for x in out[1].split()[:2])
    print(
        f"{about}; {len(shuffled)} lawson-gemm shapes x {args.passes} passes, best of {args.rounds}"
    )
    print(f"C selector answers exactly as the model on every shape: {'yes' if agrees else 'NO'}")
    print(f"C selector (gcc -O2, a call):         {selector_ns:7.2f} ns per decision")
    print(f"baseline (a call + table lookup):     {baseline_ns:7.2f} ns per decision")
    print(
        f"ratio selector/baseline: {selector_ns / baseline_ns:.2f}x; the tree's own cost "
        f"{selector_ns - baseline_ns:.2f} ns; target < 1000 ns: "
        f"{'met' if selector_ns < 1000 else 'MISSED'}"
    )
    return 0 if agrees else 1


def _c_function(directory: str) -> str:
    manifest = json.loads(Path(directory, "bundle.json").read_text())
    return str(manifest["c_function"])


if __name__ == "__main__":
    raise SystemExit(main())
