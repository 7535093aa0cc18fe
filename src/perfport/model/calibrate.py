"""Calibration (section 7.2): fit a model's parameters to measurements by Levenberg-Marquardt
with the symbolic Jacobian (scipy, the ``model`` extra), and prediction with the result.

As in the paper, the fit minimises relative, not absolute, error by default: each residual
(and Jacobian row) is divided by its measured output. (Dividing the features instead, as
perfport once did, is the same only for models of degree one in their features: a product
such as the paper's ``p_barrier * f_sync_barrier_local * f_thread_groups`` was divided twice.)

A physical cost cannot be negative, but an unconstrained fit gives one where the measurements
do not separate two costs. With ``nonnegative`` the fit is done again, only when Levenberg-
Marquardt gave a negative cost, by scipy's trust-region reflective method with every cost
parameter bounded below by 0 (shape parameters, a step's steepness, stay unbounded).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core.optional import require
from perfport.model import fields
from perfport.model.errors import ModelError
from perfport.model.expression import DomainError, Formula
from perfport.model.inform import reason, uninformed
from perfport.model.model import FORMAT as MODEL_FORMAT
from perfport.model.model import Model

FORMAT = "perfport-calibration/1"


@dataclass(frozen=True)
class Measurement:
    """One measured kernel run: its input features and the output (e.g. seconds)."""

    kernel: str
    sizes: Mapping[str, Any]
    features: Mapping[str, float]
    output: float


@dataclass(frozen=True)
class Calibration:
    """Fitted parameters of a model on a device. ``residual`` is the 2-norm of the (scaled)
    residuals at the solution, ``residuals`` one per measurement; ``nonnegative`` says whether
    every cost parameter came out >= 0 (a negative cost means the model or the measurements
    do not separate that cost)."""

    model: Model
    device: str
    parameters: Mapping[str, float]
    residual: float
    residuals: tuple[float, ...]
    n_measurements: int
    nonnegative: bool
    negative: tuple[str, ...]
    scaled: bool
    iterations: int
    # Parameters no measurement informed, pinned at 0 (only with ``allow_uninformed``), each
    # with the one-line reason; ``predict`` refuses a kernel whose time would depend on one.
    uninformed: Mapping[str, str] = field(default_factory=dict)
    # Whether the bounded (trust-region reflective) fit replaced an unconstrained one, the
    # cost parameters it left at their bound 0, and those the unconstrained fit made negative.
    bounded: bool = False
    at_bound: tuple[str, ...] = ()
    unbounded_negative: tuple[str, ...] = ()
    # The sub-group width the measurements were counted with (None: a file that does not
    # say), so that a prediction counts its kernel alike.
    subgroup_size: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "model": self.model.to_json(),
            "device": self.device,
            "parameters": dict(self.parameters),
            "residual": self.residual,
            "residuals": list(self.residuals),
            "n_measurements": self.n_measurements,
            "nonnegative": self.nonnegative,
            "negative": list(self.negative),
            "scaled": self.scaled,
            "iterations": self.iterations,
            "uninformed": dict(self.uninformed),
            "bounded": self.bounded,
            "at_bound": list(self.at_bound),
            "unbounded_negative": list(self.unbounded_negative),
            **({} if self.subgroup_size is None else {"subgroup_size": self.subgroup_size}),
        }

    @staticmethod
    def from_json(data: Any) -> Calibration:
        if isinstance(data, Mapping) and data.get("format") == MODEL_FORMAT:
            # the step users skip: a model has no costs until it is fitted to a device
            raise ModelError(
                "a model file, not a calibration: fit it first with 'perfport model calibrate "
                "MODEL.json --db DB --out CALIBRATION.json'"
            )
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ModelError(f"not a perfport calibration file (expected format {FORMAT!r})")
        try:
            model = Model.from_json(data["model"])
            parameters = fields.numbers(data["parameters"], "parameters", '{"p_launch": 4e-07}')
            if set(parameters) != set(model.parameters):
                raise ValueError("its parameters are not the model's")
            bad = [p for p, v in parameters.items() if not np.isfinite(v)]
            if bad:
                raise ValueError(f"parameter {bad[0]} is {parameters[bad[0]]}, not a number")
            uninformed = fields.mapping(data.get("uninformed", {}), "uninformed", '{"p_x": "why"}')
            return Calibration(
                model=model,
                device=str(data["device"]),
                parameters=parameters,
                residual=fields.number(data["residual"], "residual"),
                residuals=fields.numbers_list(data["residuals"], "residuals"),
                n_measurements=fields.integer(data["n_measurements"], "n_measurements"),
                nonnegative=fields.boolean(data["nonnegative"], "nonnegative"),
                negative=fields.names(data["negative"], "negative"),
                scaled=fields.boolean(data["scaled"], "scaled"),
                iterations=fields.integer(data["iterations"], "iterations"),
                uninformed={str(k): str(v) for k, v in uninformed.items()},
                bounded=fields.boolean(data.get("bounded", False), "bounded"),
                at_bound=fields.names(data.get("at_bound", []), "at_bound"),
                unbounded_negative=fields.names(
                    data.get("unbounded_negative", []), "unbounded_negative"
                ),
                subgroup_size=_width(data.get("subgroup_size")),
            )
        except KeyError as exc:
            raise ModelError(
                f"calibration file: missing or bad field (no {exc} field); calibrate again"
            ) from None
        except (TypeError, ValueError) as exc:
            raise ModelError(
                f"calibration file: missing or bad field ({exc}); calibrate again"
            ) from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @staticmethod
    def load(path: str | Path) -> Calibration:
        try:
            return Calibration.from_json(json.loads(Path(path).read_text()))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # a binary file: not UTF-8
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
            raise ModelError(f"{path}: not JSON ({reason}); give a calibration file") from None
        except OSError as exc:  # a missing file was a raw FileNotFoundError
            raise ModelError(
                f"{path}: cannot be read ({exc.strerror}); give the file 'perfport model "
                "calibrate --out' wrote"
            ) from None


def _matrix(
    model: Model, data: Sequence[Measurement], scale: bool
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The feature columns, the outputs and each row's weight (1 / output when ``scale``)."""
    if len(data) < len(model.parameters):
        raise ModelError(
            f"{len(data)} measurements cannot fix {len(model.parameters)} parameters; give at "
            f"least {len(model.parameters)}, each varying the features"
        )
    outputs = np.array([m.output for m in data], dtype=float)
    if not np.all(np.isfinite(outputs)) or (scale and np.any(outputs <= 0)):
        raise ModelError("every measured output must be a finite, positive number; drop the others")
    columns = {}
    for name in model.features:
        missing = [m.kernel for m in data if name not in m.features]
        if missing:
            raise ModelError(f"measurement of {missing[0]} has no value for {name}; gather it")
        columns[name] = np.array([m.features[name] for m in data], dtype=float)
    return columns, outputs, (1.0 / outputs if scale else np.ones_like(outputs))


