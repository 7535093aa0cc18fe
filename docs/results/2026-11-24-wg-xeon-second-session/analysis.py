"""The 16-core Xeon measured in a second session: does more data lift its predictions?

    python docs/results/2026-11-24-wg-xeon-second-session/analysis.py    # about 4 min, 2 cores

Everything comes from shipped files (src/perfport/datasets/wg/, provenance in PROVENANCE.md):
the shipped dataset, the first session's samples (``rounds/xeon16-pocl-8x1`` and
``rounds/xeon16-pocl-compact-8x1``) and the second session's (``rounds/xeon16-pocl-second-8x1``,
``rounds/xeon16-pocl-compact-second-8x1``, whose medians with features are
``repeat/xeon16-pocl-8rounds-again.npz`` and ``repeat/xeon16-pocl-compact-8rounds-again.npz``).

1. Rounds: every scenario measured in 8 rounds (all but the 2-core set-up's), its time taken
   as the median of only some rounds, then `performance_forest+novel` evaluated: how much do
   fewer rounds cost?
2. The two sessions, per host of the second (A: the compact 30 and the first 21 others; B:
   the last 19): how fast the second ran (median t2/t1), each session's best size timed in
   the other, and, on the same scenarios, how well each session's two halves of 4 rounds
   agree (within one host).
3. The re-measured scenarios' times taken over both sessions: the median of all 16 samples,
   or the geometric mean of the two sessions' medians (which a host's uniform speed cancels
   from); against the first session alone, from the same float32 samples files (section 1
   shows that reading the times as float32 moves the figures by itself).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from perfport.wg import WgDataset, evaluate, geomean, load_dataset, match_scenarios

ROOT = Path(__file__).resolve().parents[3]
WG = ROOT / "src" / "perfport" / "datasets" / "wg"  # the shipped dataset
DATA_WG = ROOT / "data" / "wg"  # rounds and re-measurements
METHOD = "performance_forest+novel"
SEEDS = (0, 1, 2)
# First session's samples, then the second's (None: not measured again).
SESSIONS = {
    "compact": ("xeon16-pocl-compact-8x1", "xeon16-pocl-compact-second-8x1",
                "xeon16-pocl-compact-8rounds-again"),
    "wide": ("xeon16-pocl-8x1", "xeon16-pocl-second-8x1", "xeon16-pocl-8rounds-again"),
}  # fmt: skip
FIRST_ONLY = ("h100-cuda-8x1", "h100-cuda-compact-8x1", "h100-opencl-8x1",
              "h100-opencl-compact-8x1", "h200-opencl-8x1")  # fmt: skip
HOST_B_FROM = 21  # the second session's host changed after the 21st wide scenario (PROVENANCE)


def samples(name: str) -> dict[str, np.ndarray]:
    with np.load(DATA_WG / "rounds" / f"{name}.samples.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def halves(s: np.ndarray) -> tuple[float, float]:
    """One scenario's rounds 1-4 against its rounds 5-8: each half's best size timed in the other."""
    t1, t2 = (np.median(s[:, h].reshape(len(s), -1), 1) for h in (slice(0, 4), slice(4, 8)))
    ran = np.isfinite(t1) & np.isfinite(t2)
    t1, t2 = t1[ran], t2[ran]
    return t2.min() / t2[np.argmin(t1)], t1.min() / t1[np.argmin(t2)]


def rows_of(data: WgDataset, z: dict[str, np.ndarray]) -> np.ndarray:
    """The dataset row of each scenario of a samples file: same labels and, where labels are
    shared (synthetic stencils), the dataset's times equal to the samples' medians."""
    cols = [data.column(int(a), int(b)) for a, b in z["sizes"]]
    medians = np.median(z["samples"].reshape(*z["samples"].shape[:2], -1), axis=2)
    out = []
    for i, m in enumerate(medians):
        same = np.flatnonzero((data.device == z["device"][i]) & (data.kernel == z["kernel"][i])
                              & (data.dataset == z["dataset"][i]))  # fmt: skip
        hit = [r for r in same if np.allclose(data.runtimes[r, cols], m, rtol=1e-5, equal_nan=True)]
        if len(hit) != 1:
            raise SystemExit(f"scenario {i} of a samples file matches {len(hit)} dataset rows")
        out.append(hit[0])
    return np.array(out)


def score(data: WgDataset) -> dict[str, tuple[float, float]]:
    """Per partition: (mean over seeds, the 16-core Xeon's mean over seeds)."""
    out = {}
    for part in ("kernel", "synthetic-real"):
        runs = [evaluate(data, [METHOD], [part], seed=s)[0] for s in SEEDS]
        xeon = [p for r in runs for d, p, _ in r.per_device if d.startswith("cpu-skylake")]
        out[part] = (100 * np.mean([r.performance for r in runs]), 100 * np.mean(xeon))
    return out


def line(label: str, scores: dict[str, tuple[float, float]]) -> str:
    k, s = scores["kernel"], scores["synthetic-real"]
    return f"| {label} | {k[0]:.2f} | {k[1]:.2f} | {s[0]:.2f} | {s[1]:.2f} |"


def main() -> None:
    data = load_dataset(WG / "stencils.npz")
    header = ("| data | kernel | its 16-core Xeon | synthetic-real | its 16-core Xeon |\n"
              "|---|---:|---:|---:|---:|")  # fmt: skip

    print(f"## 1. Fewer rounds ({METHOD}, mean of seeds {SEEDS})\n")
    files = [samples(n) for n in FIRST_ONLY] + [samples(s[0]) for s in SESSIONS.values()]
    rows = [rows_of(data, z) for z in files]
    print(header)
    for label, keep in (("all 8 rounds (samples files, float32)", slice(0, 8)), ("rounds 1-4", slice(0, 4)),
                        ("rounds 5-8", slice(4, 8)), ("round 1", slice(0, 1))):  # fmt: skip
        runtimes = data.runtimes.copy()
        for z, r in zip(files, rows, strict=True):
            cols = [data.column(int(a), int(b)) for a, b in z["sizes"]]
            picked = z["samples"][:, :, keep].astype(np.float64)
            median = np.median(picked.reshape(*picked.shape[:2], -1), axis=2)
            runtimes[np.ix_(r, cols)] = median
        print(line(label, score(replace(data, runtimes=runtimes))), flush=True)

    print("\n## 2. The two sessions, scenario by scenario\n")
    first_only, pooled, geo = (data.runtimes.copy() for _ in range(3))
    groups: dict[str, list[tuple[float, ...]]] = {}
    for kind, (first, second, again) in SESSIONS.items():
        one, two = samples(first), samples(second)
        redone = load_dataset(DATA_WG / "repeat" / f"{again}.npz")
        pairs, unmatched = match_scenarios(data, redone)
        if unmatched or len(pairs) != len(two["samples"]):
            raise SystemExit(f"{again}: {len(unmatched)} scenarios not in the shipped dataset")
        first_row = {r: i for i, r in enumerate(rows_of(data, one))}
        if not np.array_equal(one["sizes"], two["sizes"]):
            raise SystemExit(f"{first} and {second} list different sizes")
        cols = [data.column(int(a), int(b)) for a, b in two["sizes"]]
        for r, j in pairs:
            a = one["samples"][first_row[r]].astype(np.float64)
            b = two["samples"][j].astype(np.float64)
            ta, tb = np.median(a.reshape(len(a), -1), 1), np.median(b.reshape(len(b), -1), 1)
            ran = np.isfinite(ta) & np.isfinite(tb)
            a_on_b = np.nanmin(tb[ran]) / tb[ran][np.argmin(ta[ran])]
            b_on_a = np.nanmin(ta[ran]) / ta[ran][np.argmin(tb[ran])]
            host = "A" if kind == "compact" or j < HOST_B_FROM else "B"
            groups.setdefault(f"{kind}, host {host}", []).append(
                (float(np.median(tb[ran] / ta[ran])), a_on_b, b_on_a, *halves(a), *halves(b))
            )
            first_only[r, cols] = ta
            pooled[r, cols] = np.median(np.concatenate([a, b], axis=1).reshape(len(a), -1), 1)
            geo[r, cols] = np.sqrt(ta * tb)
    print("| scenarios | n | median t2/t1 (range) | 1st session's best in the 2nd | 2nd's best "
          "in the 1st | halves of 4 rounds agree: 1st session | 2nd session |")  # fmt: skip
    print("|---|---:|---|---:|---:|---|---|")
    for name, v in groups.items():
        ratio, ab, ba, h1, h2, h3, h4 = (np.array(x) for x in zip(*v, strict=True))
        print(f"| {name} | {len(v)} | {np.median(ratio):.2f} ({ratio.min():.2f}-{ratio.max():.2f}) "
              f"| {100 * geomean(ab):.1f}% | {100 * geomean(ba):.1f}% "
              f"| {100 * geomean(h1):.1f} / {100 * geomean(h2):.1f}% "
              f"| {100 * geomean(h3):.1f} / {100 * geomean(h4):.1f}% |")  # fmt: skip

    print(f"\n## 3. Both sessions in the dataset ({METHOD}, mean of seeds {SEEDS})\n")
    print(header)
    print(line("shipped (first session, 8 rounds)", score(data)), flush=True)
    first = score(replace(data, runtimes=first_only))
    print(
        line("the same, the re-measured scenarios read from the samples files", first), flush=True
    )
    print(
        line("median of both sessions' 16 samples", score(replace(data, runtimes=pooled))),
        flush=True,
    )
    print(line("geometric mean of the two sessions' medians", score(replace(data, runtimes=geo))))


if __name__ == "__main__":
    main()
