"""Issue 24: the bank-conflict feature (``f_mem_transactions_local_float32``) on GPU session
d's H200 data. Writes ``data.csv`` here (call B's slim data plus call F's 16 x 16
``lmem_stride_pattern`` rows, same device fingerprint) and prints the cross-prediction of the
strided local-load kernels between the two work-group layouts, by each model:

- calibrated on the 1-D (256) strided kernels of call F, predict its 16 x 16 ones, and back
  (``lmem_stride_pattern`` alone; a four-cost model below);
- calibrated on every measurement kernel of call B (1-D strided ones included), predict call
  F's 16 x 16 ones; calibrated with the 16 x 16 ones in place of the 1-D ones, predict those.

No application row is used here.  From the repository root (about a minute on 2 cores):
    python experiments/2026-11-26-model-conflicts/analyse.py
"""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from perfport.model import Model, calibrate, input_features, predict
from perfport.model.dataset import KernelFeatures, TimedKernel, from_store, read_data, write_data

HERE = Path(__file__).parent
SESSION = HERE.parent / "2026-11-26-gpu-session-d"
MODELS = HERE.parents[1] / "src/perfport/datasets/model"
STRIDED = "mk-lmem_stride_pattern"
# lmem_stride_pattern alone: launch, work-group, add and local costs (its one fill store,
# barrier and global store per work-item are proportional to the work-groups there).
ALONE = {
    "format": "perfport-model/1",
    "output": "f_cl_wall_time",
    "shape": [],
    "initial": {},
}
LOCAL = {
    "accesses": "f_mem_access_local_float32",
    "transactions": "f_mem_transactions_local_float32",
}


def call_f_runs() -> list[TimedKernel]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "model.db"
        with gzip.open(SESSION / "callF/model-e/model.db.gz") as src, db.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        return from_store(db)


def two_d(r: TimedKernel) -> bool:
    return r.kernel == STRIDED and int(r.problem.get("lsize_1", 1)) > 1


def geomean_error(
    model: Model, train: list[TimedKernel], test: list[TimedKernel], kf: KernelFeatures
) -> tuple[float, float]:
    """Geometric-mean and largest relative error of ``test`` predicted after calibrating on
    ``train``."""
    calibration = calibrate(model, kf.measurements(model, train), device="H200")
    errors = []
    for r in test:
        p = predict(calibration, input_features(model, kf.stats(r.kernel, r.problem)))
        errors.append(abs(p.value * 1e3 / r.time_ms - 1))
    e = np.maximum(np.array(errors), 1e-12)
    return float(np.exp(np.mean(np.log(e)))), float(e.max())


def main() -> None:
    kf = KernelFeatures()
    f_runs = call_f_runs()
    f_1d = [r for r in f_runs if r.kernel == STRIDED and not two_d(r)]
    f_2d = [r for r in f_runs if two_d(r)]
    b_runs = read_data(SESSION / "callB/model/data.csv")
    write_data(b_runs + f_2d, HERE / "data.csv")
    b_mk = [r for r in b_runs if r.is_collection]
    b_no_strided = [r for r in b_mk if r.kernel != STRIDED]
    b_1d = [r for r in b_mk if r.kernel == STRIDED]
    rows: dict[str, float] = {}
    print("| model | calibrated on | predicts | geomean rel. error | largest |")
    print("|---|---|---|---:|---:|")
    for label, local in LOCAL.items():
        alone = Model.from_json(
            ALONE
            | {
                "expression": "p_launch * f_sync_kernel_launch + p_group * f_thread_groups"
                f" + p_add * f_op_float32_add + p_lmem * {local}"
            }
        )
        for name, train, test in (
            ("1-D 256 (call F)", f_1d, f_2d),
            ("16 x 16 (call F)", f_2d, f_1d),
        ):
            g, worst = geomean_error(alone, train, test, kf)
            other = "16 x 16" if train is f_1d else "1-D 256"
            rows[f"alone-{label}-{'1d' if train is f_1d else '2d'}"] = g
            print(f"| strided kernels alone, local {label} | {name} | {other} | {g:.1%} | "
                  f"{worst:.1%} |")  # fmt: skip
    for file in ("paper-linear-groups", "paper-linear-conflicts"):
        model = Model.load(MODELS / f"{file}.json")
        for name, train, test in (
            ("call B's 125 (1-D strided)", b_mk, f_2d),
            ("call B's without 1-D strided, + 16 x 16", b_no_strided + f_2d, b_1d),
        ):
            g, worst = geomean_error(model, train, test, kf)
            other = "16 x 16 (call F)" if test is f_2d else "1-D 256 (call B)"
            rows[f"{file}-{'1d' if test is f_2d else '2d'}"] = g
            print(f"| `{file}` | {name} | {other} | {g:.1%} | {worst:.1%} |")
    (HERE / "xpred.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
