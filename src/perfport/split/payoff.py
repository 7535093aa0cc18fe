"""When a re-split between time steps pays: the saving it predicts over the steps that remain
against the predicted cost of moving the rows that change owner, and never for part times
that differ by no more than their step-to-step noise.

The GPU run (two H200s, a 16384^2 stencil, 50 steps of about 1.2 ms) re-split between two
identical GPUs on noise: on CUDA 11 times, moving 20-66 MB through the host at 138-196 ms a
move; on OpenCL once, 15.9 MB in 2136 ms (the parts' kernels rebuilt for their new sizes)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfport._core import ArrayArg, Expr, KernelSpec, SplitDim
from perfport._core.dtypes import numpy_dtype
from perfport.split.halo import Range, row_shape, transfers
from perfport.split.steps import Step


@dataclass(frozen=True)
class Payoff:
    """A proposed re-split's prediction: ms saved over the remaining steps, ms its move
    costs (inf: no measured transfer rate yet), and the measured imbalance and noise."""

    saving_ms: float
    cost_ms: float
    imbalance: float
    noise: float

    @property
    def pays(self) -> bool:
        return self.imbalance > self.noise and self.saving_ms > self.cost_ms


def spread(times: Sequence[float]) -> float:
    """Step-to-step noise of one device's kernel times: their range over their median."""
    middle = statistics.median(times)
    return (max(times) - min(times)) / middle if middle > 0 else 0.0


def moved_elements(old: Sequence[Range], new: Sequence[Range]) -> int:
    """Elements of the extent that change owner from ``old`` to ``new`` (halo rows aside:
    a few rows beside millions)."""
    return sum(t.stop - t.start for t in transfers(old, [[r] for r in new]) if t.source != t.target)


def transfer_rate(done: Sequence[Step]) -> tuple[float, bool] | None:
    """Bytes per ms between devices measured so far, and whether it is the moves' own rate
    (their kernel rebuilds included) rather than the halo exchanges' (None: nothing has
    moved yet)."""
    moves = [s for s in done if s.moved_bytes]
    if moves:
        return sum(s.moved_bytes for s in moves) / max(sum(s.moved_ms for s in moves), 1e-9), True
    exchanges = [s for s in done if s.exchange_bytes]
    ms = sum(s.exchange_ms for s in exchanges)
    return (sum(s.exchange_bytes for s in exchanges) / ms, False) if ms > 0 else None


def element_bytes(spec: KernelSpec, split: SplitDim, env: Mapping[str, Any]) -> int:
    """Bytes a re-split moves per extent element that changes owner: a row of every array
    the split cuts."""
    arrays = {a.name: a for a in spec.args if isinstance(a, ArrayArg)}
    total = 0
    for cut in split.arrays:
        dtype = numpy_dtype(str(Expr(arrays[cut.name].dtype, "dtype").value(env)))
        total += row_shape(spec, split, cut.name, env) * dtype.itemsize
    return total


def payoff(
    done: Sequence[Step],
    window: int,
    new: Sequence[Range],
    lines: Sequence[tuple[float, float]],
    remaining: int,
    row_bytes: int,
    first_move_ms: float = 0.0,
) -> Payoff:
    """The prediction for moving from ``done[-1]``'s parts to ``new`` before the next of
    ``remaining`` steps: each device's part time now (the median of the last ``window``
    steps) against its line at its new part, and the move's bytes at the measured rate.
    Before any move, ``first_move_ms`` stands for what a move costs beyond its bytes (its
    parts' kernels rebuilt for their new sizes: on the GPU run a 15.9 MB move took 2136 ms);
    after one, the moves' own measured rate includes it."""
    same, busy = done[-window:], [i for i, (a, b) in enumerate(done[-1].parts) if b > a]
    medians = [statistics.median(s.kernel_ms[i] for s in same) for i in busy]
    imbalance = max(medians) / min(medians) - 1 if min(medians) > 0 else 0.0
    noise = max(spread([s.kernel_ms[i] for s in same]) for i in busy)
    after = max(
        (lines[i][0] + lines[i][1] * (b - a) for i, (a, b) in enumerate(new) if b > a),
        default=0.0,
    )
    saving = (max(medians) - after) * remaining
    measured = transfer_rate(done)
    moved = moved_elements(done[-1].parts, new) * row_bytes
    if moved == 0:
        cost = 0.0
    elif measured is None:
        cost = float("inf")  # no transfer measured yet: nothing to predict a move from
    else:
        rate, of_moves = measured
        cost = moved / rate + (0.0 if of_moves else first_move_ms)
    return Payoff(saving, cost, imbalance, noise)
