"""How trials are run: timing policy, verification, time limits."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from perfport._core.errors import SettingsError

MAX_SEED = (1 << 63) - 1  # the largest integer SQLite stores


@dataclass(frozen=True)
class Timing:
    """Warm up, time one launch, then repeat until about ``target_s`` of kernel time has been
    measured, within [min_repeats, max_repeats] samples. ``min_repeats == max_repeats`` fixes
    the count (e.g. to match another tool's)."""

    warmup: int = 1
    min_repeats: int = 5
    max_repeats: int = 200
    target_s: float = 0.1

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.min_repeats < 1 or self.max_repeats < self.min_repeats:
            raise SettingsError("timing needs warmup >= 0 and 1 <= min_repeats <= max_repeats")

    def repeats(self, first_ms: float) -> int:
        wanted = int(self.target_s * 1000.0 / max(first_ms, 1e-6)) + 1
        return max(self.min_repeats, min(self.max_repeats, wanted))

    @classmethod
    def fixed(cls, repeats: int, warmup: int = 1) -> Timing:
        return cls(warmup=warmup, min_repeats=repeats, max_repeats=repeats)


@dataclass(frozen=True)
class RunSettings:
    """Everything about running trials that is not the kernel, problem or device."""

    seed: int = 0
    verify: bool = True
    timing: Timing = field(default_factory=Timing)
    timeout_s: float = 30.0  # longest silence while running: one launch, or one batch (<= 1 s)
    build_timeout_s: float = 300.0  # per build, and for the worker's start-up

    def __post_init__(self) -> None:
        # The seed is stored as an SQLite integer (64 bits, signed) and seeds numpy's
        # generators (never negative): refuse it here, not as an overflow at the first write.
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise SettingsError(
                f"seed {str(seed)[:40]}: give an integer from 0 to {MAX_SEED} (a 64-bit integer)"
            )
        for name in ("timeout_s", "build_timeout_s"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (value > 0 and math.isfinite(value))
            ):  # 0 made every trial a timeout, "worker killed"
                raise SettingsError(f"{name} {value!r}: give a number of seconds above 0")
