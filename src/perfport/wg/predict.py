"""Predict a work-group size for a stencil scenario (kernel, problem, device), including ones
never measured: features from the kernel's compiled code and the device's queries, a trained
model, and the sizes this device has refused for this kernel before (from the store)."""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import DeviceInfo, KernelSpec, PerfportError, SpecError
from perfport._core.problem_check import resolve_problem
from perfport.features import FEATURE_NAMES, FeatureCache, dataset_features, scenario_features
from perfport.space import Constraint, Space, spec_device_constraints
from perfport.store import Store, refused_configs
from perfport.wg.model import WgModel
from perfport.wg.predictors.novelty import NoveltyExplanation


@dataclass(frozen=True)
class WgPrediction:
    wg: tuple[int, int]
    method: str
    predict_ms: float
    refused_known: int  # sizes excluded because this device refused them for this kernel
    # Whether the kernel is unlike every kernel the model saw on this device, or the device is
    # one it never saw (the answer then leans on a best fixed size); None for a method without
    # that test.
    novel: bool | None = None
    # The novelty test's working (p-value, the device's training scenarios it compared with);
    # None for a method without that test.
    novelty: NoveltyExplanation | None = None
    # Why ``wg`` is not the model's own choice (None: it is).
    fallback: Fallback | None = None

    def to_json(self) -> dict[str, Any]:
        return {"wg": list(self.wg), "method": self.method, "predict_ms": self.predict_ms,
                "refused_known": self.refused_known, "novel": self.novel,
                "novelty": None if self.novelty is None else self.novelty.to_json(),
                "fallback": None if self.fallback is None else self.fallback.to_json()}  # fmt: skip


class FallbackReason(Enum):
    """Why the model's own choice could not be the answer."""

    REFUSED = "refused"  # the store has seen the device refuse it for this kernel
    DEVICE = "device"  # beyond the device's limits for this kernel (or the kernel's rules)
    SHAPE = "shape"  # wider or taller than the data
    OTHER = "other"  # usable, but the fallback among the usable sizes chose another


@dataclass(frozen=True)
class Fallback:
    """The model's own choice (its answer with every size allowed), replaced by ``wg``."""

    model_wg: tuple[int, int]
    reason: FallbackReason
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"model_wg": list(self.model_wg), "reason": self.reason.value,
                "message": self.message}  # fmt: skip


def refused_sizes(
    db: str | Path | Store, spec: KernelSpec, device: DeviceInfo
) -> set[tuple[int, int]]:
    """(wc, wr) sizes the store has seen refused for this kernel on this device. ``db`` is a
    path (opened and closed here) or an open store (a daemon keeps one per thread: opening
    one costs more than the query)."""
    if isinstance(db, Store):
        return _refused(db, spec, device)
    if not Path(db).is_file():
        return set()
    with Store(db, create=False) as store:
        return _refused(store, spec, device)


def _refused(store: Store, spec: KernelSpec, device: DeviceInfo) -> set[tuple[int, int]]:
    # A local device counts only its own launches, never refusals a daemon's client reported.
    configs = refused_configs(
        store, device.fingerprint, spec.source_hash, reported=device.described_by_client
    )
    return {(int(c["wc"]), int(c["wr"])) for c in configs}


def check_model_features(model: WgModel) -> tuple[str, ...]:
    """The model's feature names, where perfport can compute them all for a new scenario (a
    model trained on Cummins' pilot data cannot predict one); else PerfportError."""
    names = tuple(model.feature_names)
    unknown = list(dict.fromkeys(n for n in names if n not in FEATURE_NAMES))
    if unknown:
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        raise PerfportError(
            f"the model expects other features: {', '.join(map(repr, unknown[:3]))}{more} "
            f"(of its {len(names)}) are none of the {len(FEATURE_NAMES)} perfport computes; "
            "train it on a perfport dataset"
        )
    return names


@functools.lru_cache(maxsize=1024)
def _constraints(
    spec: KernelSpec, device: DeviceInfo
) -> tuple[tuple[Constraint, ...], frozenset[str]]:
    """The kernel's restrictions and the device's limits, as ``kernel_space`` builds them,
    parsed once per kernel and device; and the problem names they (and the kernel's derived
    values) read, which alone decide the legal sizes."""
    constraints = (
        *(Constraint.of(r) for r in spec.restrictions),
        *spec_device_constraints(spec, device),
    )
    names = set().union(*(c.names for c in constraints), *(e.names for _, e in spec.derived_exprs))
    names -= {p.name for p in spec.params} | {name for name, _ in spec.derived_exprs}
    return constraints, frozenset(names)


