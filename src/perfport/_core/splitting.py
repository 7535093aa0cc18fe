"""How a kernel's index space splits across devices: a declaration on its KernelSpec.

Each part of a split run is the same kernel on a smaller problem: the problem value
``extent`` (e.g. ``n``, ``height``, ``M``) shrinks to the part's elements, the arrays named in
``arrays`` are cut along one axis, and every other argument goes whole to every part. A part
gets ``halo`` elements more on each side where its neighbours have them (a stencil's border
rows), computes them too and the host keeps only its own range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from perfport._core.errors import SpecError


@dataclass(frozen=True)
class SplitArray:
    """An array cut along the split: seen as ``view`` (expressions; empty: its own shape),
    ``axis`` (an expression, e.g. ``2 if trans_b else 1``) of that view runs along the
    split's extent. The part's slice starts at its first element (less its halo) and is as
    long as the array's size along the axis on the part's problem (``n + mask - 1`` for a
    convolution's input)."""

    name: str
    axis: str = "0"
    view: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "axis", str(self.axis))
        view = (self.view,) if isinstance(self.view, str) else self.view
        object.__setattr__(self, "view", tuple(str(v) for v in view))


@dataclass(frozen=True)
class SplitDim:
    """One NDRange ``dimension`` along which the kernel's work splits: the problem value
    ``extent`` counts its elements, each work-item covers ``granule`` of them (an expression
    of the configuration; matmul's ``row_tile``), and a part needs ``halo`` = (before, after)
    elements of its neighbours (expressions of the problem). ``feeds`` pairs (output, input)
    for time-stepping (``perfport split --steps``): each step's output is the next step's
    input, both cut arrays of one shape and type (a dict ``{"output": "input"}`` also works)."""

    dimension: int
    extent: str
    arrays: tuple[SplitArray, ...]
    granule: str = "1"
    halo: tuple[str, str] = ("0", "0")
    feeds: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "arrays", tuple(self.arrays))
        object.__setattr__(self, "granule", str(self.granule))
        if len(self.halo) != 2:
            raise SpecError(f"split along {self.dimension}: halo is (before, after)")
        object.__setattr__(self, "halo", (str(self.halo[0]), str(self.halo[1])))
        feeds = self.feeds.items() if isinstance(self.feeds, Mapping) else self.feeds
        object.__setattr__(self, "feeds", tuple((str(o), str(i)) for o, i in feeds))


def check_splits(
    what: str, splits: Sequence[SplitDim], dims: int, problem: Sequence[str], arrays: Sequence[str]
) -> None:
    """Raise SpecError for a declaration that cannot describe this kernel."""
    seen: set[int] = set()
    for s in splits:
        if not isinstance(s, SplitDim):
            raise SpecError(f"{what}: split must hold SplitDim records, got {s!r}")
        if not 0 <= s.dimension < dims or s.dimension in seen:
            raise SpecError(
                f"{what}: split dimension {s.dimension} must be one of the kernel's 0..{dims - 1}, "
                "each once"
            )
        seen.add(s.dimension)
        if s.extent not in problem:
            raise SpecError(f"{what}: split extent {s.extent!r} is not a problem value")
        if not s.arrays:
            raise SpecError(f"{what}: split along {s.dimension} cuts no array; name one")
        for a in s.arrays:
            if not isinstance(a, SplitArray) or a.name not in arrays:
                raise SpecError(f"{what}: split array {a!r} is not an array argument")
        cut = {a.name for a in s.arrays}
        for out, into in s.feeds:
            if out not in cut or into not in cut or out == into:
                raise SpecError(
                    f"{what}: split along {s.dimension} feeds {out!r} into {into!r}: name two "
                    f"different arrays the split cuts ({', '.join(sorted(cut))})"
                )
