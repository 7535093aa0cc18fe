"""Measured kernels for calibration and evaluation: collection kernels (``mk-<generator>``,
their problem the variant arguments) and application kernels (``app-<name>``, their problem
the sizes), read from a store or from a JSON/CSV file, and their features from loopy.

A data file is ``perfport export``'s JSON or CSV (columns ``device``, ``device_fingerprint``,
``kernel``, ``problem``, ``median_ms``, ``outcome``; others ignored) or the slim form
``write_data`` writes (``time_ms`` for ``median_ms``). Rows with another kernel name or an
outcome other than ok (a failed measurement, which has no time) are skipped; any other row's
time must be a finite number of ms > 0, an application kernel's problem its integer sizes
(1 or more), and a problem inside its kernel's assumptions: a bad one is refused, naming its
line, never dropped (it would change the errors).
"""

from __future__ import annotations

import csv
import io
import json
import math
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from perfport._core.errors import ExpressionError
from perfport._core.records import Problem
from perfport.model.cache import StatsCache
from perfport.model.calibrate import Measurement
from perfport.model.counts import EvaluatedStats
from perfport.model.errors import BadProblem, ModelError, UncountableKernel
from perfport.model.expression import DomainError
from perfport.model.features import FeatureSet
from perfport.model.model import Model, input_features

T = TypeVar("T")

COLLECTION_PREFIX = "mk-"
APPLICATION_PREFIX = "app-"
COLUMNS = ("device", "device_fingerprint", "kernel", "problem", "time_ms")
# KernelFeatures._build's programs by (kernel, variant key), shared by every instance.
_PROGRAMS: dict[tuple[str, str], tuple[Any, frozenset[str]]] = {}
_MAX_PROGRAMS = 512


@dataclass(frozen=True)
class TimedKernel:
    """One measured kernel on one device: the median of its timed launches, in ms."""

    device: str  # the device's name as the driver reports it
    device_fingerprint: str
    kernel: str  # mk-<generator> or app-<application>
    problem: Problem
    time_ms: float
    # Where it was read ("FILE, line 7"), to name a bad row; "" for a store's.
    origin: str = field(default="", compare=False)
    # The source hash of the code measured ("" where a data file does not say): a kernel
    # file named like a built-in (app-matmul-prefetch) is told apart by it.
    kernel_hash: str = ""

    @property
    def is_collection(self) -> bool:
        return self.kernel.startswith(COLLECTION_PREFIX)

    @property
    def is_application(self) -> bool:
        return self.kernel.startswith(APPLICATION_PREFIX)

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "device_fingerprint": self.device_fingerprint,
            "kernel": self.kernel,
            "problem": dict(self.problem),
            "time_ms": self.time_ms,
            **({"kernel_hash": self.kernel_hash} if self.kernel_hash else {}),
        }


def fastest_by(
    runs: Iterable[T], key: Callable[[T], Hashable], time: Callable[[T], float]
) -> list[T]:
    """One run per ``key``: the fastest (noise only ever adds time), in first-seen order."""
    best: dict[Hashable, T] = {}
    for r in runs:
        k = key(r)
        if k not in best or time(r) < time(best[k]):
            best[k] = r
    return list(best.values())


def _fastest(runs: Iterable[TimedKernel]) -> list[TimedKernel]:
    """One run per device, kernel, code and problem: the fastest (a kernel file's faster run
    never hides the built-in's of the same name)."""
    kept = (r for r in runs if (r.is_collection or r.is_application) and r.time_ms > 0)
    return fastest_by(kept, lambda r: (r.device_fingerprint, r.kernel, r.kernel_hash,
                                       r.problem.key), lambda r: r.time_ms)  # fmt: skip


def from_store(db: str | Path, device: str | None = None) -> list[TimedKernel]:
    """The ok collection and application measurements in a store (of one device if given:
    its fingerprint or name)."""
    from perfport.store import ReadOnlyStore
    from perfport.store.queries import export_rows

    if not Path(db).is_file():
        raise ModelError(f"{db}: no such database; give --db the one 'model collect' wrote")
    with ReadOnlyStore(db) as store:
        rows = [r for r in export_rows(store, device=device) if r.ok and r.median_ms]
    return _fastest(
        TimedKernel(
            r.device,
            r.device_fingerprint,
            r.kernel,
            r.problem,
            float(r.median_ms or 0),
            kernel_hash=r.kernel_hash,
        )
        for r in rows
    )