def legal_sizes(
    spec: KernelSpec, problem: Mapping[str, Any], device: DeviceInfo
) -> tuple[np.ndarray, np.ndarray]:
    """(wc, wr) arrays of the sizes legal for the scenario: ``kernel_space``'s configurations.
    Remembered per kernel, device and the values of the problem names the constraints read
    (a stencil's sizes do not depend on its width and height: its global size is rounded up),
    so a first-time question about a new data size does not enumerate the space again."""
    _, names = _constraints(spec, device)
    env = spec.env({}, spec.problem.merged(problem))
    return _legal_sizes(spec, device, tuple(sorted((n, env[n]) for n in names if n in env)))


@functools.lru_cache(maxsize=4096)
def _legal_sizes(
    spec: KernelSpec, device: DeviceInfo, values: tuple[tuple[str, Any], ...]
) -> tuple[np.ndarray, np.ndarray]:
    constraints, _ = _constraints(spec, device)
    columns = Space(spec.params, constraints, dict(values), spec.derived_exprs).columns()
    out = tuple(np.asarray(columns[n], dtype=np.int64) for n in ("wc", "wr"))
    for array in out:
        array.setflags(write=False)  # shared by every caller
    return out[0], out[1]


def data_extent(spec: KernelSpec, problem: Mapping[str, Any]) -> tuple[int, ...]:
    """The work-items the data needs in each dimension (a stencil's width and height): the
    global size with a work-group of 1."""
    env = spec.env({p.name: 1 for p in spec.params}, spec.problem.merged(problem))
    return tuple(int(e.value(env)) for e in spec.global_exprs)


