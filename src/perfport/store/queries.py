"""Questions asked of the results database: every row for export (the best configurations
are in ``best.py``)."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from perfport._core import Check, Config, ExpressionError, Outcome, Problem, StoreError
from perfport._core.metrics import Ceilings, ResultMetrics
from perfport._core.problem_check import typed_as
from perfport.store.ceilings import stored_ceilings
from perfport.store.described import CAMPAIGN_SPEC
from perfport.store.identities import short_hash
from perfport.store.store import Store

_RESULT_ROWS = f"""
SELECT d.fingerprint AS device_fingerprint, d.name AS device, d.backend, k.name AS kernel,
       k.source_hash AS kernel_hash, {CAMPAIGN_SPEC} AS spec, p.key AS problem, c.key AS config,
       r.outcome, r.message, r.n, r.min_ms, r.median_ms, r.mean_ms, r.std_ms, r.ci_low_ms,
       r.ci_high_ms, r.compile_ms, r.tool_version, r.created, r.verification,
       r.verified_against, s.times, g.key AS campaign,
       g.space, g.device_id, g.kernel_id, g.problem_id, g.id AS campaign_id
FROM results r
JOIN campaigns g ON g.id = r.campaign_id
JOIN devices d ON d.id = g.device_id
JOIN kernels k ON k.id = g.kernel_id
JOIN problems p ON p.id = g.problem_id
JOIN configs c ON c.id = r.config_id
LEFT JOIN samples s ON s.result_id = r.id
{{where}}
ORDER BY r.id
"""


@dataclass(frozen=True)
class BestResult:
    """The best configuration found for one (device, kernel, problem), over all campaigns."""

    device: str
    backend: str
    device_fingerprint: str
    kernel: str
    problem: Problem
    best: Config | None
    best_ms: float | None
    default: Config | None
    default_ms: float | None
    outcomes: dict[str, int]  # per distinct configuration, plus the space's pruned (as tune)
    campaigns: int
    best_verification: Check | None = None  # the best result's check (None: unknown)
    best_verified_against: str | None = None
    unverified: int = 0  # ok results whose outputs nothing was compared with
    best_metrics: dict[str, float | None] = field(default_factory=dict)  # with "roofline"
    campaign_statuses: dict[str, int] = field(default_factory=dict)  # status -> campaigns
    finished: bool = True  # False: the best of a campaign running, killed, interrupted, failed
    kernel_hash: str = ""  # the kernel's source hash (kernels of one name differ by it)

    @property
    def speedup(self) -> float | None:
        """default time / best time (> 1 means tuning paid off)."""
        if self.best_ms and self.default_ms:
            return self.default_ms / self.best_ms
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "backend": self.backend,
            "device_fingerprint": self.device_fingerprint,
            "kernel": self.kernel,
            "kernel_hash": short_hash(self.kernel_hash),
            "problem": dict(self.problem),
            "best": None
            if self.best is None
            else {"config": dict(self.best), "time_ms": self.best_ms, "metrics": self.best_metrics},
            "default": None
            if self.default is None
            else {"config": dict(self.default), "time_ms": self.default_ms},
            "speedup_over_default": self.speedup,
            "outcomes": self.outcomes,
            "campaigns": self.campaigns,
            "verified": None
            if self.best_verification is None
            else self.best_verification is Check.VERIFIED,
            "verified_against": self.best_verified_against,
            "verification": None
            if self.best_verification is None
            else self.best_verification.value,
            "unverified": self.unverified,
            "finished": self.finished,
            "campaign_statuses": self.campaign_statuses,
        }


# A kernel by its name, or by a prefix of its source hash (see _prefix).
_KERNEL = "(k.name = ? OR k.source_hash LIKE ? ESCAPE '\\')"


def _prefix(text: str) -> str:
    """A LIKE pattern matching what starts with ``text``: its own % and _ are not wildcards
    (--kernel % matched every kernel)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


_DEVICE = "(d.fingerprint = ? OR d.name = ?)"