def _row(record: Mapping[str, Any], where: str) -> TimedKernel | None:
    if str(record.get("outcome") or "ok") != "ok":
        return None  # a failed measurement: no time to fit or predict
    try:
        kernel = str(record["kernel"])
        if not kernel.startswith((COLLECTION_PREFIX, APPLICATION_PREFIX)):
            return None
        problem = record["problem"]
        if isinstance(problem, str):
            problem = json.loads(problem)
        if not isinstance(problem, Mapping):
            raise ModelError(f'{where}: problem is not a JSON object; write it as {{"n": 1024}}')
        if kernel.startswith(APPLICATION_PREFIX):
            _check_sizes(problem, where)
        return TimedKernel(
            device=str(record["device"]),
            device_fingerprint=str(record.get("device_fingerprint") or record["device"]),
            kernel=kernel,
            problem=Problem.of(dict(problem)),
            time_ms=_time(record, where),
            origin=where,
            kernel_hash=str(record.get("kernel_hash") or ""),
        )
    except KeyError as exc:
        raise ModelError(
            f"{where}: no {exc} field; give device, kernel, problem and time_ms "
            "(or perfport export's median_ms)"
        ) from None
    except json.JSONDecodeError as exc:
        raise ModelError(
            f'{where}: problem is not a JSON object ({exc.msg}); write it as {{"n": 1024}}'
        ) from None


def _check_sizes(problem: Mapping[str, Any], where: str) -> None:
    """An application kernel's problem is its sizes: integers (loopy counts at them)."""
    for name, value in problem.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise ModelError(
                f"{where}: problem {name}={json.dumps(value)} is not an integer; an application "
                'kernel\'s problem gives its sizes as integers, e.g. {"n": 1024}'
            )
        if value < 1:  # as --problem: no kernel runs there (one without lp.assume counts 0)
            raise ModelError(f"{where}: problem {name}={value} is not 1 or more; an application "
                             "kernel's sizes are 1 or more (drop the row)")  # fmt: skip


def _time(record: Mapping[str, Any], where: str) -> float:
    """The row's time in ms: time_ms, else perfport export's median_ms; finite and > 0."""
    column = next((c for c in ("time_ms", "median_ms") if c in record), None)
    if column is None:
        raise ModelError(f"{where}: no 'time_ms' (or 'median_ms') field; give device, kernel, "
                         "problem and time_ms (or perfport export's median_ms)")  # fmt: skip
    text = record[column]
    try:
        value = math.nan if isinstance(text, bool) else float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        shown = json.dumps(text) if not isinstance(text, str) else repr(text)
        raise ModelError(f"{where}: a bad value ({column} {shown} is not a finite number > 0); "
                         f"{column} is a number of ms (drop the row, or mark a failed "
                         "measurement with an outcome other than ok)")  # fmt: skip
    return value


def read_data(path: str | Path) -> list[TimedKernel]:
    """Measurements from a JSON (a list of rows, or {"measurements": [...]}) or CSV file."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read ({exc.strerror}); give a JSON or CSV file") from None
    except UnicodeDecodeError as exc:  # a binary file given by mistake
        raise ModelError(f"{path}: not text ({exc.reason}); give a JSON or CSV file") from None
    records: Any
    if p.suffix.lower() == ".csv":
        try:
            records = list(csv.DictReader(io.StringIO(text)))
        except csv.Error as exc:  # e.g. a field over the csv module's size limit
            raise ModelError(f"{path}: not a CSV table ({exc}); see docs/model.md") from None
    else:
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelError(f"{path}: not JSON ({exc.msg}); give a JSON or .csv file") from None
        if isinstance(records, Mapping):
            records = records.get("measurements", records.get("rows"))
    if not isinstance(records, list) or not all(isinstance(r, Mapping) for r in records):
        raise ModelError(f"{path}: expected a list of measurement rows; see docs/model.md")
    # A CSV row is named by its line (line 1 is the header), a JSON one by its place.
    unit, first = ("line", 2) if p.suffix.lower() == ".csv" else ("row", 1)
    rows = (_row(rec, f"{path}, {unit} {n}") for n, rec in enumerate(records, first))
    return _fastest(r for r in rows if r is not None)


def write_data(runs: Sequence[TimedKernel], path: str | Path) -> None:
    """The slim CSV that ``read_data`` reads (and perfport ships)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # The code's hash only where a run has one (a store's): files read without it stay slim.
    hashed = any(r.kernel_hash for r in runs)
    writer.writerow((*COLUMNS, "kernel_hash") if hashed else COLUMNS)
    for r in sorted(runs, key=lambda r: (r.device_fingerprint, r.kernel, r.problem.key)):
        problem = json.dumps(dict(r.problem), sort_keys=True)
        row = (r.device, r.device_fingerprint, r.kernel, problem, f"{r.time_ms:.6g}")
        writer.writerow((*row, r.kernel_hash) if hashed else row)
    Path(path).write_text(out.getvalue())


