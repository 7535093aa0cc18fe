"""How well a calibration predicts a user's own loopy kernel, from its measurements in a store:
``perfport model evaluate --calibration CAL --kernel FILE.py``.

A loopy space file (``program(config)``; ``perfport tune FILE.py`` stores it under its name,
one result per configuration) or a loopy kernel file (``kernel`` or ``make_kernel()``;
``perfport model measure FILE.py`` stores it as ``app-<stem>``). Each measured configuration
at each problem is counted by loopy from the file as it is now and predicted by the
calibration; the report is ``evaluate``'s, one variant per configuration. Only results of the
file's current code count (a result's source hash names the code it ran), and only those on
the calibration's device; what is missing is a one-line ModelError naming the fix.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfport._core.errors import SpecError
from perfport._core.records import Config, Problem
from perfport._core.spec import KernelSpec
from perfport.kernels.loader import import_file
from perfport.model.calibrate import Calibration, predict
from perfport.model.dataset import APPLICATION_PREFIX, Skipped, fastest_by
from perfport.model.errors import ModelError
from perfport.model.evaluate import Evaluation, Point, Unpredictable, VariantResult, ranking
from perfport.model.model import input_features

KINDS = "a loopy space file (program(config)) or a loopy kernel file (kernel or make_kernel())"


@dataclass(frozen=True)
class UserKernel:
    """A user's loopy file as its measurements are stored: its name in the store, the source
    hash of its code at a problem, each configuration's program, and how to measure it."""

    path: str
    stored: str  # the kernel's name in the store
    label: str  # its variants' name in the report
    source_hash: Callable[[Problem], str]
    program: Callable[[Mapping[str, Any]], Any]
    measure: str  # the command that stores its measurements


@dataclass(frozen=True)
class _Row:
    fingerprint: str
    config: dict[str, Any]
    problem: Problem
    time_ms: float


def load_user_kernel(path: str) -> UserKernel:
    """The loopy file ``path`` as ``evaluate_kernel`` reads it (module docstring)."""
    file = Path(path)
    if file.suffix != ".py" or not file.is_file():
        raise ModelError(f"--kernel {path}: no such .py file; give {KINDS}")
    has = vars(import_file(file))
    if "kernel" not in has and callable(has.get("program")):
        from perfport.model.tunable import loopy_space, loopy_spec

        space = loopy_space(path)
        code = loopy_spec(path).source_hash
        return UserKernel(path, space.name, space.name, lambda _: code,
                          lambda config: space.program(dict(config)),
                          f"perfport tune {path} --db DB")  # fmt: skip
    if isinstance(has.get("kernel"), KernelSpec) or not (
        has.get("kernel") or has.get("make_kernel")
    ):
        raise ModelError(f"--kernel {path}: not a loopy file, so loopy cannot count it; give "
                         f"{KINDS} (docs/model.md)")  # fmt: skip
    from perfport.model.apps import load_program
    from perfport.model.measure import kernel_spec

    program = load_program(path)
    stored = APPLICATION_PREFIX + file.stem  # as 'perfport model measure' names it
    measure = f"perfport model measure {path} --sizes N=V1,V2 --db DB"

    def digest(problem: Problem) -> str:
        # loopy's code does not depend on the problem; KernelSpec needs one to check its sizes
        return kernel_spec(program, stored, problem).source_hash

    return UserKernel(path, stored, file.stem, digest, lambda _: program, measure)