def _caps(spec: KernelSpec, problem: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """(parameter, cap) for each work-group dimension the data limits: the largest extent
    worth launching, the data's extent rounded up to the parameter's next value (a group of
    256 columns on data 1 column wide leaves 255 idle in every group)."""
    values = {p.name: sorted(int(v) for v in p.values) for p in spec.params}
    caps = []
    for name, extent in zip(spec.local_size, data_extent(spec, problem), strict=True):
        above = [v for v in values.get(name, ()) if v >= extent]
        if above and above[0] < values[name][-1]:  # else every value fits
            caps.append((name, above[0]))
    return tuple(caps)


def scenario_sizes(
    spec: KernelSpec, problem: Mapping[str, Any], device: DeviceInfo
) -> tuple[np.ndarray, np.ndarray]:
    """``legal_sizes`` less the sizes wider or taller than the data (rounded up to the next
    size the parameter has, so 1 for data 1 wide): what a prediction chooses from. Where no
    legal size fits the data (a kernel rule against small groups), the legal sizes: such a
    size runs, with idle work-items."""
    _, names = _constraints(spec, device)
    env = spec.env({}, spec.problem.merged(problem))
    values = tuple(sorted((n, env[n]) for n in names if n in env))
    return _fitting(spec, device, values, _caps(spec, problem))


@functools.lru_cache(maxsize=4096)
def _fitting(
    spec: KernelSpec,
    device: DeviceInfo,
    values: tuple[tuple[str, Any], ...],
    caps: tuple[tuple[str, int], ...],
) -> tuple[np.ndarray, np.ndarray]:
    wc, wr = _legal_sizes(spec, device, values)
    if not caps:
        return wc, wr
    sizes = {"wc": wc, "wr": wr}
    keep = np.ones(len(wc), dtype=bool)
    for name, cap in caps:
        keep &= sizes[name] <= cap
    if not keep.any():
        return wc, wr
    out = (wc[keep], wr[keep])
    for array in out:
        array.setflags(write=False)  # shared by every caller
    return out


def _member(sizes: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """(len(sizes),) bool: each (wc, wr) row of ``sizes`` is one of ``pairs``."""
    sizes, pairs = np.asarray(sizes, dtype=np.int64), np.asarray(pairs, dtype=np.int64)
    if not len(pairs):
        return np.zeros(len(sizes), dtype=bool)
    wanted = np.sort(pairs[:, 0] << 32 | pairs[:, 1])  # searchsorted: np.isin sorts both
    codes = sizes[:, 0] << 32 | sizes[:, 1]
    at = np.minimum(np.searchsorted(wanted, codes), len(wanted) - 1)
    return wanted[at] == codes


def check_scenario(
    spec: KernelSpec, problem: Mapping[str, Any], device: DeviceInfo
) -> tuple[np.ndarray, np.ndarray]:
    """SpecError (one line) unless ``spec`` is a stencil with work-group parameters, the
    problem's data has a usable shape and some work-group size is legal for it on ``device``:
    what a prediction needs, checked before any model is loaded or trained. Returns the sizes
    to choose from (``scenario_sizes``), which ``predict_wg`` can then be given."""
    if {p.name for p in spec.params} != {"wc", "wr"}:
        raise SpecError(f"kernel {spec.name} is not a stencil with work-group parameters wc and wr")
    # As the CLI checks it: a misspelt name ('widht') was answered for the default width.
    problem = resolve_problem(spec, problem)
    dataset_features(spec, problem)  # checks the shape
    if not len(legal_sizes(spec, problem, device)[0]):
        raise SpecError(
            f"no work-group size of {spec.name} is legal for this problem on {device.id}; "
            + _why_none(spec, problem, device)
        )
    return scenario_sizes(spec, problem, device)


def _why_none(spec: KernelSpec, problem: Mapping[str, Any], device: DeviceInfo) -> str:
    """Whether the kernel's own restrictions or the device's limits left no size: the fix
    differs (other problem values, or another device)."""
    env = spec.env({}, spec.problem.merged(problem))
    own = Space(spec.params, [Constraint.of(r) for r in spec.restrictions], env, spec.derived_exprs)
    if len(own):
        return (
            f"the device's limits leave none (max work-group size {device.max_work_group_size}, "
            f"work-item sizes {list(device.max_work_item_sizes)}, local memory "
            f"{device.local_mem_bytes} bytes); ask for another device"
        )
    rules = "; ".join(spec.describe()["restrictions"]) or "none"
    return f"check the problem values against the kernel's restrictions: {rules}"


def predict_wg(
    model: WgModel,
    spec: KernelSpec,
    problem: Mapping[str, Any],
    device: DeviceInfo,
    refused: AbstractSet[tuple[int, int]] = frozenset(),
    feature_cache: FeatureCache | None = None,
    *,
    checked: bool = False,
    legal: tuple[np.ndarray, np.ndarray] | None = None,
) -> WgPrediction:
    """A size that is legal for the scenario (within the device's and kernel's limits) and not
    known to be refused. The kernel's instruction counts come from ``feature_cache`` when it
    holds them, else from a PoCL compile (stored there); a model trained on
    ``COMPILE_FREE_FEATURES`` alone needs no compile at all. ``checked``: the caller has
    passed the scenario through ``check_scenario`` already (a daemon does, before storing),
    and ``legal`` is what it returned, if given (looking the sizes up again costs a daemon
    more than the model does)."""
    started = time.perf_counter()
    if not checked:
        legal = check_scenario(spec, problem, device)
    question = WgQuestion(spec, problem, device, refused, legal)
    x, max_wg, excluded = _prepared(model, question, feature_cache)
    w, own = model.predictor.propose_own(x, max_wg, excluded)
    return _finished(model, x, w, own, question, started)


_UNANSWERED = PerfportError("the predictor gave no answer")  # replaced before returning


@dataclass(frozen=True)
class WgQuestion:
    """One scenario of ``predict_wg_many``: ``predict_wg``'s arguments, checked
    (``check_scenario``) by the caller, ``legal`` what that returned (None: looked up)."""

    spec: KernelSpec
    problem: Mapping[str, Any]
    device: DeviceInfo
    refused: AbstractSet[tuple[int, int]] = frozenset()
    legal: tuple[np.ndarray, np.ndarray] | None = None


def predict_wg_many(
    model: WgModel, questions: Sequence[WgQuestion], feature_cache: FeatureCache | None = None
) -> list[WgPrediction | Exception]:
    """``predict_wg`` (checked) for each question, with the same answers, the predictor asked
    once for all of them (``propose_many``): a daemon answers the questions that arrive
    together in one call. A question that fails (its features, no size left) gets its
    exception in its place and the others their answers. ``predict_ms`` of each is the
    whole call's time."""
    started = time.perf_counter()
    # Each question's failure, or its place among those the predictor answers.
    out: list[WgPrediction | Exception] = []
    prepared: list[tuple[int, np.ndarray, int, set[int]]] = []
    for q in questions:
        try:
            x, max_wg, excluded = _prepared(model, q, feature_cache)
        except Exception as exc:  # this question's own failure, handed back to its asker
            out.append(exc)
        else:
            prepared.append((len(out), x, max_wg, excluded))
            out.append(_UNANSWERED)
    if prepared:
        rows = np.array([x for _, x, _, _ in prepared])
        chosen = model.predictor.propose_many_own(
            rows, [m for _, _, m, _ in prepared], [e for _, _, _, e in prepared]
        )
        for (i, x, _, _), (w, own) in zip(prepared, chosen, strict=True):
            out[i] = _finished(model, x, w, own, questions[i], started)
    return out


def _prepared(
    model: WgModel, q: WgQuestion, feature_cache: FeatureCache | None
) -> tuple[np.ndarray, int, set[int]]:
    """A checked scenario's features, largest usable work-group and the model's columns it
    may not propose (illegal, too large for the data, or refused)."""
    names = check_model_features(model)
    features = scenario_features(q.spec, q.problem, q.device, feature_cache, names)
    wc_legal, wr_legal = (
        q.legal if q.legal is not None else scenario_sizes(q.spec, q.problem, q.device)
    )
    allowed = _member(model.sizes, np.column_stack([wc_legal, wr_legal]))
    if q.refused:
        refused = np.array(sorted(q.refused), dtype=np.int64).reshape(-1, 2)
        allowed &= ~_member(model.sizes, refused)
    if not allowed.any():
        raise PerfportError(
            f"none of the model's sizes is legal for {q.spec.name} on {q.device.id}"
        )
    max_wg = int((wc_legal * wr_legal).max())
    return features.as_array(), max_wg, set(np.flatnonzero(~allowed).tolist())


def _finished(
    model: WgModel, x: np.ndarray, w: int, own: int, q: WgQuestion, started: float
) -> WgPrediction:
    wc, wr = (int(v) for v in np.asarray(model.sizes[w]))
    novelty = getattr(model.predictor, "novelty_", None)  # performance_forest+novel
    why = None if novelty is None else novelty.explain(x)
    fallback = None if own == w else _fallback(model, own, q)
    return WgPrediction(
        (wc, wr), model.method, (time.perf_counter() - started) * 1000.0, len(q.refused),
        None if why is None else why.novel, why, fallback,
    )  # fmt: skip


def _fallback(model: WgModel, own: int, q: WgQuestion) -> Fallback:
    """Why the model's own choice (column ``own``) was not the answer."""
    wc, wr = (int(v) for v in np.asarray(model.sizes[own]))
    size = np.array([[wc, wr]], dtype=np.int64)
    if (wc, wr) in q.refused:
        return Fallback((wc, wr), FallbackReason.REFUSED,
                        f"{wc}x{wr} was refused by this device for {q.spec.name} before")  # fmt: skip
    if not _member(size, np.column_stack(legal_sizes(q.spec, q.problem, q.device)))[0]:
        return Fallback((wc, wr), FallbackReason.DEVICE,
                        f"{wc}x{wr} is beyond what {q.spec.name} may use on this device "
                        f"(max work-group {q.device.max_work_group_size}, its local memory)")  # fmt: skip
    if not _member(size, np.column_stack(scenario_sizes(q.spec, q.problem, q.device)))[0]:
        extent = "x".join(map(str, data_extent(q.spec, q.problem)))
        return Fallback((wc, wr), FallbackReason.SHAPE,
                        f"{wc}x{wr} is wider or taller than the data ({extent})")  # fmt: skip
    return Fallback((wc, wr), FallbackReason.OTHER,
                    f"{wc}x{wr} was usable; the fallback among the usable sizes chose another")  # fmt: skip
