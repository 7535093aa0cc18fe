"""Issue 24: how each model fits the 1-D group-size kernels of GPU session e (its calibration
set; no application row is used): time per work-item relative to groups of 256, measured and
predicted, at the largest nel, and the barrier and group costs. Reads ``data.csv`` here
(``make_data.py``). About a minute on 2 cores:

    python experiments/2026-11-26-model-resident/analyse.py
"""

from __future__ import annotations

from pathlib import Path

from perfport.model import Model, calibrate, input_features, predict
from perfport.model.dataset import KernelFeatures, read_data

HERE = Path(__file__).parent
MODELS = HERE.parents[1] / "src/perfport/datasets/model"
SHOWN = ("p_group", "p_barrier", "p_exposed")


def main() -> None:
    runs = [r for r in read_data(HERE / "data.csv") if r.is_collection]
    kf = KernelFeatures()
    groups = [r for r in runs if r.kernel == "mk-lmem_stride_pattern"
              and int(r.problem.get("m", 0)) == 4]  # fmt: skip
    nel = max(int(r.problem["nel"]) for r in groups)
    largest = sorted((r for r in groups if int(r.problem["nel"]) == nel),
                     key=lambda r: int(r.problem["lsize_0"]))  # fmt: skip
    device = runs[0].device
    base = {int(r.problem["lsize_0"]): r.time_ms for r in largest}[256]
    header = ["group", "measured"]
    columns = []
    for name in ("paper-linear-hoisted", "paper-linear-resident"):
        model = Model.load(MODELS / f"{name}.json")
        for bounded in (False, True):
            fit = calibrate(model, kf.measurements(model, runs), device=device,
                            allow_uninformed=True, nonnegative=bounded)  # fmt: skip
            times = [predict(fit, input_features(model, kf.stats(r.kernel, r.problem),
                                                 device=device)).value * 1e3
                     for r in largest]  # fmt: skip
            label = f"{name.removeprefix('paper-linear-')}{' bounded' if bounded else ''}"
            header.append(label)
            costs = ", ".join(f"{p} {fit.parameters[p]:.3g}" for p in SHOWN
                              if p in fit.parameters)  # fmt: skip
            print(f"{label}: {costs} s")
            at256 = times[[int(r.problem["lsize_0"]) for r in largest].index(256)]
            columns.append([t / at256 for t in times])
    print(f"\ntime per work-item / groups of 256's, nel {nel} (measured and predicted)\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---:|" * len(header))
    for i, r in enumerate(largest):
        cells = [f"{c[i]:.2f}" for c in columns]
        print(f"| {r.problem['lsize_0']} | {r.time_ms / base:.2f} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