def _where(kernel: str | None, device: str | None) -> tuple[str, tuple[Any, ...]]:
    clauses, params = [], []
    if kernel:
        clauses.append(_KERNEL)
        params += [kernel, _prefix(kernel)]
    if device:
        clauses.append(_DEVICE)
        params += [device, device]
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def _scoring(row: Any, ceilings: dict[str, Ceilings]) -> ResultMetrics | None:
    """The metrics of a stored row's kernel and problem; None where the stored description
    no longer parses (a store written by another version)."""
    try:
        return ResultMetrics.of(
            json.loads(row["spec"]),
            json.loads(row["problem"]),
            ceilings.get(row["device_fingerprint"]),
        )
    except (ExpressionError, KeyError, TypeError, ValueError):
        return None


def _metrics(
    scoring: ResultMetrics | None, config_key: str | None, time_ms: float | None
) -> dict[str, float | None]:
    if scoring is None or config_key is None:
        return {}
    return scoring.values(json.loads(config_key), time_ms)


EXPORT_COLUMNS = (
    "campaign", "device", "backend", "device_fingerprint", "kernel", "kernel_hash", "problem", "config",
    "outcome", "message", "n", "min_ms", "median_ms", "mean_ms", "std_ms", "ci_low_ms",
    "ci_high_ms", "compile_ms", "times_ms", "tool_version", "created", "verified",
    "verified_against", "verification", "metrics",
)  # fmt: skip


@dataclass(frozen=True)
class ResultRow:
    """One stored result, flat: a row of ``perfport export`` (``to_json`` gives its record,
    keyed by EXPORT_COLUMNS in that order)."""

    campaign: str
    device: str
    backend: str
    device_fingerprint: str
    kernel: str
    kernel_hash: str
    problem: Problem
    config: Config
    outcome: Outcome
    message: str
    n: int
    min_ms: float | None
    median_ms: float | None
    mean_ms: float | None
    std_ms: float | None
    ci_low_ms: float | None
    ci_high_ms: float | None
    compile_ms: float | None
    times_ms: tuple[float, ...]  # every timed launch
    tool_version: str
    created: float
    verification: Check | None = None  # None: no outputs, or stored before it was recorded
    verified_against: str | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)  # with "roofline"

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    @property
    def verified(self) -> bool | None:
        """Whether the outputs were compared with expected ones; None when unknown."""
        return None if self.verification is None else self.verification is Check.VERIFIED

    def to_json(self) -> dict[str, Any]:
        record = {name: getattr(self, name) for name in EXPORT_COLUMNS}
        record.update(
            problem=dict(self.problem),
            config=dict(self.config),
            outcome=self.outcome.value,
            times_ms=list(self.times_ms),
            verification=None if self.verification is None else self.verification.value,
        )
        return record


# Rows repeat a few thousand configurations and problems: parse each key once. Config and
# Problem are immutable, so rows may share them; the bound keeps an export's memory constant.
@lru_cache(maxsize=1 << 16)
def _config(key: str) -> Config:
    return Config.of(json.loads(key))


@lru_cache(maxsize=1 << 10)
def _problem(key: str) -> Problem:
    return Problem.of(json.loads(key))


def _result_row(row: Any, scoring: ResultMetrics | None = None) -> ResultRow:
    ok = row["outcome"] == Outcome.OK.value
    metrics = _metrics(scoring, row["config"], row["median_ms"] if ok else None)
    return ResultRow(
        campaign=row["campaign"], device=row["device"], backend=row["backend"],
        device_fingerprint=row["device_fingerprint"], kernel=row["kernel"],
        kernel_hash=row["kernel_hash"], problem=_problem(row["problem"]),
        config=_config(row["config"]), outcome=Outcome(row["outcome"]),
        message=row["message"], n=row["n"], min_ms=row["min_ms"], median_ms=row["median_ms"],
        mean_ms=row["mean_ms"], std_ms=row["std_ms"], ci_low_ms=row["ci_low_ms"],
        ci_high_ms=row["ci_high_ms"], compile_ms=row["compile_ms"],
        times_ms=tuple(np.frombuffer(row["times"], dtype="<f8").tolist()) if row["times"] else (),
        tool_version=row["tool_version"], created=row["created"],
        verification=None if row["verification"] is None else Check(row["verification"]),
        verified_against=row["verified_against"], metrics=metrics,
    )  # fmt: skip


