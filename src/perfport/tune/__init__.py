"""Layer 4: the one place that wires a run: ask -> measure -> store -> tell."""

from perfport.tune.progress import Progress, RichProgress
from perfport.tune.result import Budget, TuneResult
from perfport.tune.sweep import SWEEP_TIMING, Gold, SweepInterrupted, SweepProgress, sweep
from perfport.tune.tune import campaign_key, resolve_problem, tune

__all__ = [
    "SWEEP_TIMING",
    "Budget",
    "Gold",
    "Progress",
    "RichProgress",
    "SweepInterrupted",
    "SweepProgress",
    "TuneResult",
    "campaign_key",
    "resolve_problem",
    "sweep",
    "tune",
]
