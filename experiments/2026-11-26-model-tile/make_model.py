"""Issue 24: writes ``src/perfport/datasets/model/paper-linear-tile.json``, which is
``paper-linear-resident.json`` with 2-D tile loads with a halo priced apart from aligned
1-D loads, by a cost per load and a cost per row segment.

A *tile load with a halo* is any float32 global load whose lid(0) stride is 1 and lid(1)
stride above 1 (rows along lid(0)), whose both group strides are positive (a 2-D grid of
tiles) and whose access-to-footprint ratio is above 1 (neighbouring groups' tiles overlap):
``TILE`` below. Loads of that kind that carry a work-removal cost of their own (the tags
of ``wr_*`` kernels the model already prices: uFD16 and uFD18) keep it; every other tile
load is priced ``p_tload`` per load plus ``p_trow`` per row segment, where a kernel's row
segments are ``sqrt(tile loads x work-groups)`` (one square tile per group, one row per
lid(1) index). The rule: each unaligned row segment touches on average (w + 7) / 8 32-byte
sectors for w float32 words, i.e. w / 8 + 7 / 8: a cost per word and a cost per row,
whatever w is, so no per-length class is needed. Both costs are fixed by
``tile_halo_pattern`` (``perfport/model/generators_tile.py``), never by an application.

    python experiments/2026-11-26-model-tile/make_model.py
"""

from __future__ import annotations

from pathlib import Path

from perfport.model import Model

ROOT = Path(__file__).parents[2]
MODELS = ROOT / "src/perfport/datasets/model"
SHAPE = "global_float32_load_lstrides:{0:1;1:>1}_gstrides:{0:>0;1:>0}_afr:>1"
TILE = f"f_mem_access_{SHAPE}"
WORK_REMOVED = ("uFD16", "uFD18")  # tile loads with a cost of their own in the base model


def tile_model(base: Model) -> Model:
    own = " - ".join(f"f_mem_access_tag:{t}_{SHAPE}" for t in WORK_REMOVED)
    tiles = f"({TILE} - {own})"
    gload = "p_gload * (f_mem_access_global_float32_load - "
    if base.expression.count(gload) != 1:
        raise SystemExit("the base model's p_gload term is not where this script expects it")
    expression = base.expression.replace(gload, f"{gload}{tiles} - ", 1)
    expression += f" + p_tload * {tiles} + p_trow * sqrt({tiles} * f_thread_groups)"
    return Model(base.output, expression)


def main() -> None:
    model = tile_model(Model.load(MODELS / "paper-linear-resident.json"))
    model.save(MODELS / "paper-linear-tile.json")
    print(f"paper-linear-tile.json: {len(model.parameters)} parameters")


if __name__ == "__main__":
    main()
