"""Write the two models of this study into src/perfport/datasets/model/:

    python experiments/2026-11-26-model-accuracy/make_models.py

- ``paper-linear-groups.json``: ``paper-linear.json`` with the paper's barrier term, a cost
  per barrier per work-group (``p_barrier * f_sync_barrier_local * f_thread_groups``); the
  barrier microbenchmarks' times are proportional to that product.
- ``paper-linear-lstride.json``: that model with the local loads at lid(0) stride 0
  (broadcast) and 16 (bank conflicts), the prefetching variants' read patterns, priced apart
  from the stride-1 local accesses; ``lmem_stride_pattern`` informs them (the next GPU run
  measures it: ``experiments/2026-11-26-model-gpu/gpu_run.sh``).
"""

from __future__ import annotations

import json
from pathlib import Path

FOLDER = Path("src/perfport/datasets/model")
LOCAL = "f_mem_access_local_float32"
STRIDES = {
    "p_lmem_s0": f"{LOCAL}_load_lstrides:{{0:0}}",
    "p_lmem_s16": f"{LOCAL}_load_lstrides:{{0:16}}",
}


def main() -> None:
    base = json.loads((FOLDER / "paper-linear.json").read_text())
    barrier = "p_barrier * f_sync_barrier_local"
    assert base["expression"].endswith(barrier)
    groups = {**base, "expression": base["expression"] + " * f_thread_groups"}
    (FOLDER / "paper-linear-groups.json").write_text(json.dumps(groups, indent=1) + "\n")
    lmem = f"p_lmem * {LOCAL}"
    assert groups["expression"].count(lmem) == 1
    rest = " - ".join(STRIDES.values())
    strided = " + ".join(f"{p} * {f}" for p, f in STRIDES.items())
    expression = groups["expression"].replace(lmem, f"p_lmem * ({LOCAL} - {rest}) + {strided}")
    lstride = {**groups, "expression": expression}
    (FOLDER / "paper-linear-lstride.json").write_text(json.dumps(lstride, indent=1) + "\n")


if __name__ == "__main__":
    main()
