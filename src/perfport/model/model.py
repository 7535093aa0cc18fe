"""Models: an output feature as a formula of parameters and input features (section 6).

``Model("f_cl_wall_time_nvidia_h100", "p_launch * f_sync_kernel_launch + p_f32madd *
f_op_float32_madd")``. ``linear_model`` and ``overlap_model`` build the paper's forms (7) and
(8): global-memory, on-chip and synchronisation costs added, or the first two overlapped
through a smooth step whose steepness ``p_edge`` is calibrated with the costs (section 7.4).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perfport.model import fields
from perfport.model.errors import ModelError
from perfport.model.expression import (
    FEATURE_TOKEN,
    DomainError,
    Formula,
    derivative,
    evaluate,
    symbol_sets,
)
from perfport.model.features import FeatureSet, parse_feature

FORMAT = "perfport-model/1"
EDGE = "p_edge"


@dataclass(frozen=True)
class Model:
    """``shape`` names parameters that are not costs (a step's steepness): calibration checks
    every other parameter is non-negative. ``initial`` gives starting values (default 1).
    ``definitions`` defines features of the model's own as expressions of other features
    (``{"f_flops": "2 * 32 * f_op_float32_madd"}``; a model file's ``features``), so a model
    file, not only Python, can use them."""

    output: str
    expression: str
    shape: tuple[str, ...] = ()
    initial: Mapping[str, float] = field(default_factory=dict)
    definitions: Mapping[str, str] = field(default_factory=dict)
    formula: Formula = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.output, str) or not self.output.startswith("f_"):
            raise ModelError(
                f"model output {self.output!r} is not a feature; name one, e.g. "
                "f_cl_wall_time_nvidia_h100"
            )
        object.__setattr__(self, "formula", Formula.parse(self.expression, "model expression"))
        if self.output in self.formula.features:
            raise ModelError(f"model output {self.output} also appears among its inputs; remove it")
        for name in (*self.shape, *self.initial):
            if name not in self.formula.parameters:
                raise ModelError(f"{name} is not a parameter of the model expression; remove it")
        self.feature_set()  # a bad definition is refused when the model is made

    def feature_set(self) -> FeatureSet:
        """The built-in features and the model's own ``definitions``."""
        known = FeatureSet()
        pending = dict(self.definitions)
        for name, expression in pending.items():
            if not isinstance(expression, str):
                raise ModelError(f"feature {name}: its definition must be an expression string")
        while pending:  # a definition may use another, whatever their order in the file
            ready = [
                name
                for name, expression in pending.items()
                if all(u == name or u not in pending for u in FEATURE_TOKEN.findall(expression))
            ]
            if not ready:
                raise ModelError(f"features {', '.join(sorted(pending))} are defined in terms "
                                 "of each other; define one of them without the others")  # fmt: skip
            for name in ready:
                known.define(name, pending.pop(name))
        return known

    @property
    def parameters(self) -> tuple[str, ...]:
        return self.formula.parameters

    @property
    def features(self) -> tuple[str, ...]:
        return self.formula.features

    @property
    def cost_parameters(self) -> tuple[str, ...]:
        return tuple(p for p in self.parameters if p not in self.shape)

    def check_features(self, features: FeatureSet | None = None) -> None:
        """A one-line ModelError for the first input feature nobody can compute."""
        known = features or self.feature_set()
        for name in self.features:
            known.check(name)

    def evaluate(
        self, params: Mapping[str, float], features: Mapping[str, Any], strict: bool = True
    ) -> Any:
        """The model's output; ``strict``: a division by 0 or a domain error is a DomainError
        (``Formula.evaluate``)."""
        return self.formula.evaluate({**features, **params}, strict)

    def jacobian(self, params: Mapping[str, float], features: Mapping[str, Any]) -> np.ndarray:
        """d model / d parameter, one column per parameter (in ``parameters`` order)."""
        env = {**features, **params}
        rows = len(np.atleast_1d(next(iter(features.values()), np.zeros(1))))
        with np.errstate(all="ignore"):  # as the model's own value: the fit judges non-finite
            columns = [
                np.broadcast_to(np.asarray(evaluate(d, env), dtype=float), (rows,))
                for d in self._derivatives
            ]
        return np.stack(columns, axis=1)

    @property
    def _derivatives(self) -> tuple[Any, ...]:
        cached = self.__dict__.get("_derivative_cache")
        if cached is None:
            tree = self.formula.tree
            symbols = symbol_sets(tree)
            cached = tuple(derivative(tree, p, symbols) for p in self.parameters)
            self.__dict__["_derivative_cache"] = cached
        return cached

    def terms(self) -> tuple[str, ...]:
        """The expression's top-level summands, as text (their shares explain a prediction).
        A subtracted summand is a term of its own, written with its minus sign (``-(p_c *
        f_x)``): its share is negative."""
        import ast

        found = list(dict.fromkeys(FEATURE_TOKEN.findall(self.expression)))
        text = FEATURE_TOKEN.sub(lambda m: f"_feature_{found.index(m.group(0))}_", self.expression)
        tree = ast.parse(text.strip(), mode="eval").body
        summands: list[ast.expr] = []
        stack: list[tuple[ast.expr, bool]] = [(tree, False)]  # (node, subtracted)
        while stack:
            node, negative = stack.pop()
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
                stack += [
                    (node.right, negative != isinstance(node.op, ast.Sub)),
                    (node.left, negative),
                ]
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
                stack.append((node.operand, negative != isinstance(node.op, ast.USub)))
            else:
                summands.append(ast.UnaryOp(ast.USub(), node) if negative else node)
        unparsed = [ast.unparse(s) for s in summands]
        for i, name in enumerate(found):
            unparsed = [u.replace(f"_feature_{i}_", name) for u in unparsed]
        return tuple(unparsed)

    def to_json(self) -> dict[str, Any]:
        out = {
            "format": FORMAT,
            "output": self.output,
            "expression": self.expression,
            "shape": list(self.shape),
            "initial": dict(self.initial),
        }
        if self.definitions:  # only then: files of models without any stay as they were
            out["features"] = dict(self.definitions)
        return out

    @staticmethod
    def from_json(data: Any) -> Model:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ModelError(f"not a perfport model file (expected format {FORMAT!r})")
        if not isinstance(data.get("expression", ""), str):  # str(5) would parse, then mislead
            raise ModelError('model file: "expression" must be a string, e.g. '
                             '"p_launch * f_sync_kernel_launch"; fix the file')  # fmt: skip
        if isinstance(data.get("shape"), str):  # a string would be read letter by letter
            raise ModelError(
                f"model file: shape must be a list of parameter names, e.g. "
                f"[{data['shape']!r}]; fix the file"
            )
        try:
            return Model(
                str(data["output"]),
                str(data["expression"]),
                fields.names(data.get("shape", []), "shape"),
                fields.numbers(data.get("initial", {}), "initial", '{"p_edge": 10}'),
                dict(fields.mapping(data.get("features", {}), "features", _FEATURES_EXAMPLE)),
            )
        except KeyError as exc:
            raise ModelError(
                f"model file: missing or bad field (no {exc} field); fix the file"
            ) from None
        except (TypeError, ValueError) as exc:
            raise ModelError(f"model file: missing or bad field ({exc}); fix the file") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @staticmethod
    def load(path: str | Path) -> Model:
        try:
            return Model.from_json(json.loads(Path(path).read_text()))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # a binary file: not UTF-8
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
            raise ModelError(f"{path}: not JSON ({reason}); give a model file") from None
        except OSError as exc:  # a missing file was a raw FileNotFoundError
            raise ModelError(
                f"{path}: cannot be read ({exc.strerror}); give a model file"
            ) from None


_FEATURES_EXAMPLE = '{"f_flops": "2 * f_op_float32_madd"}'


def _weighted(costs: Mapping[str, str]) -> str:
    for p, f in costs.items():
        if not p.startswith("p_"):
            raise ModelError(f"cost parameter {p!r} must start with p_")
        if not f.strip():
            raise ModelError(f"cost parameter {p} has no feature expression")
    return " + ".join(f"{p} * ({f})" for p, f in costs.items()) or "0"


def linear_model(
    output: str,
    global_memory: Mapping[str, str],
    on_chip: Mapping[str, str],
    sync: Mapping[str, str],
) -> Model:
    """The paper's (7): t = t_gm + t_oc + t_sync, each a sum of parameter * feature terms,
    given as {parameter: feature expression}."""
    parts = [_weighted(c) for c in (global_memory, on_chip, sync) if c]
    return Model(output, " + ".join(parts))


def step(x: str, edge: str = EDGE) -> str:
    """The smooth step of section 7.4, 0 for x << 0 and 1 for x >> 0; ``edge`` sets how
    abruptly it switches (in the units of x)."""
    return f"(0.5 + 0.5 * tanh({edge} * ({x})))"


def overlap_model(
    output: str,
    global_memory: Mapping[str, str],
    on_chip: Mapping[str, str],
    sync: Mapping[str, str],
    edge: float = 10.0,
) -> Model:
    """The paper's (8): on-chip work hidden behind global memory (or the reverse), t =
    H(t_gm - t_oc) t_gm + H(t_oc - t_gm) t_oc + t_sync with H the smooth step. ``edge``
    starts its steepness.

    The step's argument is the difference relative to the sum, (t_gm - t_oc) / (t_gm +
    t_oc), so the steepness has no unit and one value serves kernels of 0.1 ms and of 1 s
    alike; and the model stays homogeneous in its features, so calibrating on features
    scaled by the measured time (relative error) fits the same model that predicts from
    unscaled ones. At ``edge`` 10 the switch takes a difference of about a tenth of the sum."""
    gm, oc = _weighted(global_memory), _weighted(on_chip)
    # 1e-30 s keeps a kernel with neither cost (an empty kernel) at 0 / tiny, not 0 / 0.
    rel = f"(({gm}) - ({oc})) / (({gm}) + ({oc}) + 1e-30)"
    body = f"{step(rel)} * ({gm}) + {step(f'-{rel}')} * ({oc})"
    if sync:
        body += " + " + _weighted(sync)
    return Model(output, body, shape=(EDGE,), initial={EDGE: edge})


def input_features(
    model: Model, stats: Any, features: FeatureSet | None = None, device: str = ""
) -> dict[str, float]:
    """The model's input features of one kernel at the sizes ``stats`` were evaluated at, on
    the device named ``device`` (features that need its limits are 0 without one)."""
    known = features or model.feature_set()
    model.check_features(known)
    out = {}
    for name in model.features:
        try:
            out[name] = known.value(name, stats, device)
        except DomainError as exc:  # a feature of the user's that divides by 0 for this kernel
            raise DomainError(f"feature {name}: {exc}", exc.row) from None
    return out


__all__ = ["Model", "input_features", "linear_model", "overlap_model", "parse_feature", "step"]
