"""Per-device switch between the plain forest and its +fixed rule, decided from the nested
inner leave-one-kernel-label-out gains in nested_t100.pkl (run_nested.py, in common.OUT).

A device gets the +fixed rule in an outer fold where its inner mean log gain of +fixed over
plain is > 0, > 1 or > 2 standard errors clustered by kernel instance; plain and fixed are the
two rules applied everywhere. Prints each rule's performance per partition and seed, and
writes decide_results.pkl ({(rule, partition, seed): {scenario: column}}) to common.OUT.

    python docs/results/2026-11-23-wg-novel/experiments/decide.py [--verbose]
"""

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import OUT, SHORT, load, perf

data = load()
store = pickle.loads((OUT / "nested_t100.pkl").read_bytes())
verbose = "--verbose" in sys.argv


def stats(rows):
    x = np.array([r[3] for r in rows]) * 100
    g = np.array([r[1] for r in rows])
    ug, gi = np.unique(g, return_inverse=True)
    sums = np.bincount(gi, weights=x - x.mean())
    se = np.sqrt(len(ug) / max(len(ug) - 1, 1) * (sums**2).sum()) / len(x)
    labs = {}
    for r in rows:
        labs.setdefault(r[2], []).append(r[3] * 100)
    return x.mean(), se, {k: np.mean(v) for k, v in labs.items()}, len(x)


RULES = {
    "mean>0 (as before)": lambda m, se, labs: m > 0,
    "mean>1SE": lambda m, se, labs: m > 1 * se,
    "mean>2SE": lambda m, se, labs: m > 2 * se,
}

results = {}
for (p, seed), res in sorted(store.items()):
    for rule, f in [*RULES.items(), ("plain", None), ("fixed", None)]:
        chosen = {}
        for fold in res:
            bykey = {}
            for r in fold["inner"]:
                bykey.setdefault(fold["devkeys"][r[0]], []).append(r)
            distrust = set()
            for key, rows in bykey.items():
                m, se, labs, n = stats(rows)
                if f is not None and f(m, se, labs):
                    distrust.add(key)
                if verbose and rule == "mean>2SE" and seed == 0:
                    names = "/".join(sorted({SHORT[r[0]] for r in rows}))
                    label = data.kernel[fold["test"][0]]
                    means = {k[:12]: round(v, 2) for k, v in labs.items()}
                    print(p, label, names, f"{m:+.2f}±{se:.2f} n={n}", means)
            for s, (a, b) in fold["outer"].items():
                key = fold["devkeys"][str(data.device[s])]
                use_b = rule == "fixed" or (f is not None and key in distrust)
                chosen[s] = b if use_b else a
        results[(rule, p, seed)] = chosen

for rule in [*RULES, "plain", "fixed"]:
    line = []
    for p in ["kernel", "synthetic-real"]:
        v = [perf(data, results[(rule, p, s)]) for s in range(3) if (rule, p, s) in results]
        line.append(" / ".join(f"{x:.2f}" for x in v) + f" : {np.mean(v):.2f}")
    print(f"{rule:22s} kernel {line[0]:28s} synth-real {line[1]}")
(OUT / "decide_results.pkl").write_bytes(pickle.dumps(results))
