"""The line ``perfport tune`` prints after re-timing the best side by side (``--confirm``),
on one device or each campaign of several."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perfport._core import Measurement
    from perfport.tune.confirm import Candidate, Confirmation


def confirmation_line(c: Confirmation, best: Measurement | None = None) -> str:
    """The re-timed winner with its interval, or the candidates it cannot be told from; and,
    when the winner is not ``best`` (the best by stored median), why. With an objective other
    than time, the winner is the best by it, and the line says so. A confirmation that ran out
    of time before re-timing every configuration that may beat the winner says it is not
    conclusive, and names them, never "confirmed ... beyond doubt"."""
    low, high = c.winner.interval_ms
    timed = c.objective.is_time
    by = "" if timed else f" by {c.objective}"
    what = "confirmed best" if c.conclusive else "not conclusive: best of those re-timed"
    head = (
        f"{what}{by} {dict(c.winner.config)}: {_value(c, c.winner)}median "
        f"{c.winner.median_ms:.4g} ms (95% interval {low:.4g}-{high:.4g} ms) after {c.rounds} "
        f"round{'s' * (c.rounds != 1)} of re-timing {len(c.candidates)} candidates side by side"
    )
    if not c.conclusive:
        ahead = "; ".join(
            f"{dict(u.config)} {_value(c, u)}{u.median_ms:.4g} ms" for u in c.unconfirmed
        )
        stored = "stored median" if timed else f"{c.objective.name} at its stored median"
        return head + (
            f"; better by {stored} but not re-timed in the time given: {ahead} (run again, "
            "or raise --confirm-seconds)"
        )
    if c.separated:
        better = "faster" if timed else f"better by {c.objective.name}"
        return head + f"; {better} than the others beyond doubt" + _best_remark(c, best)
    tied = "; ".join(
        f"{dict(t.config)} {_value(c, t)}{t.median_ms:.4g} ms" for t in c.indistinguishable
    )
    if not tied:  # apart, but on too few samples for 95% intervals
        from perfport._core.stats import MIN_CI_SAMPLES  # numpy: not at start-up

        few = f"under {MIN_CI_SAMPLES} samples of a candidate give no 95% interval"
        return head + f"; {few} (raise --confirm-seconds)" + _best_remark(c, best)
    return head + f"; cannot be told apart from: {tied}" + _best_remark(c, best)


def _best_remark(c: Confirmation, best: Measurement | None) -> str:
    """Why the best line above (the best by stored median) names another configuration than
    the winner; nothing when it names the winner."""
    if best is None or best.config == c.winner.config:
        return ""
    name = dict(best.config)
    if best.config in c.dropped:
        return f" ({name}, the best line above by its stored median, failed when timed again)"
    if best.config in {x.config for x in c.candidates}:
        worse = "slower" if c.objective.is_time else "worse"
        if not c.separated:  # within the winner's interval: worse only at the median
            worse += " at the median"
        return (
            f" (the best line above ranks by stored medians, which mix this re-timing with "
            f"each configuration's first timing; side by side {name} was {worse})"
        )
    return (
        f" of those re-timed; {name}, the best line above by its stored median, was not "
        "re-timed in the time given (run again, or raise --confirm-seconds)"
    )


def _value(c: Confirmation, candidate: Candidate) -> str:
    """A candidate's objective value before its median, or nothing when that is the time."""
    if c.objective.is_time:
        return ""
    value = c.value(candidate)
    return f"{c.objective.name} {'-' if value is None else f'{value:.4g}'} at "
