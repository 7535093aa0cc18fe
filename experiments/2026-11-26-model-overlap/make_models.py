"""Write the overlap forms (8) of the two shipped linear models (7): the same cost terms,
global memory in t_gm, madds, adds and local accesses in t_oc, launches, work-groups and
barriers in t_sync.

    python experiments/2026-11-26-model-overlap/make_models.py    (from the repository root)
"""

from __future__ import annotations

import json
from pathlib import Path

from perfport.model import Model, overlap_model

DATA = Path("src/perfport/datasets/model")
SYNC = {
    "p_launch": "f_sync_kernel_launch",
    "p_group": "f_thread_groups",
    "p_barrier": "f_sync_barrier_local",
}
ON_CHIP = {"p_madd": "f_op_float32_madd", "p_lmem": "f_mem_access_local_float32"}


def _global_terms(linear: Model) -> dict[str, str]:
    """The linear model's global-memory terms, as {parameter: feature expression}."""
    out = {}
    for term in linear.terms():
        parameter, _, feature = term.partition(" * ")
        if "global" in feature or "tag:" in feature:
            out[parameter] = feature.strip()
    return out


def main() -> None:
    for linear_name, name, on_chip in (
        ("matmul-linear.json", "matmul-overlap.json", ON_CHIP),
        ("paper-linear.json", "paper-overlap.json", {**ON_CHIP, "p_add": "f_op_float32_add"}),
    ):
        linear = Model.from_json(json.loads((DATA / linear_name).read_text()))
        model = overlap_model(linear.output, _global_terms(linear), on_chip, SYNC)
        assert set(model.parameters) == {*linear.parameters, "p_edge"}, name
        model.save(DATA / name)
        print(name, len(model.parameters), "parameters")


if __name__ == "__main__":
    main()