def export_rows(
    store: Store, kernel: str | None = None, device: str | None = None
) -> Generator[ResultRow, None, None]:
    """Every stored result, in the order it was stored (close it before the store when it
    is not read to the end)."""
    where, params = _where(kernel, device)
    ceilings = stored_ceilings(store)
    scorings: dict[tuple[int, str, str], ResultMetrics | None] = {}
    for row in store.stream(_RESULT_ROWS.format(where=where), params):
        # By campaign: specs over one source, and edits of one spec, may state other work.
        key = (row["campaign_id"], row["problem"], row["device_fingerprint"])
        if key not in scorings:
            scorings[key] = _scoring(row, ceilings)
        yield _result_row(row, scorings[key])


_EXPORTED_CAMPAIGNS = """
SELECT g.id FROM campaigns g JOIN devices d ON d.id = g.device_id JOIN kernels k ON k.id = g.kernel_id
{where} {conj} EXISTS (SELECT 1 FROM results r WHERE r.campaign_id = g.id)
"""


def export_keys(
    store: Store, kernel: str | None = None, device: str | None = None
) -> tuple[list[str], list[str], list[str]]:
    """The problem and parameter names (sorted) and the metric names (in the kernels' order)
    of what ``export_rows`` yields: the CSV's extra columns, known before the first row so the
    rows can stream."""
    where, params = _where(kernel, device)
    campaigns = _EXPORTED_CAMPAIGNS.format(where=where, conj="AND" if where else "WHERE")
    problems = store.query(
        "SELECT DISTINCT j.key FROM problems p, json_each(p.key) j WHERE p.id IN "
        f"(SELECT g.problem_id FROM campaigns g WHERE g.id IN ({campaigns})) ORDER BY j.key",
        params,
    )
    names = store.query(
        "SELECT DISTINCT j.key FROM configs c, json_each(c.key) j WHERE c.id IN (SELECT "
        f"r.config_id FROM results r WHERE r.campaign_id IN ({campaigns})) ORDER BY j.key",
        params,
    )
    specs = store.query(
        f"SELECT {CAMPAIGN_SPEC} AS spec, MIN(g.id) AS first FROM campaigns g JOIN kernels k "
        f"ON k.id = g.kernel_id WHERE g.id IN ({campaigns}) GROUP BY spec ORDER BY first",
        params,
    )
    metrics: dict[str, None] = {}
    for row in specs:
        scoring = _scoring({"spec": row[0], "problem": "{}", "device_fingerprint": ""}, {})
        metrics.update(dict.fromkeys(scoring.names if scoring else ()))
    return [r[0] for r in problems], [r[0] for r in names], list(metrics)


def one_group(
    store: Store,
    kernel: str | None = None,
    device: str | None = None,
    problem: Mapping[str, Any] | None = None,
) -> list[ResultRow]:
    """The export rows of exactly one device/kernel/problem, one per configuration (a wrong
    result, else its best ok result, else its latest). ``problem`` keeps the rows whose problem
    has these values (as text, as typed on a command line; else by value: a=2 finds a stored
    a=2.0); its callers offer ``--problem``, so only their errors name it. More than one
    match, or none, is a StoreError naming them."""
    options = "--kernel, --device and --problem" if problem is not None else "--kernel and --device"
    wanted = {str(k): str(v) for k, v in (problem or {}).items()}
    rows, by_value = [], []  # by_value: a=2 for a stored a=2.0, where no a=2 was stored
    for r in export_rows(store, kernel=kernel, device=device):
        if all(k in r.problem and str(r.problem[k]) == v for k, v in wanted.items()):
            rows.append(r)
        elif not rows and all(typed_as(r.problem.get(k), v) for k, v in wanted.items()):
            by_value.append(r)
    rows = rows or by_value
    if not rows:
        raise StoreError(no_match(store, kernel, device) or
                         f"no results match; check {options} with 'perfport results'")  # fmt: skip
    # A kernel is its source and its name: two specs over one source are two kernels.
    groups = {(r.device_fingerprint, r.kernel_hash, r.problem.key, r.kernel) for r in rows}
    if len(groups) > 1:
        vary = len({g[2] for g in groups}) > 1  # the problem only where it tells them apart
        text = {(r.device_fingerprint, r.kernel_hash, r.problem.key, r.kernel): f"{r.kernel} on "
                f"{r.device}" + (f" ({_problem_text(r.problem)})" if vary else "")
                for r in rows}  # fmt: skip
        if len(set(text.values())) < len(text):
            # Two sources under one kernel name, or two devices under one name (an H100's
            # OpenCL and CUDA devices): what tells them apart on the command line.
            text = {g: f"{t}: --kernel {short_hash(g[1])} --device {g[0]}" for g, t in text.items()}
        names = sorted(set(text.values()))
        raise StoreError(
            f"{len(groups)} device/kernel/problem combinations match ({_first(names)}); "
            f"narrow it with {options}"
        )
    chosen: dict[str, ResultRow] = {}
    for r in rows:
        old = chosen.get(r.config.key)
        if old is None or _shown_before(r, old):
            chosen[r.config.key] = r
    return list(chosen.values())


