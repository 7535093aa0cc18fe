"""FD's six work-group sizes on the H200 (stored data only, no GPU): measured and predicted
times (model-hoist's guided replay), the calibrated model's terms, and candidate features
the model lacks: groups resident per SM, waves, lanes used in the last sub-group, and the
global-load cost the model gives FD's u loads (its own tag's cost only at lsize 16 and 18).

    python experiments/2026-11-26-model-gpu-f/fd_groups.py > fd-groups.txt
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

ROOT = Path(__file__).parents[2]
HOIST = ROOT / "experiments/2026-11-26-model-hoist"
MODEL = ROOT / "src/perfport/datasets/model/paper-linear-hoisted.json"
N, SMS, THREADS_PER_SM, GROUPS_PER_SM, SUBGROUP = 8960, 132, 2048, 32, 32


def main() -> None:
    from perfport.model import Model, gather, input_features
    from perfport.model.paper_kernels import finite_diff

    params = json.loads((HOIST / "evaluate-paper-linear-hoisted.json").read_text())
    p = params["calibrations"][0]["parameters"]
    (fd,) = [
        s
        for s in json.loads((HOIST / "guided-paper-linear-hoisted.json").read_text())["spaces"]
        if s["space"] == "fd"
    ]
    model = Model.load(MODEL)
    print("| lsize | measured ms | predicted ms | residual ms | groups | resident/SM | waves "
          "| last sub-group lanes | u load cost (s) | u loads ms |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for row in fd["rows"]:
        lsize = row["config"]["lsize"]
        threads = lsize * lsize
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = gather(finite_diff(lsize)).evaluate({"n": N})
        f = input_features(model, e)
        tag = f"p_uFD{lsize}"
        cost = p.get(tag, p["p_gload"])
        loads = f.get(f"f_mem_access_tag:uFD{lsize}", 0) or f["f_mem_access_global_float32_load"]
        # threads are allotted in whole sub-groups
        resident = min(GROUPS_PER_SM, THREADS_PER_SM // (math.ceil(threads / SUBGROUP) * SUBGROUP))
        waves = e.thread_groups / (SMS * resident)
        lanes = threads % SUBGROUP or SUBGROUP
        print(f"| {lsize} | {row['measured_ms']:.3f} | {row['predicted_ms']:.3f} "
              f"| {row['measured_ms'] - row['predicted_ms']:+.3f} | {e.thread_groups:.0f} "
              f"| {resident} | {waves:.1f} ({math.ceil(waves)}) | {lanes} of {SUBGROUP} "
              f"| {cost:.3g} ({tag if tag in p else 'p_gload'}) | {loads * cost * 1e3:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