@dataclass(frozen=True)
class Skipped:
    """Measurements of one kernel (one structural variant) left out because its statistics
    cannot be computed, and why."""

    kernel: str
    variant: dict[str, Any]  # a collection kernel's non-size arguments; {} for applications
    n_runs: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "variant": dict(self.variant),
            "n_runs": self.n_runs,
            "reason": self.reason,
        }

    def line(self) -> str:
        shown = " ".join(f"{k}:{v}" for k, v in sorted(self.variant.items()))
        return f"skipped {self.kernel}{' ' + shown if shown else ''} ({self.n_runs} runs): "\
               f"{self.reason}"  # fmt: skip


class KernelFeatures:
    """Statistics of measured kernels at their sizes: each loopy program is built once per
    structure and counted once (``StatsCache``), then re-evaluated at every size."""

    def __init__(self, cache: StatsCache | None = None, subgroup_size: int | None = None) -> None:
        self.cache = cache or StatsCache()
        self.subgroup_size = subgroup_size or self.cache.subgroup_size  # default: the cache's
        self._programs: dict[tuple[str, str], tuple[Any, frozenset[str]]] = {}
        self._failed: dict[tuple[str, str], str] = {}  # counted once, failed: why
        self._builtin: dict[str, str | None] = {}  # a built-in's source hash (None: unknown)

    def _program(self, kernel: str, problem: Problem) -> tuple[Any, dict[str, int]]:
        key = self._key(kernel, problem)
        if key not in self._programs:
            self._programs[key] = self._build(kernel, problem)
        program, size_args = self._programs[key]
        # An application kernel's problem is all sizes; a collection kernel's holds variants.
        sized = kernel.startswith(COLLECTION_PREFIX)
        return program, {k: int(v) for k, v in problem.items() if not sized or k in size_args}

    def _key(self, kernel: str, problem: Problem) -> tuple[str, str]:
        """One program per collection kernel and variant (its non-size arguments), one per
        application kernel."""
        if not kernel.startswith(COLLECTION_PREFIX):
            return kernel, ""
        return kernel, Problem.of(self._variant(kernel, problem)).key

    def _variant(self, kernel: str, problem: Problem) -> dict[str, Any]:
        if not kernel.startswith(COLLECTION_PREFIX):
            return {}
        size_args = self._generator(kernel).size_args
        return {k: v for k, v in problem.items() if k not in size_args}

    @staticmethod
    def _generator(kernel: str) -> Any:
        from perfport.model.generators import all_generators

        name = kernel[len(COLLECTION_PREFIX) :]
        generator = next((g for g in all_generators() if g.name == name), None)
        if generator is None:
            raise ModelError(f"{kernel}: no generator {name!r}; measure a known one")
        return generator

    def _build(self, kernel: str, problem: Problem) -> tuple[Any, frozenset[str]]:
        """The program (and its size arguments) of ``kernel`` at ``problem``'s variant: built
        once per process, for every KernelFeatures (loopy takes a tenth of a second or more a
        program, its programs are immutable, and a session calibrates, evaluates and predicts
        the same kernels again and again)."""
        key = self._key(kernel, problem)
        if key not in _PROGRAMS:
            if len(_PROGRAMS) >= _MAX_PROGRAMS:
                _PROGRAMS.clear()
            _PROGRAMS[key] = self._make(kernel, problem)
        return _PROGRAMS[key]

    def _make(self, kernel: str, problem: Problem) -> tuple[Any, frozenset[str]]:
        from perfport.model.apps import APPLICATIONS, load_program

        if kernel.startswith(COLLECTION_PREFIX):
            generator = self._generator(kernel)
            return generator.kernel(problem).program, generator.size_args
        name = kernel.removeprefix(APPLICATION_PREFIX)
        if name not in APPLICATIONS:
            # the store keeps a kernel file's stem, not its code: it cannot be counted again
            raise ModelError(f"{kernel}: no application kernel {name!r}; known: "
                             f"{', '.join(APPLICATIONS)} (a kernel file's measurements: "
                             "'perfport model evaluate --calibration CAL --kernel FILE.py')")  # fmt: skip
        return load_program(name), frozenset()

    def stats(self, kernel: str, problem: Problem) -> EvaluatedStats:
        """The kernel's statistics at ``problem``'s sizes. Raises ``UncountableKernel`` where
        loopy cannot count it (remembered: a failed program is not counted again)."""
        key = self._key(kernel, problem)
        if key in self._failed:
            raise UncountableKernel(self._failed[key])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # loopy's notes; approximations are in the stats
            try:
                program, sizes = self._program(kernel, problem)
                counted = self.cache.stats(program, self.subgroup_size)
            except UncountableKernel as exc:  # the cache's: counting raised
                self._failed[key] = str(exc)
                raise
            except ModelError:
                raise
            except Exception as exc:  # building the program raised (loopy's bare errors)
                first = str(exc).splitlines()[0] if str(exc) else ""
                self._failed[key] = f"loopy cannot build {kernel} ({type(exc).__name__}: {first})"
                raise UncountableKernel(self._failed[key]) from None
            missing = [p for p in counted.params if p not in sizes]
            unknown = [p for p in sizes if p not in counted.params]
            if missing or unknown:
                what = f"no size {unknown[0]}" if unknown else f"no value for size {missing[0]}"
                raise BadProblem(f"{kernel} {json.dumps(dict(problem))}: {what}; its sizes are "
                                 f"{', '.join(counted.params) or 'none'}")  # fmt: skip
            try:
                return counted.evaluate(sizes)
            except ExpressionError as exc:  # sizes outside its assumptions: the row is wrong
                raise BadProblem(f"{kernel} {json.dumps(dict(problem))}: {exc}") from None

    def _check_code(self, run: TimedKernel) -> None:
        """Refuse (skip) an application run whose code is not the built-in of its name: a
        kernel file named like one is stored under the same name, and would be counted and
        predicted as the built-in."""
        name = run.kernel.removeprefix(APPLICATION_PREFIX)
        if not run.is_application or not run.kernel_hash:
            return
        if name not in self._builtin:
            self._builtin[name] = _builtin_hash(name, run.kernel, run.problem)
        builtin = self._builtin[name]
        if builtin is not None and builtin != run.kernel_hash:
            raise ModelError(f"measured from other code than the built-in {name} (a kernel file "
                             "of that name); evaluate a file's measurements with 'perfport "
                             "model evaluate --calibration CAL --kernel FILE.py'")  # fmt: skip

    def usable(self, runs: Sequence[TimedKernel]) -> tuple[list[TimedKernel], tuple[Skipped, ...]]:
        """``runs`` split into those whose statistics can be computed and, per kernel and
        variant, those that cannot (unknown kernels, loopy failures), with the reason."""
        kept: list[TimedKernel] = []
        failed: dict[tuple[str, str], tuple[dict[str, Any], list[TimedKernel], str]] = {}
        for r in runs:
            try:
                self._check_code(r)
                self.stats(r.kernel, r.problem)
            except BadProblem as exc:
                raise BadProblem(f"{r.origin}: {exc}" if r.origin else str(exc)) from None
            except ModelError as exc:
                try:
                    variant = self._variant(r.kernel, r.problem)
                except ModelError:
                    variant = {}
                key = (r.kernel, Problem.of(variant).key)
                failed.setdefault(key, (variant, [], str(exc)))[1].append(r)
                continue
            kept.append(r)
        skipped = tuple(
            Skipped(kernel, variant, len(rs), why)
            for (kernel, _), (variant, rs, why) in sorted(failed.items())
        )
        return kept, skipped

    def measurements(
        self, model: Model, runs: Sequence[TimedKernel], features: FeatureSet | None = None
    ) -> list[Measurement]:
        """Calibration data: the model's input features of each run; output in seconds."""
        out = []
        for r in runs:
            try:
                inputs = input_features(model, self.stats(r.kernel, r.problem), features, r.device)
            except DomainError as exc:  # a feature of the user's that divides by 0 for it
                sizes = " ".join(f"{k}={v}" for k, v in r.problem.items())
                raise ModelError(f"{r.kernel} {sizes}: {exc}") from None
            out.append(Measurement(r.kernel, dict(r.problem), inputs, r.time_ms / 1e3))
        return out


def _builtin_hash(name: str, kernel: str, problem: Problem) -> str | None:
    """The source hash ``perfport model measure NAME`` stores for built-in application
    ``name``; None for another name, or where its code cannot be made here."""
    from perfport.model.apps import APPLICATIONS, load_program
    from perfport.model.measure import kernel_spec

    if name not in APPLICATIONS:
        return None
    try:
        # loopy's code does not depend on the problem; KernelSpec needs one to check its sizes
        return kernel_spec(load_program(name), kernel, problem).source_hash
    except Exception:  # loopy's bare errors: then the name alone decides, as before
        return None
