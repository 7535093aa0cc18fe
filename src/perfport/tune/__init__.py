"""Layer 4: the one place that wires a run: ask -> measure -> store -> tell."""

from perfport.tune.progress import Progress, RichProgress
from perfport.tune.result import Budget, TuneResult
from perfport.tune.tune import campaign_key, resolve_problem, tune

__all__ = [
    "Budget",
    "Progress",
    "RichProgress",
    "TuneResult",
    "campaign_key",
    "resolve_problem",
    "tune",
]
