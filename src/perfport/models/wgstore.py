"""A work-group-size dataset from the results database: every stored campaign of a built-in
stencil on every device, with each scenario's features."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from perfport._core import DeviceInfo, PerfportError
from perfport.features import FEATURE_NAMES, scenario_features
from perfport.kernels import BUILTINS, builtin
from perfport.models.wgdata import WgDataset
from perfport.store import Store

_STENCILS = {"stencil", "synthetic", "gaussian", "gol", "heat", "nms", "sobel", "threshold"}
_GROUPS = """
SELECT d.info, k.name, k.source_hash, p.key, c.key, r.outcome, r.median_ms
FROM results r JOIN campaigns g ON g.id = r.campaign_id JOIN devices d ON d.id = g.device_id
JOIN kernels k ON k.id = g.kernel_id JOIN problems p ON p.id = g.problem_id JOIN configs c ON c.id = r.config_id
WHERE k.name IN ({names}) AND g.status = 'complete'
"""


def dataset_from_store(store: Store) -> WgDataset:
    """One scenario per (device, stencil kernel, problem) of a complete campaign (a partial one
    would make unmeasured sizes look refused); a size's time is its best ok median, NaN where it
    was pruned, refused or failed."""
    names = sorted(_STENCILS & set(BUILTINS))
    rows = store.query(_GROUPS.format(names=", ".join("?" * len(names))), tuple(names))
    groups: dict[tuple[str, str, str], dict[tuple[int, int], float]] = {}
    sources: dict[str, str] = {}
    for info, kernel, source_hash, problem, config, outcome, median in rows:
        times = groups.setdefault((info, kernel, problem), {})
        sources[kernel] = source_hash
        wg = json.loads(config)
        size = (int(wg["wc"]), int(wg["wr"]))
        if outcome == "ok" and median is not None:
            times[size] = min(median, times.get(size, np.inf))
        else:
            times.setdefault(size, np.nan)
    stale = [k for k, h in sources.items() if builtin(k).source_hash != h]
    if stale:
        raise PerfportError(
            f"stored results of {', '.join(stale)} come from other versions of their code"
        )
    if not groups:
        raise PerfportError("no stored stencil campaigns; run 'perfport wg collect' first")
    sizes = sorted({s for times in groups.values() for s in times})
    column = {s: i for i, s in enumerate(sizes)}
    runtimes = np.full((len(groups), len(sizes)), np.nan)
    meta: list[dict[str, Any]] = []
    features = []
    for row, ((info, kernel, problem_key), times) in enumerate(groups.items()):
        for size, t in times.items():
            runtimes[row, column[size]] = t
        device = DeviceInfo.from_json(json.loads(info))
        problem = json.loads(problem_key)
        features.append(scenario_features(builtin(kernel), problem, device).as_array())
        meta.append({"device": f"{device.name} ({device.backend.value})", "kernel": _kernel_label(kernel, problem),
                     "dataset": f"{problem.get('width')}x{problem.get('height')}:{problem.get('dtype')}",
                     "synthetic": kernel == "synthetic", "max_wg": device.max_work_group_size})  # fmt: skip
    return WgDataset(
        sizes=np.array(sizes),
        runtimes=runtimes,
        max_wg=np.array([m["max_wg"] for m in meta]),
        features=np.array(features),
        feature_names=FEATURE_NAMES,
        device=np.array([m["device"] for m in meta]),
        kernel=np.array([m["kernel"] for m in meta]),
        dataset=np.array([m["dataset"] for m in meta]),
        synthetic=np.array([m["synthetic"] for m in meta]),
    )


def _kernel_label(kernel: str, problem: dict[str, Any]) -> str:
    """The kernel family a scenario belongs to, for leave-one-kernel-out: each real-world
    kernel (gaussian per radius), and the synthetic template as two families, simple and
    complex. Synthetic scenarios with their random borders are nearly all distinct kernels;
    holding out a whole family is the stricter test, and keeps the folds few."""
    if kernel == "synthetic":
        return "synthetic-complex" if problem.get("complex") else "synthetic"
    return f"{kernel}[r={problem['radius']}]" if "radius" in problem else kernel
