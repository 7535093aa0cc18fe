"""What the report shows, read from the store once: each campaign's results in the order they
were stored, each target's best and default, and what other capabilities stored."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from perfport._core import Check, Config, Outcome, Problem
from perfport.store import REPORTED, BriefRow, Store, brief_rows
from perfport.store.calibrations import StoredCalibration, stored_calibrations
from perfport.store.described import campaign_specs
from perfport.store.identities import short_hash
from perfport.store.plans import StoredPlan, stored_plans

TOP = 10  # configurations listed per campaign
IMPORTED = "imported"  # the strategy 'perfport import' stores its campaigns under


@dataclass(frozen=True)
class Ranked:
    """One configuration in a campaign's top list."""

    config: Config
    median_ms: float
    ci_low_ms: float | None
    ci_high_ms: float | None
    n: int
    unverified: bool = False  # nothing compared this result's outputs
    # Another campaign of its kernel, device and problem found this configuration's outputs
    # wrong: perfport results never ranks it (store/best.py).
    wrong_elsewhere: bool = False


@dataclass(frozen=True)
class CampaignView:
    """One campaign, reduced to what its figures and tables draw."""

    key: str
    kernel: str
    device: str
    device_fingerprint: str
    problem: str
    evaluations: int
    best_so_far: tuple[tuple[int, float, float], ...]  # (evaluation, seconds, best ms) per new best
    outcomes: dict[str, int]
    top: tuple[Ranked, ...]
    default: Config | None
    default_ms: float | None
    effects: dict[str, dict[str, float]]  # parameter -> value -> median ms of ok results
    # Imported results carry the time they were imported, not measured (an import does not
    # store a cache's timestamps): their "seconds since the first result" is the import's.
    imported: bool = False
    status: str = "complete"  # the campaign's CampaignStatus value
    # The kernel's short source hash where another kernel in the report has its name (a
    # source edited under one name): the title shows it; "" otherwise.
    shown_hash: str = ""
    # A daemon's record of the refusals its clients report (perfport serve): never a search,
    # so its status stays running for good and says nothing of whether it finished.
    reported: bool = False


@dataclass(frozen=True)
class CrossDevice:
    """One kernel and problem on several devices: each device's best, and how each device's
    best runs on every other device (its time there over that device's own best)."""

    kernel: str
    problem: str
    devices: tuple[str, ...]
    best: tuple[tuple[Config | None, float | None], ...]  # per device
    slowdown: tuple[tuple[float | None, ...], ...]  # [from device][on device]; None: no time
    # [from device][on device]: the outcome where that best was stored there but failed (so
    # its slowdown is None though it was tried), else None: never tried there.
    failed: tuple[tuple[str | None, ...], ...] = ()
    # Per device: no campaign there compared its best's outputs with anything.
    unverified: tuple[bool, ...] = ()


@dataclass(frozen=True)
class ReportData:
    campaigns: tuple[CampaignView, ...]
    across: tuple[CrossDevice, ...]
    plans: tuple[StoredPlan, ...]
    results: int
    devices: dict[str, str] = field(default_factory=dict)  # fingerprint -> name
    calibrations: tuple[StoredCalibration, ...] = ()  # 'perfport model calibrate', per device