def _fit(
    model: Model,
    columns: dict[str, np.ndarray],
    target: np.ndarray,
    weight: np.ndarray,
    start: Mapping[str, float],
    pinned: Mapping[str, float],
    max_evaluations: int | None,
    bounded: bool = False,
) -> tuple[dict[str, float], Any]:
    """Levenberg-Marquardt over the parameters not ``pinned``; with ``bounded``, trust-region
    reflective with the cost parameters bounded below by 0 (LM takes no bounds)."""
    optimize = require("scipy.optimize", "model", "Model calibration")
    names = model.parameters
    free = [p for p in names if p not in pinned]
    if not free:
        raise ModelError("no parameter of the model is informed by the measurements; measure "
                         "kernels with its features")  # fmt: skip
    index = [names.index(p) for p in free]

    def params(x: np.ndarray) -> dict[str, float]:
        return {**pinned, **dict(zip(free, (float(v) for v in x), strict=True))}

    def residuals(x: np.ndarray) -> np.ndarray:
        # A trial step may land outside the formula's domain: inf or NaN, for the fit to judge.
        values = model.evaluate(params(x), columns, strict=False)
        with np.errstate(all="ignore"):  # inf past float range: the fit and checks judge it
            return (
                np.broadcast_to(np.asarray(values, dtype=float), target.shape) - target
            ) * weight

    def jacobian(x: np.ndarray) -> np.ndarray:
        return model.jacobian(params(x), columns)[:, index] * weight[:, None]

    lower = np.array([0.0 if p in model.cost_parameters else -np.inf for p in free])
    x0 = np.array([start[p] for p in free], dtype=float)
    # The bounded fit works on parameters divided by their starting magnitudes (costs of
    # 1e-12 s otherwise fall inside trf's absolute tolerance of its bounds: every one of them
    # would count as "at 0").
    unit = np.where(np.abs(x0) > 0, np.abs(x0), 1.0) if bounded else np.ones_like(x0)
    if bounded:
        x0 = np.maximum(x0, lower)
    if not np.all(np.isfinite(residuals(x0))):
        raise ModelError(
            "the model is not finite at its starting values; give other initial values"
        )
    # Steps past float range overflow inside scipy (RuntimeWarnings): the checks below judge
    # the result, in one line, so the warnings would only bury it.
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = optimize.least_squares(
            lambda u: residuals(u * unit),
            x0 / unit,
            jac=lambda u: jacobian(u * unit) * unit,
            method="trf" if bounded else "lm",
            bounds=(lower, np.inf) if bounded else (-np.inf, np.inf),
            x_scale="jac",
            max_nfev=max_evaluations or 2000 * (len(free) + 1),
        )
    fit.x = fit.x * unit
    if fit.status <= 0 or not np.all(np.isfinite(fit.x)):
        raise ModelError(
            f"calibration did not converge ({fit.message}); give measurements that vary each "
            "feature independently, or initial values near the answer"
        )
    # As for uninformed parameters: dependent at the start and at the fit, so that a step
    # saturated at the fit (an overlap model's) does not pass for terms the data never part.
    at_start = set(_tied(free, jacobian(x0)))
    tied = [p for p in _tied(free, jacobian(fit.x)) if p in at_start]
    if tied:
        raise ModelError(
            f"calibration did not converge ({', '.join(tied)} cannot be told apart: their terms "
            "vary together over every measurement); measure kernels that separate them, or "
            "drop all but one of those terms"
        )
    _refuse_worse_than_zero(fit.fun, target * weight)
    return params(fit.x), fit


