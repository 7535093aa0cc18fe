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


def other_identity(was: tuple[str, ...], now: tuple[str, ...]) -> str:
    """What differs between a stored campaign (``was``) and this run (``now``), each given as
    (device fingerprint, kernel name, kernel source hash, problem key), and the fix: "belongs
    to kernel 'saxpy' whose source changed (...); choose another --campaign key, ...". The
    kernel is compared by its source, as a campaign key is (not by its name)."""
    differ = []
    if was[0] != now[0]:
        differ.append(f"another device (stored {was[0][:12]}, this run {now[0][:12]})")
    edited = was[2] != now[2] and was[1] == now[1]  # a spec's edited source: a new kernel
    if edited:
        differ.append(f"kernel {was[1]!r} whose source changed ({was[2][:12]}, now {now[2][:12]})")
    elif was[2] != now[2]:
        this = f"{now[1]!r} {now[2][:12]}" if now[1] else now[2][:12]
        differ.append(f"another kernel (stored {was[1]!r} {was[2][:12]}, this run {this})")
    if was[3] != now[3]:
        differ.append(f"another problem (stored {was[3]}, this run {now[3]})")
    fix = "choose another --campaign key"
    if edited and len(differ) == 1:
        fix += ", or restore the kernel's source to resume it"
    return f"belongs to {' and '.join(differ)}; {fix}"
