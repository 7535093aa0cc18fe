"""What crashed or hung before: configurations that killed or outlasted the worker in earlier
campaigns of the same kernel source, device and problem (issue 26 item 6), so that a new
campaign need not kill its worker on them again."""

from __future__ import annotations

import json
from typing import Any

from perfport._core import Config, KernelSpec, Measurement, Outcome
from perfport.store.store import Campaign, Store

REMEMBERED = (Outcome.CRASHED, Outcome.TIMEOUT)
REUSED_PREFIX = "not measured again: "
_PAST = {Outcome.CRASHED: "crashed", Outcome.TIMEOUT: "timed out"}


def campaign_settings(settings: dict[str, Any], spec: KernelSpec) -> dict[str, Any]:
    """What a campaign stores as its settings: ``settings`` and the spec's launch identity,
    which decides whether its crashes may be reused."""
    return {**settings, "launch": spec.launch_hash}


def earlier_failures(
    store: Store, campaign: Campaign, timeout_s: float, launch: str
) -> dict[Config, Measurement]:
    """Each configuration that crashed or timed out in another campaign of ``campaign``'s
    kernel (by source hash), device and problem, launched the same way (``launch``: the spec's
    ``launch_hash``; a crash from an argument's wrong dtype is not the fixed spec's), as the
    result to store in its place: the same outcome, with a message naming the campaign it comes
    from. A timeout counts only where that campaign's time limit was at least ``timeout_s`` (a
    longer limit may let it finish). The earliest such result of each configuration is the one
    reused."""
    rows = store.query(
        "SELECT c.key AS config, r.outcome, r.message, g.key AS campaign, g.settings "
        "FROM results r JOIN campaigns g ON g.id = r.campaign_id "
        "JOIN configs c ON c.id = r.config_id "
        # Every kernel row of the source (a renamed spec's too): the launch hash decides.
        "WHERE g.kernel_id IN (SELECT id FROM kernels WHERE source_hash = "
        "(SELECT source_hash FROM kernels WHERE id = ?)) "
        "AND g.device_id = ? AND g.problem_id = ? AND g.id != ? "
        "AND r.outcome IN (?, ?) ORDER BY r.id",
        (campaign.kernel_id, campaign.device_id, campaign.problem_id, campaign.id,
         *(o.value for o in REMEMBERED)),
    )  # fmt: skip
    out: dict[Config, Measurement] = {}
    for row in rows:
        config = Config.of(json.loads(row["config"]))
        outcome = Outcome(row["outcome"])
        stored = _settings(row["settings"])
        if (
            config in out
            or stored.get("launch") != launch
            or (outcome is Outcome.TIMEOUT and _limit(stored) < timeout_s)
        ):
            continue
        message = " ".join(str(row["message"]).split())[:300]
        out[config] = Measurement(
            config,
            outcome,
            f"{REUSED_PREFIX}it {_PAST[outcome]} in campaign {row['campaign']} "
            f"({message}); tune with --retry-failed to measure it",
        )
    return out


def _settings(text: str) -> dict[str, Any]:
    try:
        stored = json.loads(text)
    except ValueError:
        return {}
    return stored if isinstance(stored, dict) else {}


def _limit(settings: dict[str, Any]) -> float:
    """The time limit a campaign ran under (0 when unknown: its timeouts are not reused)."""
    value = settings.get("timeout_s", 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def kept_failures(n: int) -> tuple[str, ...]:
    """The warning for a campaign resumed with --retry-failed that holds ``n`` crashed or
    timed-out results of its own: those stay (a campaign holds one result per configuration,
    kept as stored); only other campaigns' are measured again."""
    if not n:
        return ()
    return (
        f"--retry-failed measures again what crashed or timed out in other campaigns; this "
        f"campaign's own {n} crashed or timed-out "
        f"{'results stay' if n != 1 else 'result stays'} as stored (a "
        "campaign measures each configuration once): to measure them again, tune a new "
        "campaign with --retry-failed --campaign NEW_NAME",
    )