def _refuse_worse_than_zero(residuals: np.ndarray, scaled_target: np.ndarray) -> None:
    """A fit whose residual is worse than predicting 0 everywhere has not converged."""
    zero = float(np.linalg.norm(scaled_target))
    if np.linalg.norm(residuals) > zero * (1 + 1e-9):
        raise ModelError(
            f"calibration did not converge (its residual {np.linalg.norm(residuals):.3g} is "
            f"worse than predicting 0, {zero:.3g}); give initial values near the answer, or "
            "measurements that vary each feature independently"
        )


# A normalised Jacobian's singular value below this is a dependence among its columns (exact
# ones are ~1e-16; the shipped calibrations' smallest is ~1e-3).
_TIED = 1e-9


def _tied(names: Sequence[str], jac: np.ndarray) -> tuple[str, ...]:
    """The parameters whose Jacobian columns are linearly dependent (two terms the data never
    vary apart): least squares fixes only a combination of them, each value is arbitrary.
    Zero columns are left to ``uninformed``."""
    norms = np.linalg.norm(jac, axis=0)
    live = [i for i, n in enumerate(norms) if np.isfinite(n) and n > 0]
    if len(live) < 2:
        return ()
    _, sv, vt = np.linalg.svd(jac[:, live] / norms[live], full_matrices=True)
    sv = np.concatenate([sv, np.zeros(len(live) - len(sv))])  # fewer rows than columns
    null = np.abs(vt[sv < _TIED * sv[0]])
    if not len(null):
        return ()
    involved = np.any(null > 0.05 * null.max(axis=1, keepdims=True), axis=0)
    return tuple(names[live[i]] for i in np.flatnonzero(involved))