class _Builder:
    """Folds one campaign's rows, in storage order, into a CampaignView."""

    def __init__(self, first: BriefRow) -> None:
        self.first = first
        self.n = 0
        self.start = first.created
        self.best = math.inf
        self.steps: list[tuple[int, float, float]] = []
        self.outcomes: Counter[str] = Counter()
        self.ok: list[BriefRow] = []
        self.values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))

    def add(self, row: BriefRow) -> None:
        self.n += 1
        self.outcomes[row.outcome] += 1
        if not row.ok or row.median_ms is None:
            return
        self.ok.append(row)
        for name, value in json.loads(row.config_key).items():
            self.values[name][str(value)].append(row.median_ms)
        if row.median_ms < self.best:
            self.best = row.median_ms
            self.steps.append((self.n, row.created - self.start, row.median_ms))

    def view(
        self,
        default: Config | None,
        imported: bool = False,
        status: str = "complete",
        shown_hash: str = "",
        wrong: Collection[str] = (),
        reported: bool = False,
    ) -> CampaignView:
        """``default``: the default configuration of the description the campaign ran with;
        ``wrong``: the configuration keys any campaign of its target found wrong."""
        top = sorted(self.ok, key=lambda r: r.median_ms or 0.0)[:TOP]
        default_ms = None
        if default is not None:
            key = default.key
            times = [r.median_ms for r in self.ok if r.config_key == key and r.median_ms]
            default_ms = min(times) if times else None
        f = self.first
        return CampaignView(
            key=f.campaign, kernel=f.kernel, device=f.device,
            device_fingerprint=f.device_fingerprint, problem=_problem_text(f.problem_key),
            evaluations=self.n, best_so_far=tuple(self.steps),
            outcomes=dict(sorted(self.outcomes.items())),
            top=tuple(Ranked(Config.of(json.loads(r.config_key)), r.median_ms or 0.0, r.ci_low_ms,
                             r.ci_high_ms, r.n, r.verification == Check.UNVERIFIED.value,
                             r.config_key in wrong) for r in top),
            default=default, default_ms=default_ms,
            effects={p: {v: median(ts) for v, ts in vals.items()} for p, vals in self.values.items()},
            imported=imported, status=status, shown_hash=shown_hash, reported=reported,
        )  # fmt: skip


def _default(specs: list[dict[str, Any]]) -> Config | None:
    """The default configuration a campaign's description names (None: it names none)."""
    default = specs[0].get("default") if specs else None
    return Config.of(default) if isinstance(default, dict) else None


def _problem_text(key: str) -> str:
    return str(Problem.of(json.loads(key)))


def _kernel_text(target: str, clashing: Collection[str]) -> str:
    """A kernel's name (``target`` is name NUL source hash), with its short hash where another
    kernel here has its name."""
    name, _, kernel_hash = target.partition("\0")
    return f"{name} ({short_hash(kernel_hash)})" if name in clashing else name


def _across(rows_by_target: dict[tuple[str, str], dict[str, dict[str, float]]],
            names: dict[str, str],
            failures: dict[tuple[str, str], dict[str, dict[str, str]]],
            clashing: Collection[str] = (),
            checked: dict[tuple[str, str], dict[str, set[str]]] | None = None,
            ) -> list[CrossDevice]:  # fmt: skip
    """rows_by_target: (kernel name NUL source hash, problem) -> device fingerprint -> config
    key -> best ms; failures: the same keys -> the outcome of a configuration stored there
    with no ok result (or found wrong by any campaign there); checked: the same keys -> the
    configurations with an ok result whose outputs were compared with something."""
    out = []
    for (target, problem), per_device in sorted(rows_by_target.items()):
        if len(per_device) < 2:
            continue
        kernel = _kernel_text(target, clashing)
        devices = sorted(per_device, key=lambda d: names.get(d, d))
        bests = []
        for d in devices:
            times = per_device[d]
            key = min(times, key=times.__getitem__) if times else None
            bests.append((key, times[key] if key else None))
        slowdown = tuple(
            tuple(
                None if key is None or key not in per_device[on] or not own
                else per_device[on][key] / own
                for on, (_, own) in zip(devices, bests, strict=True)
            )
            for key, _ in bests
        )  # fmt: skip
        failed = failures.get((target, problem), {})
        outcomes = tuple(
            tuple(None if key is None or key in per_device[on] else failed.get(on, {}).get(key)
                  for on in devices)
            for key, _ in bests
        )  # fmt: skip
        out.append(CrossDevice(
            kernel, _problem_text(problem), tuple(names.get(d, d) for d in devices),
            tuple((Config.of(json.loads(k)) if k else None, ms) for k, ms in bests), slowdown,
            outcomes,
            tuple(key is not None and key not in (checked or {}).get((target, problem), {}).get(d, ())
                  for d, (key, _) in zip(devices, bests, strict=True)),
        ))  # fmt: skip
    return out


