"""The stencil scenarios of a work-group-size collection: Cummins' real-world kernels at
every data size, then synthetic ones with random borders, types and complexity.

The kernel names come from ``perfport.kernels.stencils.STENCILS``, their one home.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport.kernels.stencils import STENCILS

SYNTHETIC = "synthetic"  # the template of Cummins' synthetic stencils
SIZES = (512, 1024, 2048, 4096)
# Cummins' real-world kernels: every stencil scenario kernels/ has, but the synthetic template.
REAL_WORLD: tuple[str, ...] = tuple(name for name in STENCILS if name != SYNTHETIC)
# The built-in kernels whose stored campaigns make a work-group dataset.
STENCIL_KERNELS: tuple[str, ...] = ("stencil", *STENCILS)
BORDERS = (0, 1, 2, 3, 5, 10, 20, 30)


@dataclass(frozen=True)
class Scenario:
    kernel: str
    problem: tuple[tuple[str, Any], ...]

    @property
    def label(self) -> str:
        return f"{self.kernel} " + " ".join(f"{k}={v}" for k, v in self.problem)


def scenarios(
    count: int,
    sizes: Sequence[int] = SIZES,
    seed: int = 0,
    max_border: int = 30,
    real_world: bool = True,
) -> list[Scenario]:
    """The real-world kernels at every size (gaussian at radii 1, 3 and 5; left out with
    ``real_world=False``), then synthetic ones with random borders (each way one of
    ``BORDERS`` up to ``max_border``), types and complexity, up to ``count`` in all.

    The defaults give the list of the first shipped collections. Borders drawn independently
    from 0-30 make a stencil with all four at most 2 wide (what most real stencils are) a
    2% event, so ``max_border=5`` collects that region on purpose."""
    sizes = tuple(dict.fromkeys(sizes))  # a size given twice is one size
    borders_from = tuple(b for b in BORDERS if b <= max_border)
    if not borders_from:
        raise ValueError(f"max_border {max_border}: borders are 0 or more")
    out: list[Scenario] = []
    for name, size in itertools.product(REAL_WORLD if real_world else (), sizes):
        radii = (1, 3, 5) if name == "gaussian" else (None,)
        for r in radii:
            fixed = {"width": size, "height": size} | ({"radius": r} if r is not None else {})
            out.append(Scenario(name, tuple(sorted(fixed.items()))))
    rng = np.random.default_rng(seed)
    types = (
        ("float", "same"),
        ("double", "same"),
        ("int", "same"),
        ("int", "float"),
        ("float", "double"),
    )
    distinct = len(sizes) * len(borders_from) ** 4 * len(types) * 2
    if count - len(out) > distinct:
        raise ValueError(
            f"{count} scenarios asked for, but these sizes and borders give only "
            f"{len(out) + distinct}; ask for fewer, or give more sizes or a larger border limit"
        )
    seen: set[tuple[tuple[str, Any], ...]] = set()
    while len(out) < count:
        size = int(rng.choice(sizes))
        borders = {k: int(rng.choice(borders_from)) for k in ("north", "south", "east", "west")}
        dtype, out_dtype = types[int(rng.integers(len(types)))]
        problem: dict[str, Any] = {
            "width": size,
            "height": size,
            "dtype": dtype,
            "out_dtype": out_dtype,
            "complex": bool(rng.integers(2)),
            **borders,
        }
        key = tuple(sorted(problem.items()))
        if key not in seen:
            seen.add(key)
            out.append(Scenario(SYNTHETIC, key))
    return out[:count]
