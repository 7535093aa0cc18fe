"""Is a scenario unlike anything its device has measured? A conformal-style novelty test.

A predictor that learnt a device's best sizes from some kernels can trust itself for a kernel
like those, and less for one unlike any of them (the synthetic stencils against the real-world
kernels, whose instruction mix none of them has). ``DeviceNovelty`` measures that per device:
the distance from a scenario to the nearest training scenario of its device, in the
standardised kernel and data features, against what a new kernel looks like from inside the
training data: for every training scenario, the distance to the nearest one of the same device
with another kernel (other kernel features, or where the data has none, another kernel label).
The p-value is the share of those calibration distances at least as large, the test point
counted. It is calibrated by leaving kernels out, not a distribution-free guarantee: one
kernel's scenarios are not exchangeable draws. A scenario is novel where the p-value is below
``alpha``. With n calibration distances the smallest p-value is 1 / (n + 1), so a device
needs at least 1 / alpha - 1 of them (19 at 0.05) before any scenario can be novel. A device
training has not seen, or measured with one kernel only (no calibration), is novel.

With ``cpu_class=True`` every CPU is one device for the test: a CPU scenario is compared with
the training scenarios of every CPU set-up. A CPU runs a work-group as a loop over its
work-items in one thread, so which kernels it has seen matters more than its exact core count
or PoCL's emulated local memory; without it, a CPU set-up training has not seen (another core
count, another PoCL) is novel for every kernel. GPUs keep the exact key: the backends of one
GPU report different limits and have different best sizes.

numpy only: fitting keeps each device's standardised points and sorted calibration distances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport.wg.dataset import WgDataset

CPU_CLASS = b"device-class:cpu"  # the key of every CPU under ``cpu_class``
CPU_FEATURE = "device_is_cpu"


@dataclass(frozen=True)
class NoveltyExplanation:
    """Why a scenario is novel or not: its p-value against ``alpha``, the training scenarios
    of its device (matched by the exact device features, so one GPU through two backends that
    report different limits is two devices; under ``cpu_class`` every CPU is one, ``scope``
    "cpu"), the calibration distances, and the distance to the nearest training scenario (None
    without any)."""

    pvalue: float
    alpha: float
    device_scenarios: int
    calibration: int
    distance: float | None
    scope: str = "device"  # "device": the exact device features; "cpu": every CPU set-up

    @property
    def novel(self) -> bool:
        return self.pvalue < self.alpha

    def to_json(self) -> dict[str, Any]:
        return {"pvalue": self.pvalue, "alpha": self.alpha,
                "device_scenarios": self.device_scenarios, "calibration": self.calibration,
                "distance": self.distance, "scope": self.scope}  # fmt: skip


class DeviceNovelty:
    """Conformal-style test of whether a scenario is new to its device's training scenarios."""

    # Models saved before ``cpu_class`` existed unpickle without it: the exact key.
    cpu_class: bool = False
    cpu_column_: int | None = None

    def __init__(self, alpha: float = 0.05, cpu_class: bool = False) -> None:
        if not 0 < alpha < 1:
            raise ValueError("0 < alpha < 1")
        self.alpha, self.cpu_class = alpha, cpu_class

    def key(self, device: np.ndarray) -> bytes:
        """The group a scenario's device features ``device`` (float64) are tested in."""
        if self.cpu_class and self.cpu_column_ is not None and device[self.cpu_column_] == 1:
            return CPU_CLASS
        return device.tobytes()

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_last", "_recent")}

    def fit(self, data: WgDataset) -> DeviceNovelty:
        x = np.asarray(data.features, dtype=np.float64)
        device = np.array([n.startswith("device_") for n in data.feature_names])
        kernel = np.array([n.startswith("kernel_") for n in data.feature_names])
        self.device_columns_, self.columns_ = np.flatnonzero(device), np.flatnonzero(~device)
        names = [data.feature_names[i] for i in self.device_columns_]
        self.cpu_column_ = names.index(CPU_FEATURE) if CPU_FEATURE in names else None
        self.mean_ = x[:, self.columns_].mean(0)
        scale = x[:, self.columns_].std(0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        points = (x[:, self.columns_] - self.mean_) / self.scale_
        # A kernel is its features (each synthetic stencil its own), or where the data has
        # none (Cummins' pilot), its label.
        named = x[:, kernel] if kernel.any() else data.kernel[:, None]
        kernels = np.unique(named, axis=0, return_inverse=True)[1].ravel()
        # Python bytes, not a numpy array of them, which would strip trailing zero bytes.
        keys = [self.key(row) for row in x[:, self.device_columns_]]
        self.devices_: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
        for key in set(keys):
            rows = np.array([k == key for k in keys])
            p, k = points[rows], kernels[rows]
            self.devices_[key] = (p, np.sort(_nearest_other_kernel(p, k)))
        self.__dict__.pop("_last", None)
        self.__dict__.pop("_recent", None)
        return self

    def pvalue(self, x: np.ndarray) -> float:
        """The share (with the test point counted) of calibration distances at least as
        large as the scenario's distance to its device's training scenarios."""
        return self.explain(x).pvalue

    def explain(self, x: np.ndarray) -> NoveltyExplanation:
        """The test's working for one scenario: which training scenarios it was compared with
        (those whose device features equal the scenario's, every one of them, or under
        ``cpu_class`` every CPU's for a CPU), how far the nearest is, and the p-value."""
        x = np.asarray(x, dtype=np.float64)
        # A prediction asks twice (the fallback's test, then the answer's explanation): the
        # last scenario's working is kept, one entry, replaced whole (safe across threads).
        point = x.tobytes()
        last = self.__dict__.get("_last")
        if last is not None and last[0] == point:
            return last[1]
        recent = self.__dict__.get("_recent")  # the last ``explain_many``'s rows
        if recent is not None and point in recent:
            return recent[point]
        explained = self._explain(x)
        self._last = (point, explained)
        return explained

    def _explain(self, x: np.ndarray) -> NoveltyExplanation:
        key = self.key(x[self.device_columns_])
        scope = "cpu" if key == CPU_CLASS else "device"
        found = self.devices_.get(key)
        if found is None or not len(found[1]):
            scenarios = 0 if found is None else len(found[0])
            return NoveltyExplanation(0.0, self.alpha, scenarios, 0, None, scope)
        points, calibration = found
        point = (x[self.columns_] - self.mean_) / self.scale_
        distance = float(np.sqrt(((points - point) ** 2).sum(1)).min())
        larger = len(calibration) - np.searchsorted(calibration, distance, side="left")
        pvalue = float((1 + larger) / (1 + len(calibration)))
        return NoveltyExplanation(
            pvalue, self.alpha, len(points), len(calibration), distance, scope
        )

    def explain_many(self, x: np.ndarray) -> list[NoveltyExplanation]:
        """``explain`` of each row of ``x``; the rows' workings are kept (one dict, replaced
        whole), so a batched prediction's later ``explain`` of a row does not work it again."""
        x = np.asarray(x, dtype=np.float64)
        found = {row.tobytes(): self._explain(row) for row in x}
        self._recent = found
        return [found[row.tobytes()] for row in x]

    def novel(self, x: np.ndarray) -> bool:
        return self.pvalue(x) < self.alpha


def _nearest_other_kernel(points: np.ndarray, kernels: np.ndarray, chunk: int = 512) -> np.ndarray:
    """Each point's distance to the nearest point of another kernel (none: left out), a chunk
    of rows at a time so that memory stays at chunk x n."""
    squares = (points**2).sum(1)
    nearest = []
    for start in range(0, len(points), chunk):
        block = points[start : start + chunk]
        d2 = squares[start : start + chunk, None] + squares[None] - 2.0 * block @ points.T
        d2[kernels[start : start + chunk, None] == kernels[None]] = np.inf
        nearest.append(d2.min(1))
    out = np.sqrt(np.maximum(np.concatenate(nearest), 0.0))
    return out[np.isfinite(out)]
