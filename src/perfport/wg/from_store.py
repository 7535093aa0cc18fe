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
from perfport.store.described import CAMPAIGN_SPEC
from perfport.wg.dataset import WgDataset
from perfport.wg.scenarios import STENCIL_KERNELS, SYNTHETIC


class NoCampaignsError(PerfportError):
    """A store without a complete campaign of a stencil (built in or described)."""


# The complete campaigns, with their kernel's code and the description each ran with (its own,
# else, stored before schema 11, its kernel's).
_CAMPAIGN_KERNELS = (
    f"SELECT g.id, k.name, k.source_hash, k.source, {CAMPAIGN_SPEC} FROM campaigns g "
    "JOIN kernels k ON k.id = g.kernel_id WHERE g.status = 'complete' ORDER BY k.id, g.id"
)


@dataclass(frozen=True)
class LeftOut:
    """A stencil whose complete campaigns a dataset leaves out, and why (one line)."""

    kernel: str
    why: str


@dataclass(frozen=True)
class OwnStencils:
    """The stencils of a store's complete campaigns that are not built in (described ones):
    those rebuilt from their stored code and the description each campaign ran with, by
    campaign id (a spec edited under its name, other borders say, is the same kernel row and
    source, yet another stencil), and those that could not be."""

    rebuilt: Mapping[int, KernelSpec] = field(default_factory=dict)
    left_out: tuple[LeftOut, ...] = ()

    @property
    def names(self) -> list[str]:
        """The names of the stencils rebuilt."""
        return sorted({spec.name for spec in self.rebuilt.values()})


def own_stencils(store: Store) -> OwnStencils:
    """The stencils in ``store`` that are not built in: kernels tuning a work-group wc x wr,
    or whose code is the stencil template. Each campaign's is rebuilt (``rebuilt_stencil``)
    from its own description to compute its features as a built-in's; one whose stored code
    or description is missing, damaged or another version's is left out, with why."""
    built_in = set(STENCIL_KERNELS) & set(BUILTINS)
    rebuilt: dict[int, KernelSpec] = {}
    left_out: dict[LeftOut, None] = {}
    made: dict[tuple[str, str, str], KernelSpec | LeftOut | None] = {}  # once per description
    for campaign, name, source_hash, source, spec in store.query(_CAMPAIGN_KERNELS):
        if name in built_in:
            continue
        key = (str(name), str(source_hash), str(spec))
        if key not in made:
            made[key] = _rebuilt(*key, str(source))
        stencil = made[key]
        if isinstance(stencil, KernelSpec):
            rebuilt[int(campaign)] = stencil
        elif stencil is not None:
            left_out[stencil] = None
    return OwnStencils(rebuilt, tuple(left_out))


def _rebuilt(name: str, source_hash: str, spec: str, source: str) -> KernelSpec | LeftOut | None:
    """The stencil stored with ``source`` and the description ``spec``, or why it could not be
    rebuilt; None where it is not a stencil."""
    description = json.loads(spec)  # the store refuses a spec that is not a JSON object
    if _params(description) != {"wc", "wr"} and stored_body(source) is None:
        return None
    try:
        return rebuilt_stencil(name, source, source_hash, description)
    except SpecError as exc:
        return LeftOut(name, f"cannot rebuild it from the store: {exc}")


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
    ``own_stencils(store)``): a described stencil's scenarios, labelled with its name, one per
    stencil its campaigns' descriptions give (borders are defines, not in the source)."""
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
    # A described stencil by what it is (its description as rebuilt), not by its kernel row.
    identity = {id(s): json.dumps(s.describe(), sort_keys=True) for s in own.rebuilt.values()}
    stencils = {identity[id(s)]: s for s in own.rebuilt.values()}
    for row in complete_results(store, own.names):
        spec = own.rebuilt.get(row.campaign_id)
        if spec is not None:  # not a description left out
            _add(groups, (row.device, row.kernel, row.problem, identity[id(spec)]), row)
    if not groups:
        raise NoCampaignsError("no stored stencil campaigns; run 'perfport wg collect' first")
    sizes = sorted({s for times in groups.values() for s in times})
    column = {s: i for i, s in enumerate(sizes)}
    runtimes = np.full((len(groups), len(sizes)), np.nan)
    labels: list[_Labels] = []
    features = []
    for i, ((device, kernel, problem, stencil), times) in enumerate(groups.items()):
        for size, t in times.items():
            runtimes[i, column[size]] = t
        spec = stencils[stencil] if stencil else builtin(kernel)
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
    """One stored result into its scenario's times (a built-in's key has no stencil)."""
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
