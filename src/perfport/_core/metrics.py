"""Metrics of a result and the objective a search optimises.

A kernel spec may declare ``bytes`` (moved to and from global memory) and ``flops`` (operations
done) as expressions of the problem, parameters and derived values, and named ``metrics``:
expressions of the same names plus ``time_ms`` (the result's median), ``bytes``, ``flops`` and
the metrics before it. Declaring ``bytes`` adds the metric ``GBps``, ``flops`` adds ``GFLOPs``.
Everything is parsed by ``perfport._core.expr`` (never ``eval``), checked at spec load, and can
be rebuilt from a stored ``KernelSpec.describe()``, so stored results get their metrics too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from perfport._core.dtypes import numpy_dtype
from perfport._core.errors import ExpressionError, SpecError
from perfport._core.expr import Expr
from perfport._core.identifiers import is_identifier

TIME = "time_ms"
GBPS = "GBps"
GFLOPS = "GFLOPs"
_RESERVED = {TIME, "bytes", "flops", GBPS, GFLOPS, "time"}


class Direction(Enum):
    MIN = "min"
    MAX = "max"


@dataclass(frozen=True)
class Objective:
    """What the search optimises: ``time_ms`` (the default, minimised) or a metric."""

    name: str = TIME
    direction: Direction = Direction.MIN

    @classmethod
    def parse(cls, text: str) -> Objective:
        """``NAME[:max|:min]``; ``time`` minimises, any other metric maximises unless told."""
        name, _, way = text.strip().partition(":")
        name = TIME if name in ("time", TIME) else name
        if not is_identifier(name) or way not in ("", "max", "min"):
            raise SpecError(
                f"objective {text!r}: give a metric name, optionally with :max or :min "
                "(e.g. GFLOPs:max or time)"
            )
        if name == TIME and way == "max":  # nothing tunes for the slowest
            raise SpecError(
                f"objective {text!r} would find the slowest configuration; give time (minimised) "
                "or a metric to maximise (e.g. GFLOPs:max)"
            )
        default = Direction.MIN if name == TIME else Direction.MAX
        return cls(name, Direction(way) if way else default)

    @property
    def is_time(self) -> bool:
        return self.name == TIME and self.direction is Direction.MIN

    def __str__(self) -> str:
        return f"{self.name}:{self.direction.value}"

    def score(self, value: float | None) -> float | None:
        """What a strategy is told (lower is better, positive: strategies take logs). For a
        rate, 1/rate keeps the proportions of time; a value that is not positive and finite
        cannot be ranked and is told as a failure."""
        if value is None or not math.isfinite(value) or value <= 0:
            return None
        return value if self.direction is Direction.MIN else 1.0 / value

    def score_of(
        self, config: Mapping[str, Any], time_ms: float | None, scoring: ResultMetrics | None
    ) -> float | None:
        """The score of a result of ``config`` with median ``time_ms`` (lower is better; None:
        cannot be ranked): the one function the search, the best and the re-timing rank by."""
        if self.is_time:
            return time_ms
        if self.name == TIME:
            return self.score(time_ms)
        values = {} if scoring is None else scoring.values(config, time_ms)
        return self.score(values.get(self.name))

    def value(self, score: float) -> float:
        """The objective's own value (the time, or the metric) back from a ``score``."""
        return score if self.direction is Direction.MIN else 1.0 / score


