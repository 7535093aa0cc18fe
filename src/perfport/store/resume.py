"""Which settings of a campaign a resumed session must share: those its results were
measured with. A session with another strategy, seed, verification or timing under the same
``--campaign`` key would mix two kinds of results in one campaign."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What a campaign's results were measured with (its strategy and stored settings): a session
# with other values would mix its results with the others. Budgets and timeouts are limits and
# may change; absent keys (campaigns stored before a setting existed) are not compared.
_SAME_ON_RESUME = ("strategy", "seed", "verify", "timing", "launch")


def _setting(name: str, value: Any) -> str:
    """A campaign setting as the tune flag that gives it."""
    if name == "verify":
        return "verification" if value else "--no-verify"
    if name == "timing" and isinstance(value, dict):
        low, high = value.get("min_repeats"), value.get("max_repeats")
        return f"--repeats {low}" if low == high else "adaptive repeats (no --repeats)"
    if name == "launch":
        return f"kernel launch {str(value)[:12]}"
    return f"--{name} {value}"


def other_settings(was: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    """ "" when ``now`` may resume a campaign stored with ``was`` (its strategy and settings),
    else what differs: "--seed 0, this run has --seed 5"."""
    differ = [
        name
        for name in _SAME_ON_RESUME
        if name in was and now.get(name) is not None and was[name] != now[name]
    ]
    if not differ:
        return ""
    then = ", ".join(_setting(n, was[n]) for n in differ)
    return f"{then}, this run has {', '.join(_setting(n, now[n]) for n in differ)}"
