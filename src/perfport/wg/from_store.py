"""A work-group-size dataset from the results database: every stored campaign of a built-in
stencil on every device, with each scenario's features."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfport._core import DeviceInfo, Outcome, PerfportError, Problem
from perfport.features import FEATURE_NAMES, scenario_features
from perfport.kernels import BUILTINS, builtin
from perfport.store import Store, complete_results
from perfport.wg.dataset import WgDataset
from perfport.wg.scenarios import STENCIL_KERNELS, SYNTHETIC


class NoCampaignsError(PerfportError):
    """A store without a complete campaign of a built-in stencil."""


# The kernels of a store's complete campaigns, with their declared parameters.
_CAMPAIGN_KERNELS = (
    "SELECT DISTINCT k.name, k.spec FROM campaigns g JOIN kernels k ON k.id = g.kernel_id "
    "WHERE g.status = 'complete'"
)


def other_stencils(store: Store) -> list[str]:
    """The stencils with complete campaigns in ``store`` that ``dataset_from_store`` leaves
    out: kernels tuning a work-group wc x wr that are not built in (described stencils, say).
    A dataset holds the built-ins only: their features come from their names alone."""
    built_in = set(STENCIL_KERNELS) & set(BUILTINS)
    names = set()
    for name, spec in store.query(_CAMPAIGN_KERNELS):
        params = {p.get("name") for p in json.loads(spec).get("params", [])}
        if name not in built_in and params == {"wc", "wr"}:
            names.add(str(name))
    return sorted(names)


@dataclass(frozen=True)
class _Labels:
    """What the leave-one-out partitions and the launcher's limit need of a scenario."""

    device: str
    kernel: str
    dataset: str
    synthetic: bool
    max_wg: int


def dataset_from_store(store: Store) -> WgDataset:
    """One scenario per (device, stencil kernel, problem) of a complete campaign (a partial one
    would make unmeasured sizes look refused); a size's time is its best ok median, NaN where it
    was pruned, refused or failed."""
    names = sorted(set(STENCIL_KERNELS) & set(BUILTINS))
    groups: dict[tuple[DeviceInfo, str, Problem], dict[tuple[int, int], float]] = {}
    sources: dict[str, str] = {}
    for row in complete_results(store, names):
        times = groups.setdefault((row.device, row.kernel, row.problem), {})
        sources[row.kernel] = row.source_hash
        size = (int(row.config["wc"]), int(row.config["wr"]))
        if row.outcome is Outcome.OK and row.median_ms is not None:
            times[size] = min(row.median_ms, times.get(size, np.inf))
        else:
            times.setdefault(size, np.nan)
    stale = [k for k, h in sources.items() if builtin(k).source_hash != h]
    if stale:
        raise PerfportError(
            f"stored results of {', '.join(stale)} come from other versions of their code"
        )
    if not groups:
        raise NoCampaignsError("no stored stencil campaigns; run 'perfport wg collect' first")
    sizes = sorted({s for times in groups.values() for s in times})
    column = {s: i for i, s in enumerate(sizes)}
    runtimes = np.full((len(groups), len(sizes)), np.nan)
    labels: list[_Labels] = []
    features = []
    for i, ((device, kernel, problem), times) in enumerate(groups.items()):
        for size, t in times.items():
            runtimes[i, column[size]] = t
        features.append(scenario_features(builtin(kernel), problem, device).as_array())
        labels.append(_labels(device, kernel, problem))
    return WgDataset(
        sizes=np.array(sizes),
        runtimes=runtimes,
        max_wg=np.array([m.max_wg for m in labels]),
        features=np.array(features),
        feature_names=FEATURE_NAMES,
        device=np.array([m.device for m in labels]),
        kernel=np.array([m.kernel for m in labels]),
        dataset=np.array([m.dataset for m in labels]),
        synthetic=np.array([m.synthetic for m in labels]),
    )


def _labels(device: DeviceInfo, kernel: str, problem: Mapping[str, Any]) -> _Labels:
    return _Labels(
        device=f"{device.name} ({device.backend.value})",
        kernel=_kernel_label(kernel, problem),
        dataset=f"{problem.get('width')}x{problem.get('height')}:{problem.get('dtype')}",
        synthetic=kernel == SYNTHETIC,
        max_wg=device.max_work_group_size,
    )


def _kernel_label(kernel: str, problem: Mapping[str, Any]) -> str:
    """The kernel family a scenario belongs to, for leave-one-kernel-out: each real-world
    kernel (gaussian per radius), and the synthetic template as two families, simple and
    complex. Synthetic scenarios with their random borders are nearly all distinct kernels;
    holding out a whole family is the stricter test, and keeps the folds few."""
    if kernel == SYNTHETIC:
        return "synthetic-complex" if problem.get("complex") else "synthetic"
    return f"{kernel}[r={problem['radius']}]" if "radius" in problem else kernel