@dataclass(frozen=True)
class Metrics:
    """A spec's work declaration and metrics, parsed; ``names`` are the metric names in the
    order they are shown (GBps and GFLOPs first when declared)."""

    kernel: str
    bytes: Expr | None
    flops: Expr | None
    named: tuple[tuple[str, Expr], ...]

    @classmethod
    def of(
        cls,
        kernel: str,
        bytes_: str | None,
        flops: str | None,
        named: Mapping[str, str] | tuple[tuple[str, str], ...],
    ) -> Metrics:
        what = f"kernel {kernel}"
        pairs = named.items() if isinstance(named, Mapping) else named
        parsed = []
        for name, text in pairs:
            if not is_identifier(name) or name in _RESERVED:
                raise SpecError(
                    f"{what}: metric name {name!r} must be an identifier other than "
                    f"{', '.join(sorted(_RESERVED))}"
                )
            parsed.append((name, Expr(text, f"{what} metric {name}")))
        return cls(
            kernel,
            None if bytes_ is None else Expr(bytes_, f"{what} bytes"),
            None if flops is None else Expr(flops, f"{what} flops"),
            tuple(parsed),
        )

    @classmethod
    def from_description(cls, spec: Mapping[str, Any]) -> Metrics:
        """From a stored ``KernelSpec.describe()`` (older ones declare nothing)."""
        return cls.of(
            spec.get("name", "?"), spec.get("bytes"), spec.get("flops"), spec.get("metrics", {})
        )

    @property
    def empty(self) -> bool:
        return self.bytes is None and self.flops is None and not self.named

    @property
    def names(self) -> tuple[str, ...]:
        auto = (GBPS,) * (self.bytes is not None) + (GFLOPS,) * (self.flops is not None)
        return auto + tuple(n for n, _ in self.named)

    def check(self, known: set[str]) -> None:
        """Raise SpecError naming the first expression that uses an unknown name."""
        what = f"kernel {self.kernel}"
        work = {k for k, e in (("bytes", self.bytes), ("flops", self.flops)) if e is not None}
        for label, expr in (("bytes", self.bytes), ("flops", self.flops)):
            if expr is not None and expr.names - known:
                bad = ", ".join(sorted(expr.names - known))
                raise SpecError(f"{what}: {label} {expr.text!r} uses unknown name(s) {bad}")
        seen = known | work | {TIME} | set(self.names[: len(self.names) - len(self.named)])
        for name, expr in self.named:
            if expr.names - seen:
                bad = ", ".join(sorted(expr.names - seen))
                raise SpecError(
                    f"{what}: metric {name} {expr.text!r} uses unknown name(s) {bad}; it may use "
                    "parameters, problem and derived values, time_ms, bytes, flops and earlier metrics"
                )
            seen.add(name)

    def work(self, env: Mapping[str, Any]) -> dict[str, float]:
        """The declared bytes and flops for one configuration (no time needed)."""
        out = {}
        for label, expr in (("bytes", self.bytes), ("flops", self.flops)):
            if expr is not None:
                out[label] = float(expr.value(env))
        return out

    def values(self, env: Mapping[str, Any], time_ms: float | None) -> dict[str, float | None]:
        """Every metric of one result; None for all where there is no time, and for one whose
        expression fails on these values (a division by zero is not worth stopping a table).
        Work that fails leaves out only what uses it: another device's results whose problem
        lacks a value of ``bytes`` still have the metrics of the configuration alone."""
        if time_ms is None or time_ms <= 0:
            return dict.fromkeys(self.names)
        scope: dict[str, Any] = {**env, TIME: time_ms}
        out: dict[str, float | None] = {}
        for label, expr, rate in (("bytes", self.bytes, GBPS), ("flops", self.flops, GFLOPS)):
            if expr is None:
                continue
            try:
                scope[label] = float(expr.value(env))
            except ExpressionError:
                out[rate] = None
                continue
            out[rate] = scope[rate] = scope[label] / time_ms / 1e6  # per ms -> G per s
        for name, expr in self.named:
            try:
                out[name] = scope[name] = float(expr.value(scope))
            except (ExpressionError, TypeError, ValueError):
                out[name] = scope[name] = None
        return out


def flop_precision(dtype: Any) -> str:
    """``fp64`` for a 64-bit float element type, else ``fp32`` (the ceiling to compare with)."""
    try:
        return (
            "fp64"
            if numpy_dtype(dtype).itemsize == 8 and numpy_dtype(dtype).kind == "f"
            else "fp32"
        )
    except (SpecError, TypeError, ValueError):
        return "fp32"


def roofline_fraction(
    gbps: float | None,
    gflops: float | None,
    bandwidth: float | None,
    peak: float | None,
) -> float | None:
    """The fraction of the attainable rate: min(peak, intensity x bandwidth) is what the
    roofline allows, so achieved/attainable = max(GB/s / bandwidth, GFLOP/s / peak)."""
    parts = []
    if gbps is not None and bandwidth:
        parts.append(gbps / bandwidth)
    if gflops is not None and peak:
        parts.append(gflops / peak)
    return max(parts) if parts else None


