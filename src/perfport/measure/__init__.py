"""Layer 2: measurement. Compile -> verify -> time, in a worker subprocess with time limits
and crash recovery. Failures are Measurements with an Outcome, never exceptions."""

from perfport.measure.runner import Runner
from perfport.measure.settings import RunSettings, Timing
from perfport.measure.trial import TrialEngine

__all__ = ["RunSettings", "Runner", "Timing", "TrialEngine"]