_SHOWN = 5  # combinations named whole in the error; a store may hold hundreds


def _first(names: Sequence[str]) -> str:
    """The first few names, each whole (cutting the text could end inside a hint's --kernel
    or --device), then how many more there are."""
    more = len(names) - _SHOWN
    return "; ".join(names[:_SHOWN]) + (f"; and {more} more" if more > 0 else "")


def _problem_text(problem: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in problem.items())


def _shown_before(new: ResultRow, old: ResultRow) -> bool:
    """Which of one configuration's results stands for it: a wrong result first (an ok of an
    unverified campaign beside it proves nothing), then the fastest ok."""
    if old.outcome is Outcome.WRONG_RESULT:
        return False
    if new.outcome is Outcome.WRONG_RESULT:
        return True
    return new.ok and (not old.ok or (new.median_ms or 0.0) < (old.median_ms or 0.0))


def no_match(store: Store, kernel: str | None, device: str | None) -> str:
    """The names to choose from where --device or --kernel names nothing in the store."""
    for flag, given, table, clause, params in (
        ("--device", device, "devices d", _DEVICE, (device, device)),
        ("--kernel", kernel, "kernels k", _KERNEL, (kernel, _prefix(kernel or ""))),
    ):  # the table and clause are these constants; what the user typed is a parameter
        if given and not store.query(f"SELECT 1 FROM {table} WHERE {clause} LIMIT 1", params):
            names = store.query(f"SELECT DISTINCT name FROM {table.split()[0]} ORDER BY name")
            shown = "; ".join(r[0] for r in names)[:300] or "none"
            return f"no {flag} {given!r} in {store.path} (it has: {shown}); give one of those"
    return ""


# Per (device, problem) result set: each configuration's best ok time and the set's best,
# summed per configuration as (set's best / its time). SQLite does the whole aggregation, so a
# store of a million results hands Python one row per distinct configuration, never a sample.
# Grouping is by integer ids until the last step (grouping a million JSON keys is slow). A
# campaign holds a configuration once (UNIQUE), so where each set is one campaign, as is usual,
# the per-set minimum is the result itself and one pass with no large grouping does
# (_ONE_CAMPAIGN); a set of several campaigns takes the minimum first (_MANY_CAMPAIGNS).
_SETS = """
SELECT g.id AS campaign_id, g.device_id, g.problem_id
FROM campaigns g JOIN problems p ON p.id = g.problem_id
WHERE g.kernel_id IN ({kernels})
  AND g.device_id NOT IN (SELECT id FROM devices WHERE fingerprint = ?) {problem}
"""
_OK = "r.outcome = 'ok' AND r.median_ms > 0"
_ONE_CAMPAIGN = f"""
WITH sets AS MATERIALIZED ({_SETS}), best AS MATERIALIZED (
    SELECT s.campaign_id, MIN(r.median_ms) AS b
    FROM sets s JOIN results r ON r.campaign_id = s.campaign_id WHERE {_OK}
    GROUP BY s.campaign_id
), by_id AS MATERIALIZED (
    SELECT r.config_id, SUM(best.b / r.median_ms) AS f
    FROM best JOIN results r ON r.campaign_id = best.campaign_id WHERE {_OK}
    GROUP BY r.config_id
)
"""
_MANY_CAMPAIGNS = f"""
WITH sets AS MATERIALIZED ({_SETS}), per AS MATERIALIZED (
    SELECT s.device_id, s.problem_id, r.config_id, MIN(r.median_ms) AS t
    FROM sets s JOIN results r ON r.campaign_id = s.campaign_id WHERE {_OK}
    GROUP BY s.device_id, s.problem_id, r.config_id
), best AS MATERIALIZED (
    SELECT device_id, problem_id, MIN(t) AS b FROM per GROUP BY device_id, problem_id
), by_id AS MATERIALIZED (
    SELECT per.config_id, SUM(best.b / per.t) AS f
    FROM per JOIN best USING (device_id, problem_id) GROUP BY per.config_id
)
"""
_BY_KEY = """
SELECT c.key AS config, SUM(by_id.f) AS fraction, (SELECT COUNT(*) FROM best) AS sources
FROM by_id JOIN configs c ON c.id = by_id.config_id
GROUP BY c.key
"""


