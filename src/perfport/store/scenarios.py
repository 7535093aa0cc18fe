"""Questions a work-group-size model asks of the results database: every result of the
complete campaigns of some kernels (what a dataset is built from), and the launches a
device refused for one kernel (what a prediction must not propose again)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from perfport._core import Config, DeviceInfo, Outcome, Problem
from perfport.store.store import Store

_COMPLETE_RESULTS = """
SELECT d.info, k.name, k.source_hash, p.key, c.key, r.outcome, r.median_ms, g.id
FROM results r JOIN campaigns g ON g.id = r.campaign_id JOIN devices d ON d.id = g.device_id
JOIN kernels k ON k.id = g.kernel_id JOIN problems p ON p.id = g.problem_id JOIN configs c ON c.id = r.config_id
WHERE k.name IN ({names}) AND g.status = 'complete'
"""
_REFUSED = (
    "SELECT c.key FROM results r JOIN campaigns g ON g.id = r.campaign_id "
    "JOIN devices d ON d.id = g.device_id JOIN kernels k ON k.id = g.kernel_id "
    "JOIN configs c ON c.id = r.config_id WHERE d.fingerprint = ? AND k.source_hash = ? "
    "AND r.outcome = ? AND g.strategy != ?"
)
# The strategy of the campaigns in which 'perfport serve' stores the refusals its clients report.
REPORTED = "reported"


@dataclass(frozen=True)
class ScenarioResult:
    """One stored result of a complete campaign."""

    device: DeviceInfo
    kernel: str
    source_hash: str
    problem: Problem
    config: Config
    outcome: Outcome
    median_ms: float | None
    campaign_id: int = 0  # its campaign's, whose description may be its own (schema 11)


def complete_results(store: Store, kernels: Sequence[str]) -> list[ScenarioResult]:
    """Every result of every complete campaign of the kernels named ``kernels`` (a partial
    campaign would make its unmeasured configurations look refused), in the store's order."""
    if not kernels:
        return []
    sql = _COMPLETE_RESULTS.format(names=", ".join("?" * len(kernels)))
    devices: dict[str, DeviceInfo] = {}  # parsed once per device: thousands of rows share one
    problems: dict[str, Problem] = {}
    out = []
    for info, kernel, source_hash, problem, config, outcome, median, campaign in store.query(
        sql, tuple(kernels)
    ):
        if info not in devices:
            devices[info] = DeviceInfo.from_json(json.loads(info))
        if problem not in problems:
            problems[problem] = Problem.of(json.loads(problem))
        out.append(ScenarioResult(devices[info], kernel, source_hash, problems[problem],
                                  Config.of(json.loads(config)), Outcome(outcome), median,
                                  campaign))  # fmt: skip
    return out


def refused_configs(
    store: Store, device_fingerprint: str, source_hash: str, *, reported: bool = True
) -> list[Config]:
    """The configurations that the device with ``device_fingerprint`` refused to launch for
    the kernel with ``source_hash``, in any campaign; without ``reported``, not those a
    daemon's clients reported (which older daemons stored under a local device's
    fingerprint when the client described a device alike)."""
    skipped = "" if reported else REPORTED
    rows = store.query(
        _REFUSED, (device_fingerprint, source_hash, Outcome.LAUNCH_REFUSED.value, skipped)
    )
    return [Config.of(json.loads(key)) for (key,) in rows]