def calibrate(
    model: Model,
    data: Sequence[Measurement],
    device: str = "",
    scale: bool = True,
    initial: Mapping[str, float] | None = None,
    max_evaluations: int | None = None,
    allow_uninformed: bool = False,
    nonnegative: bool = False,
) -> Calibration:
    """Least-squares parameters of ``model`` on ``data`` (Levenberg-Marquardt, scipy), at
    most ``max_evaluations`` model evaluations (default 2000 per parameter). With
    ``nonnegative``, a fit that gives a negative cost is done again with every cost bounded
    below by 0 (``bounded``; ``at_bound`` names the costs left at 0).

    A parameter no measurement informs is refused with a one-line error naming it and the
    collection that would inform it; with ``allow_uninformed`` it is pinned at 0 instead,
    listed in ``uninformed``, and ``predict`` refuses the kernels it would matter for."""
    if not model.parameters:  # nothing to fit, whatever was measured
        raise ModelError("the model has no p_ parameter to fit; write each cost as a p_ "
                         "parameter times its feature, e.g. p_group * f_thread_groups")  # fmt: skip
    columns, target, weight = _matrix(model, data, scale)
    start = {**{p: 1.0 for p in model.parameters}, **model.initial, **(initial or {})}
    try:
        model.evaluate(start, columns)
    except DomainError as exc:  # a feature that is 0 for a kernel: no start value helps
        m = data[exc.row]
        sizes = " ".join(f"{k}={v}" for k, v in m.sizes.items())
        raise ModelError(f"cannot calibrate: at {m.kernel} {sizes}".rstrip() + f", {exc}") from None
    fitted, fit = _fit(model, columns, target, weight, start, {}, max_evaluations)
    blind = (
        uninformed(model, columns, [start, fitted]) if uninformed(model, columns, [start]) else ()
    )
    reasons = {p: reason(model, p, columns) for p in blind}
    if blind and not allow_uninformed:
        raise ModelError(reasons[blind[0]])
    pinned = dict.fromkeys(blind, 0.0)
    if blind:
        fitted, fit = _fit(model, columns, target, weight, start, pinned, max_evaluations)
    unbounded_negative = _negative(model, fitted, blind)
    bounded = nonnegative and bool(unbounded_negative)
    if bounded:
        fitted, fit = _fit(
            model, columns, target, weight, fitted, pinned, max_evaluations, bounded=True
        )
    negative = _negative(model, fitted, blind)
    return Calibration(
        model=model,
        device=device,
        parameters={p: float(fitted[p]) for p in model.parameters},
        residual=float(np.linalg.norm(fit.fun)),
        residuals=tuple(float(r) for r in fit.fun),
        n_measurements=len(data),
        nonnegative=not negative,
        negative=negative,
        scaled=scale,
        iterations=int(fit.nfev),
        uninformed=reasons,
        bounded=bounded,
        at_bound=_at_bound(model, fit, pinned) if bounded else (),
        unbounded_negative=unbounded_negative,
    )


def _at_bound(model: Model, fit: Any, pinned: Mapping[str, float]) -> tuple[str, ...]:
    """The free parameters the bounded fit left on their bound (its active set)."""
    free = [p for p in model.parameters if p not in pinned]
    return tuple(p for p, a in zip(free, fit.active_mask, strict=True) if a != 0)


def _negative(model: Model, fitted: Mapping[str, float], blind: Sequence[str]) -> tuple[str, ...]:
    return tuple(p for p in model.cost_parameters if p not in blind and fitted[p] < 0)


@dataclass(frozen=True)
class Prediction:
    """The model's output for one kernel and size, and each top-level term's share of it."""

    value: float
    terms: Mapping[str, float]


def predict(calibration: Calibration, features: Mapping[str, float]) -> Prediction:
    """The calibrated model at one kernel's features; a one-line error if its time depends
    on a parameter no measurement informed."""
    model = calibration.model
    if calibration.uninformed:
        with np.errstate(all="ignore"):
            jac = model.jacobian(calibration.parameters, features)[0]
        for p, d in zip(model.parameters, jac, strict=True):
            if p in calibration.uninformed and d != 0:
                raise ModelError(f"cannot predict: {calibration.uninformed[p]}")
    env = {**features, **calibration.parameters}
    try:
        with np.errstate(all="ignore"):
            value = float(model.evaluate(calibration.parameters, features))
    except DomainError as exc:
        raise ModelError(f"cannot predict: {exc}") from None
    parts: dict[str, float] = {}
    for term in model.terms():  # a term written twice is one, with both shares
        value_of = float(Formula.parse(term, "model term").evaluate(env))
        parts[term] = parts.get(term, 0.0) + value_of
    if not np.isfinite(value):  # e.g. an exp() term past float range at a large size
        bad = next((t for t, v in parts.items() if not np.isfinite(v)), model.expression)
        raise ModelError(f"cannot predict: the model overflows at this kernel's sizes ({bad} is "
                         f"{parts.get(bad, value)}); predict smaller sizes, or calibrate a model that grows "
                         "more slowly")  # fmt: skip
    return Prediction(value, {t: v / value if value else 0.0 for t, v in parts.items()})


# No device's sub-groups are wider than its work-groups (1024 work-items at most).
MAX_SUBGROUP = 1024


def _width(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SUBGROUP:
        raise ValueError(f"subgroup_size is {fields.shown(value)}, not a whole number from 1 to "
                         f"{MAX_SUBGROUP}")  # fmt: skip
    return value