@dataclass(frozen=True)
class TransferSummary:
    """Other devices' ok results of one kernel, summarised per configuration: over the
    (device, problem) result sets, the sum of (the set's best time / the configuration's best
    time in that set), and how many sets there are."""

    fractions: dict[str, float]  # canonical config key -> summed fraction of the optimum
    sources: int


def transfer_summary(
    store: Store,
    kernel_ids: Sequence[int],
    exclude_fingerprint: str,
    problem_key: str | None = None,
) -> TransferSummary:
    """The summary over every device but ``exclude_fingerprint`` of the kernel rows
    ``kernel_ids`` (the caller chose them); only results for ``problem_key`` when it is
    given."""
    ids = list(kernel_ids)
    if not ids:
        return TransferSummary({}, 0)
    params: tuple[Any, ...] = (*ids, exclude_fingerprint)
    if problem_key is not None:
        params += (problem_key,)
    where = {
        "kernels": ",".join("?" * len(ids)),
        "problem": "AND p.key = ?" if problem_key is not None else "",
    }
    sets = store.query(_SETS.format(**where), params)
    if not sets:
        return TransferSummary({}, 0)
    one = len({(r["device_id"], r["problem_id"]) for r in sets}) == len(sets)
    sql = (_ONE_CAMPAIGN if one else _MANY_CAMPAIGNS).format(**where) + _BY_KEY
    found = store.query(sql, params)
    return TransferSummary(
        {r["config"]: float(r["fraction"]) for r in found}, int(found[0]["sources"]) if found else 0
    )


_BRIEF_ROWS = """
SELECT g.key, d.name, d.fingerprint, k.name, p.key, c.key, r.outcome, r.median_ms, r.ci_low_ms,
       r.ci_high_ms, r.n, r.created, k.source_hash, r.verification
FROM results r
JOIN campaigns g ON g.id = r.campaign_id
JOIN devices d ON d.id = g.device_id
JOIN kernels k ON k.id = g.kernel_id
JOIN problems p ON p.id = g.problem_id
JOIN configs c ON c.id = r.config_id
{where}
ORDER BY r.id
"""


@dataclass(frozen=True, slots=True)
class BriefRow:
    """One stored result without its samples, its configuration and problem left as their
    canonical JSON keys: what a reader of every row (the HTML report) needs, cheaply."""

    campaign: str
    device: str
    device_fingerprint: str
    kernel: str
    problem_key: str
    config_key: str
    outcome: str  # an Outcome value
    median_ms: float | None
    ci_low_ms: float | None
    ci_high_ms: float | None
    n: int
    created: float
    kernel_hash: str = ""
    verification: str | None = None  # a Check value; None: no outputs, or before schema 3

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.OK.value and self.median_ms is not None


def brief_rows(
    store: Store, kernel: str | None = None, device: str | None = None
) -> Iterator[BriefRow]:
    """Every stored result, briefly, in the order it was stored (streamed)."""
    where, params = _where(kernel, device)
    for row in store.stream(_BRIEF_ROWS.format(where=where), params):
        yield BriefRow(*row)