def _rows(kernel: UserKernel, calibration: Calibration, db: str | Path) -> list[_Row]:
    """The fastest ok result of each configuration and problem of ``kernel``'s current code
    on the calibration's device."""
    from perfport.store import ReadOnlyStore
    from perfport.store.queries import export_rows

    how = kernel.measure.replace("DB", str(db))
    if not Path(db).is_file():
        raise ModelError(f"{db}: no such database; give --db the one {how.split(' --')[0]!r} "
                         "stored its measurements in")  # fmt: skip
    with ReadOnlyStore(db) as store:
        rows = [r for r in export_rows(store, kernel=kernel.stored)
                if r.kernel == kernel.stored and r.ok and r.median_ms]  # fmt: skip
    if not rows:
        raise ModelError(f"no measurements of {kernel.stored} in {db}; measure it first: {how}")
    digest = kernel.source_hash(rows[0].problem)
    rows = [r for r in rows if r.kernel_hash == digest]
    if not rows:
        raise ModelError(f"{db} holds {kernel.stored} only as measured from other code than "
                         f"{kernel.path} has now; measure it again: {how}")  # fmt: skip
    mine = [r for r in rows if r.device == calibration.device]
    if not mine:
        devices = ", ".join(sorted({repr(r.device) for r in rows}))
        raise ModelError(
            f"the calibration is for device {calibration.device!r}, but {db} holds "
            f"{kernel.stored} only on {devices}; give a calibration of that device ('perfport "
            f"model calibrate MODEL.json --device ID --db {db} --out FILE') or measure it on "
            f"{calibration.device!r}"
        )
    runs = (_Row(r.device_fingerprint, dict(r.config), r.problem, float(r.median_ms or 0))
            for r in mine)  # fmt: skip
    best = fastest_by(runs, lambda r: (r.fingerprint, Config.of(r.config).key, r.problem.key),
                      lambda r: r.time_ms)  # fmt: skip
    return sorted(best, key=lambda r: (r.fingerprint, sorted(r.config.items()), r.problem.key))


def _variant(kernel: UserKernel, config: Mapping[str, Any]) -> str:
    return " ".join([kernel.label, *(f"{k}={v}" for k, v in sorted(config.items()))])


def evaluate_kernel(
    kernel: UserKernel, calibration: Calibration, db: str | Path, cache: Any,
    on_stats: Callable[[Any], None] | None = None,
) -> Evaluation:  # fmt: skip
    """``calibration``'s predictions of every measurement of ``kernel`` in ``db`` (on the
    calibration's device), against the times measured: ``evaluate``'s report, each
    configuration a variant; those loopy cannot count are ``skipped``, those the calibration
    cannot predict ``unpredictable``; ``on_stats`` is given each point's statistics."""
    points: dict[tuple[str, str], list[Point]] = defaultdict(list)
    refused: dict[tuple[str, str], tuple[list[dict[str, Any]], str]] = {}
    failed: dict[str, tuple[dict[str, Any], int, str]] = {}
    for r in _rows(kernel, calibration, db):
        name = _variant(kernel, r.config)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # loopy's notes; approximations are in the stats
                stats = cache.stats(kernel.program(r.config)).evaluate(dict(r.problem))
        except (ModelError, SpecError) as exc:  # loopy cannot build or count it
            _, n, _ = failed.get(name, (r.config, 0, ""))
            failed[name] = (r.config, n + 1, str(exc))
            continue
        if on_stats is not None:
            on_stats(stats)
        try:
            inputs = input_features(calibration.model, stats, device=calibration.device)
            prediction = predict(calibration, inputs)
        except ModelError as exc:
            refused.setdefault((r.fingerprint, name), ([], str(exc)))[0].append(dict(r.problem))
            continue
        point = Point(dict(r.problem), r.time_ms, prediction.value * 1e3,
                      tuple(prediction.terms.items()))  # fmt: skip
        points[r.fingerprint, name].append(point)
    device = calibration.device
    results = [VariantResult(name, device, fp, tuple(pts)) for (fp, name), pts in points.items()]
    unpredictable = [Unpredictable(name, device, fp, tuple(sizes), why)
                     for (fp, name), (sizes, why) in refused.items()]  # fmt: skip
    skipped = tuple(Skipped(kernel.stored, config, n, why) for config, n, why in failed.values())
    if not results:
        first = unpredictable[0].reason if unpredictable else skipped[0].reason
        raise ModelError(f"no measurement of {kernel.stored} can be predicted: {first}")
    pairs, misranked = ranking(results)
    return Evaluation(tuple(results), (calibration,), (device,), pairs, misranked,
                      tuple(unpredictable), skipped)  # fmt: skip
