"""Evaluation as in the paper's section 8: calibrate a model on each device's measurement
kernels only, predict its application kernels at every measured size, and report the
geometric-mean relative error per variant and device and whether the model ranks the
variants as the measurements do (wherever two differ by more than ``RANK_MARGIN``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perfport.model.calibrate import Calibration, calibrate, predict
from perfport.model.dataset import APPLICATION_PREFIX, KernelFeatures, Skipped, TimedKernel
from perfport.model.errors import ModelError
from perfport.model.model import Model, input_features

RANK_MARGIN = 0.10  # variants closer than this are a tie the ranking need not get right


@dataclass(frozen=True)
class Point:
    """One application kernel at one size: measured and predicted."""

    sizes: dict[str, Any]
    measured_ms: float
    predicted_ms: float
    # Each top-level model term's share of the prediction (the per-pattern breakdown).
    terms: tuple[tuple[str, float], ...] = ()

    @property
    def rel_error(self) -> float:
        return abs(self.predicted_ms - self.measured_ms) / self.measured_ms


@dataclass(frozen=True)
class VariantResult:
    variant: str
    device: str
    device_fingerprint: str
    points: tuple[Point, ...]

    @property
    def geomean_rel_error(self) -> float:
        return geomean_error(p.rel_error for p in self.points)

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "device": self.device,
            "device_fingerprint": self.device_fingerprint,
            "geomean_rel_error": self.geomean_rel_error,
            "n_sizes": len(self.points),
            "points": [
                {
                    "sizes": p.sizes,
                    "measured_ms": p.measured_ms,
                    "predicted_ms": p.predicted_ms,
                    "rel_error": p.rel_error,
                    "terms": dict(p.terms),
                }
                for p in self.points
            ],
        }


@dataclass(frozen=True)
class Unpredictable:
    """A variant on a device the calibration cannot predict (at ``sizes``), and why."""

    variant: str
    device: str
    device_fingerprint: str
    sizes: tuple[dict[str, Any], ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "device": self.device,
            "device_fingerprint": self.device_fingerprint,
            "n_sizes": len(self.sizes),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Evaluation:
    results: tuple[VariantResult, ...]
    calibrations: tuple[Calibration, ...]  # one per device, in the order of ``devices``
    devices: tuple[str, ...]
    ranked_pairs: int  # pairs of variants (same device and size) more than RANK_MARGIN apart
    misranked: tuple[str, ...]  # those the model orders the other way
    # Variants whose time depends on a parameter no measurement kernel informed.
    unpredictable: tuple[Unpredictable, ...] = ()
    # Kernels left out because loopy cannot count them (calibration and prediction alike).
    skipped: tuple[Skipped, ...] = ()

    @property
    def ranking_correct(self) -> bool | None:
        """None where no pair was more than RANK_MARGIN apart: nothing was ranked."""
        return not self.misranked if self.ranked_pairs else None

    @property
    def geomean_rel_error(self) -> float:
        return geomean_error(p.rel_error for r in self.results for p in r.points)

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [r.to_json() for r in self.results],
            "ranking_correct": self.ranking_correct,
            "ranked_pairs": self.ranked_pairs,
            "misranked": list(self.misranked),
            "geomean_rel_error": self.geomean_rel_error,
            "unpredictable": [u.to_json() for u in self.unpredictable],
            "skipped": [k.to_json() for k in self.skipped],
            "calibrations": [
                {
                    "device": c.device,
                    "parameters": dict(c.parameters),
                    "residual": c.residual,
                    "n_measurements": c.n_measurements,
                    "nonnegative": c.nonnegative,
                    "negative": list(c.negative),
                    "uninformed": dict(c.uninformed),
                    "bounded": c.bounded,
                    "at_bound": list(c.at_bound),
                    "unbounded_negative": list(c.unbounded_negative),
                }
                for c in self.calibrations
            ],
        }


def geomean_error(errors: Any) -> float:
    """Geometric mean of relative errors; an exact prediction counts as 1e-9 (log of 0)."""
    values = [max(float(e), 1e-9) for e in errors]
    if not values:
        return math.nan
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _by_device(runs: Sequence[TimedKernel]) -> dict[str, list[TimedKernel]]:
    groups: dict[str, list[TimedKernel]] = defaultdict(list)
    for r in runs:
        groups[r.device_fingerprint].append(r)
    return dict(groups)


def evaluate(
    model: Model, runs: Sequence[TimedKernel], features: KernelFeatures, nonnegative: bool = False
) -> Evaluation:
    """Calibrate on each device's ``mk-`` runs, predict its ``app-`` runs. A parameter no
    measurement kernel informs is pinned, and the variants whose time depends on it are
    reported as ``unpredictable`` (with the collection to run), never predicted. With
    ``nonnegative`` every cost is bounded below by 0 (``calibrate``'s bounded fit). Kernels
    loopy cannot count are left out and listed in ``skipped``."""
    model.check_features()
    runs, skipped = features.usable(runs)
    results: list[VariantResult] = []
    calibrations: list[Calibration] = []
    devices: list[str] = []
    unpredictable: list[Unpredictable] = []
    for fingerprint, group in _by_device(runs).items():
        train = [r for r in group if r.is_collection]
        test = [r for r in group if r.is_application]
        if not test:
            continue
        name = group[0].device
        if not train:
            raise ModelError(
                f"device {name} has application measurements but no measurement kernels; "
                "run 'perfport model collect' on it first"
            )
        data = features.measurements(model, train)
        calibration = calibrate(
            model, data, device=name, allow_uninformed=True, nonnegative=nonnegative
        )
        calibrations.append(calibration)
        devices.append(name)
        variants: dict[str, list[Point]] = defaultdict(list)
        refused: dict[str, tuple[list[dict[str, Any]], str]] = {}
        for r in sorted(test, key=lambda r: (r.kernel, sorted(r.problem.items()))):
            stats = features.stats(r.kernel, r.problem)  # a bad row is refused, not skipped
            try:
                # A feature of the user's that divides by 0 for it: this variant unpredictable
                prediction = predict(calibration, input_features(model, stats, device=r.device))
            except ModelError as exc:
                refused.setdefault(r.kernel, ([], str(exc)))[0].append(dict(r.problem))
                continue
            terms = tuple(prediction.terms.items())
            point = Point(dict(r.problem), r.time_ms, prediction.value * 1e3, terms)
            variants[r.kernel].append(point)
        results += [
            VariantResult(kernel.removeprefix(APPLICATION_PREFIX), name, fingerprint, tuple(pts))
            for kernel, pts in sorted(variants.items())
        ]
        unpredictable += [
            Unpredictable(k.removeprefix(APPLICATION_PREFIX), name, fingerprint, tuple(s), why)
            for k, (s, why) in sorted(refused.items())
        ]
    if not results:
        if skipped and not unpredictable:
            raise ModelError(f"no kernel left to evaluate: {skipped[0].line()}")
        raise ModelError(
            unpredictable[0].variant + ": " + unpredictable[0].reason
            if unpredictable
            else "no application measurements (kernels app-...) in the data; measure some with "
            "'perfport model measure matmul-prefetch --sizes n=256,512'"
        )
    pairs, misranked = ranking(results)
    return Evaluation(
        tuple(results),
        tuple(calibrations),
        tuple(devices),
        pairs,
        misranked,
        tuple(unpredictable),
        skipped,
    )


def ranking(results: Sequence[VariantResult]) -> tuple[int, tuple[str, ...]]:
    """Pairs of variants measured at the same size on one device, more than RANK_MARGIN
    apart, and those of them the predictions order the other way or predict equal (a tie
    ranks nothing), each as "A vs B on DEVICE at n=560"."""
    at: dict[tuple[str, str, str], list[tuple[str, Point]]] = defaultdict(list)
    for r in results:
        for p in r.points:
            sizes = ", ".join(f"{k}={v}" for k, v in sorted(p.sizes.items()))
            at[r.device_fingerprint, r.device, sizes].append((r.variant, p))
    pairs, wrong = 0, []
    for (_, device, sizes), entries in sorted(at.items()):
        for i, (va, pa) in enumerate(entries):
            for vb, pb in entries[i + 1 :]:
                low, high = sorted((pa.measured_ms, pb.measured_ms))
                if high <= low * (1 + RANK_MARGIN):
                    continue
                pairs += 1
                # Predicted equal, they are not ranked: misranked, whichever comes first.
                tie = pa.predicted_ms == pb.predicted_ms
                if tie or (pa.measured_ms < pb.measured_ms) != (pa.predicted_ms < pb.predicted_ms):
                    wrong.append(f"{va} vs {vb} on {device} at {sizes}")
    return pairs, tuple(wrong)