@dataclass(frozen=True)
class Ceilings:
    """A device's measured practical ceilings (``perfport roofline``), keyed by fingerprint."""

    device: str  # fingerprint
    copy_GBps: float
    read_GBps: float
    write_GBps: float
    fp32_GFLOPs: float
    fp64_GFLOPs: float | None  # None: the device has no float64
    measured: float = 0.0  # time.time() when measured
    # The copy bandwidth by bytes moved (read + written), ascending; () for ceilings stored
    # before the curve was measured: small copies pay a launch's fixed cost and a tail.
    copy_curve: tuple[tuple[float, float], ...] = ()

    def peak(self, precision: str) -> float | None:
        return self.fp64_GFLOPs if precision == "fp64" else self.fp32_GFLOPs

    def copy_at(self, moved: float) -> float | None:
        """The copy bandwidth of a copy moving ``moved`` bytes, interpolated log-log on the
        curve (flat beyond its ends: a copy outside the ladder is not extrapolated into
        fiction); None without a curve."""
        points = [(b, g) for b, g in self.copy_curve if b > 0 and g > 0]
        if not points or not moved > 0:
            return None
        if moved <= points[0][0]:
            return points[0][1]
        for (b0, g0), (b1, g1) in itertools.pairwise(points):
            if moved <= b1:
                t = math.log(moved / b0) / math.log(b1 / b0)
                return math.exp(math.log(g0) + t * math.log(g1 / g0))
        return points[-1][1]

    def fraction_same_bytes(
        self, values: Mapping[str, float | None], moved: float | None, precision: str
    ) -> float | None:
        """A result's roofline fraction with a copy of its own bytes as the memory ceiling
        (None without a curve or without declared bytes)."""
        bandwidth = None if moved is None else self.copy_at(moved)
        if bandwidth is None or values.get(GBPS) is None:
            return None
        return roofline_fraction(
            values.get(GBPS), values.get(GFLOPS), bandwidth, self.peak(precision)
        )

    def fraction(self, values: Mapping[str, float | None], precision: str) -> float | None:
        """A result's roofline fraction from its GBps/GFLOPs metrics (copy bandwidth is the
        memory ceiling: a kernel both reads and writes)."""
        return roofline_fraction(
            values.get(GBPS), values.get(GFLOPS), self.copy_GBps, self.peak(precision)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "copy_GBps": self.copy_GBps,
            "read_GBps": self.read_GBps,
            "write_GBps": self.write_GBps,
            "fp32_GFLOPs": self.fp32_GFLOPs,
            "fp64_GFLOPs": self.fp64_GFLOPs,
            "measured": self.measured,
            "copy_GBps_by_bytes": [[b, g] for b, g in self.copy_curve],
        }


ROOFLINE = "roofline"  # the key of a result's roofline fraction beside its metrics
# ... and of its fraction with a copy of the same bytes on this device as the memory ceiling
ROOFLINE_SAME_BYTES = "roofline_same_bytes"


@dataclass(frozen=True)
class ResultMetrics:
    """Everything needed to give stored or fresh results of one kernel and problem their
    metrics and roofline fraction, built from the kernel's description alone."""

    metrics: Metrics
    derived: tuple[tuple[str, Expr], ...]
    base: Mapping[str, Any]  # the problem, defaults included
    dtype: Expr | None  # element type of the first output array: picks fp32 or fp64
    ceilings: Ceilings | None = None

    @classmethod
    def of(
        cls,
        description: Mapping[str, Any],
        problem: Mapping[str, Any],
        ceilings: Ceilings | None = None,
    ) -> ResultMetrics:
        name = description.get("name", "?")
        arrays = [a for a in description.get("args", []) if a.get("kind") == "array"]
        out = [a for a in arrays if a.get("output")] or arrays
        return cls(
            Metrics.from_description(description),
            tuple(
                (k, Expr(v, f"kernel {name} derived {k}"))
                for k, v in description.get("derived", {}).items()
            ),
            {**description.get("problem", {}), **problem},
            Expr(out[0]["dtype"], f"kernel {name} dtype") if out else None,
            ceilings,
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The keys ``values`` returns: the metrics, then the roofline fraction if it can be
        known (work is declared)."""
        work = self.metrics.bytes is not None or self.metrics.flops is not None
        moved = self.metrics.bytes is not None
        return self.metrics.names + (ROOFLINE,) * work + (ROOFLINE_SAME_BYTES,) * moved

    def env(self, config: Mapping[str, Any], partial: bool = False) -> dict[str, Any]:
        """The names a configuration's expressions see; ``partial``: without the derived
        values that cannot be computed (their users then fail alone) instead of raising."""
        env = {**self.base, **config}
        for name, expr in self.derived:
            try:
                env[name] = expr.value(env)
            except ExpressionError:
                if not partial:
                    raise
        return env

    def precision(self, env: Mapping[str, Any]) -> str:
        if self.dtype is None:
            return "fp32"
        try:
            return flop_precision(self.dtype.value(env))
        except ExpressionError:
            return "fp32"

    def values(self, config: Mapping[str, Any], time_ms: float | None) -> dict[str, float | None]:
        """The metrics of one result, and its roofline fraction (None without ceilings)."""
        env = self.env(config, partial=True)
        out = self.metrics.values(env, time_ms)
        names, c = self.names, self.ceilings
        precision = "fp32" if c is None else self.precision(env)
        if ROOFLINE in names:
            out[ROOFLINE] = None if c is None else c.fraction(out, precision)
        if ROOFLINE_SAME_BYTES in names:
            out[ROOFLINE_SAME_BYTES] = None
            gbps = out.get(GBPS)
            if c is not None and c.copy_curve and gbps is not None and time_ms:
                moved = gbps * time_ms * 1e6  # the bytes, back from GB/s: not evaluated again
                out[ROOFLINE_SAME_BYTES] = c.fraction_same_bytes(out, moved, precision)
        return out