class _Targets:
    """Each (kernel, problem)'s results on each device over all its campaigns, as perfport
    results ranks them: a configuration any campaign there found wrong is a failure there,
    whatever ok time a campaign that did not verify it stored."""

    def __init__(self) -> None:
        # (kernel name NUL source hash, problem) -> device fingerprint -> config key -> ...
        self.times: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(dict)
        self.failures: dict[tuple[str, str], dict[str, dict[str, str]]] = defaultdict(dict)
        self.wrong: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(dict)
        self.checked: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(dict)

    def add(self, row: BriefRow) -> None:
        # By kernel name and source: two kernels of one name are not one across devices.
        target = (f"{row.kernel}\0{row.kernel_hash}", row.problem_key)
        device = row.device_fingerprint
        if row.ok and row.median_ms is not None:
            per = self.times[target].setdefault(device, {})
            per[row.config_key] = min(per.get(row.config_key, math.inf), row.median_ms)
            if row.verification != Check.UNVERIFIED.value:
                self.checked[target].setdefault(device, set()).add(row.config_key)
        else:  # tried and failed: the matrix says so rather than "never measured"
            self.failures[target].setdefault(device, {})[row.config_key] = row.outcome
            if row.outcome == Outcome.WRONG_RESULT.value:
                self.wrong[target].setdefault(device, set()).add(row.config_key)

    def wrong_of(self, first: BriefRow) -> set[str]:
        """The configurations any campaign of ``first``'s kernel, problem and device found wrong."""
        target = (f"{first.kernel}\0{first.kernel_hash}", first.problem_key)
        return self.wrong.get(target, {}).get(first.device_fingerprint, set())

    def ranked(self) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
        """The ok times, less those of configurations found wrong (failures from now on)."""
        for target, per_device in self.wrong.items():
            for device, keys in per_device.items():
                for key in keys:
                    self.times[target].get(device, {}).pop(key, None)
                    self.failures[target].setdefault(device, {})[key] = Outcome.WRONG_RESULT.value
        return self.times


def gather(store: Store, kernel: str | None = None, device: str | None = None) -> ReportData:
    """Read everything the report draws in one pass over the matching results."""
    builders: dict[str, _Builder] = {}
    targets = _Targets()
    names: dict[str, str] = {}
    hashes: dict[str, set[str]] = defaultdict(set)  # kernel name -> the sources named so
    n = 0
    for row in brief_rows(store, kernel=kernel, device=device):
        n += 1
        builder = builders.get(row.campaign)
        if builder is None:
            builder = builders[row.campaign] = _Builder(row)
        builder.add(row)
        names[row.device_fingerprint] = row.device
        hashes[row.kernel].add(row.kernel_hash)
        targets.add(row)
    clashing = {name for name, found in hashes.items() if len(found) > 1}
    campaigns = {key: store.campaign(key) for key in builders}
    views = [
        b.view(
            _default(campaign_specs(store, [key])),
            imported=campaigns[key].strategy == IMPORTED,
            status=campaigns[key].status.value,
            shown_hash=short_hash(b.first.kernel_hash) if b.first.kernel in clashing else "",
            wrong=targets.wrong_of(b.first),
            reported=campaigns[key].strategy == REPORTED,
        )
        for key, b in builders.items()
    ]
    plans = [p for p in stored_plans(store, kernel) if _plan_matches(p, device, names)]
    # Calibrations belong to a device, not a kernel: a --kernel report leaves them out.
    calibrations = () if kernel else tuple(stored_calibrations(store, device))
    across = _across(targets.ranked(), names, targets.failures, clashing, targets.checked)
    return ReportData(tuple(views), tuple(across), tuple(plans), n, names, calibrations)


def _plan_matches(plan: StoredPlan, device: str | None, names: dict[str, str]) -> bool:
    return device is None or any(d == device or names.get(d) == device for d in plan.devices)


def config_text(config: Config | None) -> str:
    return "-" if config is None else str(config)


def shares(plan: StoredPlan, names: dict[str, str]) -> Iterable[tuple[str, float]]:
    """Each device's share of a split plan's extent."""
    parts = plan.plan.get("parts") or []
    for fingerprint, part in zip(plan.devices, parts, strict=False):
        yield names.get(fingerprint, fingerprint[:8]), float(part[1] - part[0])
