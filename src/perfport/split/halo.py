"""Which elements of a split's extent move between parts in a time-stepping run, and where
they sit in a part's buffer: the host logic of halo exchange and of re-splitting, apart from
any device so that it is tested anywhere.

A part owns elements [start, stop) of the extent and holds [start - lo, stop + hi) (its
halo). After a step each part's own elements are right and its halo is stale: the halo comes
from the neighbours that own it. When the split changes, each part's new held range comes
from the old owners (itself included: that stays on its device).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

from perfport._core import ArrayArg, Expr, KernelSpec, SpecError, SplitDim
from perfport._core.dtypes import numpy_dtype

Range = tuple[int, int]


@dataclass(frozen=True)
class Transfer:
    """Elements [start, stop) of the extent, copied from part ``source``'s buffer into part
    ``target``'s (the same part: a copy on its device)."""

    source: int
    target: int
    start: int
    stop: int


def transfers(owned: Sequence[Range], wanted: Sequence[Sequence[Range]]) -> tuple[Transfer, ...]:
    """Every copy that fills each part's ``wanted`` ranges from the parts that own them
    (``owned``: one range per part, empty ones included, together the whole extent)."""
    out = []
    for target, ranges in enumerate(wanted):
        for a, b in ranges:
            covered = 0
            for source, (s, t) in enumerate(owned):
                lo, hi = max(a, s), min(b, t)
                if lo < hi:
                    out.append(Transfer(source, target, lo, hi))
                    covered += hi - lo
            if covered != max(0, b - a):
                raise ValueError(f"elements {a}..{b} are not all owned by a part of {owned}")
    return tuple(out)


def halo_ranges(own: Range, held: Range) -> tuple[Range, ...]:
    """The parts of ``held`` outside ``own``: the halo before and after, where non-empty."""
    return tuple(r for r in ((held[0], own[0]), (own[1], held[1])) if r[1] > r[0])


@dataclass(frozen=True)
class Slab:
    """How a cut array lies in a part's buffer: element ``first`` of the extent (the part's
    start less its halo) at byte 0, ``row_bytes`` per element of the extent."""

    first: int
    row_bytes: int

    def span(self, start: int, stop: int) -> tuple[int, int]:
        """Byte offset and byte count of extent elements [start, stop) in the buffer."""
        return (start - self.first) * self.row_bytes, (stop - start) * self.row_bytes


def row_shape(spec: KernelSpec, split: SplitDim, name: str, env: Mapping[str, Any]) -> int:
    """Elements of array ``name`` per element of the extent (on the problem ``env``); raises
    SpecError where its cut is not whole rows of its outermost axis, one per element of the
    extent, which time-stepping needs (a halo is then one contiguous run of bytes)."""
    arg = next(a for a in spec.args if isinstance(a, ArrayArg) and a.name == name)
    cut = next(a for a in split.arrays if a.name == name)
    view = [int(Expr(e, f"split view of {name}").value(env)) for e in (cut.view or arg.shape)]
    axis = int(Expr(cut.axis, f"split axis of {name}").value(env))
    extent = int(env[split.extent])
    if prod(view[:axis]) != 1 or view[axis] != extent:
        raise SpecError(
            f"kernel {spec.name}: time-stepping along dimension {split.dimension} needs "
            f"{name} cut along its outermost axis, one row per element of {split.extent} "
            f"(its view is {tuple(view)}, cut along axis {axis}); split along another "
            "--dimension or drop --steps"
        )
    return prod(view[axis + 1 :])


def check_feeds(spec: KernelSpec, split: SplitDim, env: Mapping[str, Any]) -> None:
    """Raise SpecError unless ``split`` can step: it declares feeds, each pair one output
    and one array of the same shape and type, and every cut array lies in whole rows."""
    if not split.feeds:
        raise SpecError(
            f"kernel {spec.name}: its split along {split.dimension} declares no feeds (which "
            "output is the next step's input); give its SplitDim feeds={'output': 'input'} "
            "or drop --steps"
        )
    arrays = {a.name: a for a in spec.args if isinstance(a, ArrayArg)}
    for out, into in split.feeds:
        a, b = arrays[out], arrays[into]
        shapes = [tuple(int(Expr(e, "shape").value(env)) for e in x.shape) for x in (a, b)]
        types = [str(Expr(x.dtype, "dtype").value(env)) for x in (a, b)]
        if not a.output or shapes[0] != shapes[1] or numpy_dtype(types[0]) != numpy_dtype(types[1]):
            raise SpecError(
                f"kernel {spec.name}: {out} cannot feed {into}: it must be an output of the "
                f"same shape and type ({out}: {shapes[0]} {types[0]}, {into}: {shapes[1]} "
                f"{types[1]}); e.g. a stencil's out_dtype must be 'same'"
            )
    for cut in split.arrays:
        row_shape(spec, split, cut.name, env)
