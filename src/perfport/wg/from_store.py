"""A work-group-size dataset from the results database: every stored campaign of a stencil
(built in, or described: a user's own, rebuilt from what the store keeps of it) on every
device, with each scenario's features."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfport._core import DeviceInfo, KernelSpec, Outcome, PerfportError, Problem, SpecError
from perfport.features import FEATURE_NAMES, scenario_features
from perfport.kernels import BUILTINS, builtin
from perfport.kernels.stored_stencil import rebuilt_stencil, stored_body
from perfport.store import ScenarioResult, Store, complete_results
from perfport.wg.dataset import WgDataset
from perfport.wg.scenarios import STENCIL_KERNELS, SYNTHETIC


class NoCampaignsError(PerfportError):
    """A store without a complete campaign of a stencil (built in or described)."""


# The kernels of a store's complete campaigns, with their code and declared parameters.
_CAMPAIGN_KERNELS = (
    "SELECT DISTINCT k.id, k.name, k.source_hash, k.source, k.spec FROM campaigns g "
    "JOIN kernels k ON k.id = g.kernel_id WHERE g.status = 'complete' ORDER BY k.id"
)


@dataclass(frozen=True)
class LeftOut:
    """A stencil whose complete campaigns a dataset leaves out, and why (one line)."""

    kernel: str
    why: str


@dataclass(frozen=True)
class OwnStencils:
    """The stencils of a store's complete campaigns that are not built in (described ones):
    those rebuilt from their stored code and description, by (name, source hash), and those
    that could not be."""

    rebuilt: Mapping[tuple[str, str], KernelSpec] = field(default_factory=dict)
    left_out: tuple[LeftOut, ...] = ()


def own_stencils(store: Store) -> OwnStencils:
    """The stencils in ``store`` that are not built in: kernels tuning a work-group wc x wr,
    or whose code is the stencil template. Each is rebuilt (``rebuilt_stencil``) to compute
    its features as a built-in's; one whose stored code or description is missing, damaged or
    another version's is left out, with why."""
    built_in = set(STENCIL_KERNELS) & set(BUILTINS)
    rebuilt: dict[tuple[str, str], KernelSpec] = {}
    left_out: list[LeftOut] = []
    for _, name, source_hash, source, spec in store.query(_CAMPAIGN_KERNELS):
        description = json.loads(spec)  # the store refuses a spec that is not a JSON object
        if name in built_in or (
            _params(description) != {"wc", "wr"} and stored_body(source) is None
        ):
            continue
        try:
            rebuilt[(str(name), str(source_hash))] = rebuilt_stencil(
                name, source, source_hash, description
            )
        except SpecError as exc:
            left_out.append(LeftOut(str(name), f"cannot rebuild it from the store: {exc}"))
    return OwnStencils(rebuilt, tuple(left_out))


@dataclass(frozen=True)
class _Labels:
    """What the leave-one-out partitions and the launcher's limit need of a scenario."""

    device: str
    kernel: str
    dataset: str
    synthetic: bool
    max_wg: int


def _params(description: Mapping[str, Any]) -> set[Any]:
    """The parameter names a stored description declares (none where it is damaged)."""
    params = description.get("params")
    return (
        {p.get("name") for p in params if isinstance(p, dict)}
        if isinstance(params, list)
        else set()
    )


def dataset_from_store(store: Store, own: OwnStencils | None = None) -> WgDataset:
    """One scenario per (device, stencil kernel, problem) of a complete campaign (a partial one
    would make unmeasured sizes look refused); a size's time is its best ok median, NaN where it
    was pruned, refused or failed. The built-in stencils come first, then ``own`` (by default
    ``own_stencils(store)``): a described stencil's scenarios, labelled with its name."""
    own = own_stencils(store) if own is None else own
    names = sorted(set(STENCIL_KERNELS) & set(BUILTINS))
    groups: dict[tuple[DeviceInfo, str, Problem, str], dict[tuple[int, int], float]] = {}
    sources: dict[str, str] = {}
    for row in complete_results(store, names):
        sources[row.kernel] = row.source_hash
        _add(groups, (row.device, row.kernel, row.problem, ""), row)
    stale = [k for k, h in sources.items() if builtin(k).source_hash != h]
    if stale:
        raise PerfportError(
            f"stored results of {', '.join(stale)} come from other versions of their code"
        )
    for row in complete_results(store, sorted({name for name, _ in own.rebuilt})):
        if (row.kernel, row.source_hash) in own.rebuilt:  # not a version left out
            _add(groups, (row.device, row.kernel, row.problem, row.source_hash), row)
    if not groups:
        raise NoCampaignsError("no stored stencil campaigns; run 'perfport wg collect' first")
    sizes = sorted({s for times in groups.values() for s in times})
    column = {s: i for i, s in enumerate(sizes)}
    runtimes = np.full((len(groups), len(sizes)), np.nan)
    labels: list[_Labels] = []
    features = []
    for i, ((device, kernel, problem, source_hash), times) in enumerate(groups.items()):
        for size, t in times.items():
            runtimes[i, column[size]] = t
        spec = own.rebuilt[(kernel, source_hash)] if source_hash else builtin(kernel)
        features.append(scenario_features(spec, problem, device).as_array())
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


def _add(
    groups: dict[tuple[DeviceInfo, str, Problem, str], dict[tuple[int, int], float]],
    key: tuple[DeviceInfo, str, Problem, str],
    row: ScenarioResult,
) -> None:
    """One stored result into its scenario's times (a built-in's key has no source hash)."""
    times = groups.setdefault(key, {})
    size = (int(row.config["wc"]), int(row.config["wr"]))
    if row.outcome is Outcome.OK and row.median_ms is not None:
        times[size] = min(row.median_ms, times.get(size, np.inf))
    else:
        times.setdefault(size, np.nan)


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
