"""Search spaces: parameters + constraints -> the legal configurations, vectorised."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any

import numpy as np

from perfport._core import Config, Expr, ExpressionError, Param, PerfportError, SpecError, value_key
from perfport._core.bounds import item_budget
from perfport._core.containers import as_list
from perfport._core.elementwise import truth
from perfport._core.spec import restriction_text
from perfport.space.arrays import as_array, first_of_each

_BLOCK = 1 << 24  # grid points evaluated at once
_ONE_BY_ONE = 16  # configurations few enough to take one at a time, by Python's rules
# Enumeration costs time in the cartesian size and memory in the legal count (8 bytes each):
# beyond these a space is refused with advice, rather than stalling or exhausting memory.
MAX_CARTESIAN = 1 << 32
MAX_LEGAL = 1 << 25
_MAX_INDEX = (1 << 63) - 1  # configurations are numbered by int64 positions


class ConstraintSource(Enum):
    KERNEL = "kernel"  # the kernel's own restrictions: they define its space
    DEVICE = "device"  # limits of the device: configurations removed here are "pruned"


@dataclass(frozen=True)
class Constraint:
    """A condition every legal configuration satisfies; ``label`` is what reports show. It is
    a boolean expression (evaluated on whole grids at once), or ``func``: a function given
    each configuration as a dict of parameter values (a Python spec's lambda), called only on
    the configurations the constraints before it kept."""

    label: str
    expr: Expr | None
    source: ConstraintSource = ConstraintSource.KERNEL
    func: Callable[[dict[str, Any]], Any] | None = None

    @classmethod
    def of(
        cls,
        text: str | Callable[[dict[str, Any]], Any],
        source: ConstraintSource = ConstraintSource.KERNEL,
        label: str = "",
    ) -> Constraint:
        if callable(text):
            return cls(label or restriction_text(text), None, source, text)
        return cls(label or text, Expr(text, "constraint"), source)

    @property
    def names(self) -> frozenset[str]:
        """The names an expression reads; a function reads only parameters."""
        return self.expr.names if self.expr is not None else frozenset()


@dataclass(frozen=True)
class PruningReport:
    """How a space shrank: ``removed_by`` counts, in order, the configurations each constraint
    removed among those the earlier constraints kept, so they sum to cartesian - legal."""

    cartesian: int
    legal: int
    removed_by: tuple[tuple[str, int, ConstraintSource], ...]

    def removed(self, source: ConstraintSource) -> int:
        return sum(n for _, n, s in self.removed_by if s is source)

    def to_json(self) -> dict[str, Any]:
        return {
            "cartesian": self.cartesian,
            "legal": self.legal,
            "removed_by": {label: n for label, n, _ in self.removed_by},
            "pruned": self.removed(ConstraintSource.DEVICE),
        }


class Space:
    """The legal configurations of ``params`` under ``constraints``.

    ``constants`` are extra names the constraints see (problem values), ``derived`` values
    computed from the parameters (name, expression), in order. Enumeration is
    vectorised in chunks, so memory stays bounded for large cartesian products. Legal
    configurations are numbered 0..len-1 in cartesian (row-major) order.
    """

    def __init__(
        self,
        params: Sequence[Param],
        constraints: Sequence[Constraint | str | Callable[[dict[str, Any]], Any]] = (),
        constants: Mapping[str, Any] | None = None,
        derived: Sequence[tuple[str, Expr]] = (),
    ) -> None:
        self.params = _checked_params(params)
        # A restriction's text or function is taken as its Constraint ("a > 1" was an
        # AttributeError from inside), as a kernel's restrictions are.
        self.constraints = tuple(map(_constraint, as_list(constraints, "constraints", SpecError)))
        self._constants = dict(constants or {})
        self._derived = tuple(derived)  # values computed from the parameters, in order
        self._shape = tuple(len(p.values) for p in self.params)
        _check_size(self._shape, MAX_CARTESIAN)
        self._values = [as_array(p.values) for p in self.params]
        with item_budget():  # the strings built over the whole grid are bounded in all
            self._legal, removed = self._enumerate()
        self.report = PruningReport(
            cartesian=math.prod(self._shape),
            legal=len(self._legal),
            removed_by=tuple(
                (label, n, c.source)
                for label, c, n in zip(
                    _distinct([c.label for c in self.constraints]),
                    self.constraints,
                    removed,
                    strict=True,
                )
            ),
        )

    @classmethod
    def from_configs(
        cls,
        params: Sequence[Param],
        configs: Iterable[Mapping[str, Any]],
        label: str = "not in the data",
    ) -> Space:
        """The space whose legal configurations are exactly ``configs`` (e.g. those a stored or
        imported data set holds); anything else counts as removed by ``label``."""
        space = cls.__new__(cls)
        space.params = _checked_params(params)
        space.constraints = ()
        space._constants = {}
        space._derived = ()
        space._shape = tuple(len(p.values) for p in space.params)
        _check_size(space._shape, _MAX_INDEX)  # only numbered, never enumerated
        space._values = [as_array(p.values) for p in space.params]
        positions = np.array(
            [space._position_of(n, c) for n, c in enumerate(configs, 1)], dtype=np.int64
        )
        flat = (
            np.ravel_multi_index(positions.T, space._shape)
            if len(positions)
            else np.zeros(0, np.int64)
        )
        space._legal = np.unique(flat)
        cartesian = math.prod(space._shape)
        space.report = PruningReport(
            cartesian,
            len(space._legal),
            ((label, cartesian - len(space._legal), ConstraintSource.KERNEL),),
        )
        return space

    def _position_of(self, n: int, config: Mapping[str, Any]) -> list[int]:
        """Configuration ``n``'s value positions; a SpecError (a ValueError too, as raised
        before) naming a parameter it lacks or a value outside the parameter's values."""
        out = []
        for p, lookup in zip(self.params, self._positions_of, strict=True):
            if p.name not in config:
                raise _ConfigError(
                    f"configuration {n} {dict(config)} has no value for parameter {p.name}; "
                    "give every parameter a value"
                )
            at = lookup.get(value_key(config[p.name]))
            if at is None:
                raise _ConfigError(
                    f"configuration {n}: {p.name}={config[p.name]!r} is not one of the "
                    f"parameter's values {list(p.values)}"
                )
            out.append(at)
        return out

    # ---- enumeration ------------------------------------------------------------------
    def _enumerate(self) -> tuple[np.ndarray, list[int]]:
        """Evaluate every constraint on an open grid: each parameter's values lie along their
        own axis, so a constraint over k parameters costs the product of those k sizes, and
        numpy broadcasts its verdict over the rest. Blocks of at most _BLOCK points (a slice of
        one axis, every point of the later axes) bound memory."""
        removed = [0] * len(self.constraints)
        if not self.params:
            keep = all(bool(np.all(self._verdict(c, [], np.ones((), bool), self._constants)))
                       for c in self.constraints)  # fmt: skip
            return np.arange(1 if keep else 0, dtype=np.int64), removed
        kept: list[np.ndarray] = []
        total = 0
        for block, base in self._blocks():
            env, unsafe = self._grid(block)
            mask = np.ones(tuple(len(b) for b in block), dtype=bool)
            alive = mask.size
            for i, c in enumerate(self.constraints):
                mask &= self._verdict(c, block, mask, env, unsafe)
                now = int(np.count_nonzero(mask))
                removed[i] += alive - now
                alive = now
            total += alive
            if total > MAX_LEGAL:
                raise SpecError(
                    f"the search space has more than {MAX_LEGAL} legal configurations; "
                    "add restrictions or give the parameters fewer values"
                )
            kept.append(np.flatnonzero(mask) + base)
        return np.concatenate(kept), removed

    def _verdict(
        self,
        c: Constraint,
        block: Sequence[range],
        mask: np.ndarray,
        env: Mapping[str, Any],
        unsafe: frozenset[str] = frozenset(),
    ) -> np.ndarray:
        """Where ``c`` holds on a block: an expression on the whole grid at once; a function
        on each configuration still alive (``mask``), as a dict of the parameters' values.
        An expression that fails somewhere it is reached (numpy's 0 or inf would keep
        configurations that cannot run), or reads a derived value that does (``unsafe``),
        is taken on the configurations still alive instead, by Python's rules, as it would
        be at launch. A guard (``b != 0 and a % b == 0``) protects on the grid already."""
        if c.expr is not None and not c.expr.names & unsafe:
            try:
                return np.asarray(truth(c.expr.vector(env, strict=True)), dtype=bool)
            except FloatingPointError:
                pass
        if c.expr is None or not mask.ndim:
            out = np.zeros(mask.shape, dtype=bool)
            for at in np.flatnonzero(mask).tolist():
                out.flat[at] = self._holds(c, self._config_at(block, mask.shape, at))
            return out
        # It reads some parameters only: each combination of theirs still alive is evaluated
        # once, at the first configuration that has it, and holds wherever it recurs.
        needed = self._needed(c.expr)
        axes = [i for i, p in enumerate(self.params) if p.name in needed]
        combos, first = first_of_each(mask, axes)
        order = np.argsort(first)  # in the order they first occur, as one by one would go
        table = np.zeros(math.prod(mask.shape[i] for i in axes), dtype=bool)
        table[combos[order]] = self._at_points(c, block, mask.shape, first[order])
        return mask & table.reshape([n if i in axes else 1 for i, n in enumerate(mask.shape)])

    def _at_points(
        self, c: Constraint, block: Sequence[range], shape: tuple[int, ...], points: np.ndarray
    ) -> np.ndarray:
        """``c`` at ``points`` (flat positions in the block, in order), in parts of doubling
        size: a configuration that fails is met after work in proportion to those before it,
        however many come after."""
        out = np.zeros(len(points), dtype=bool)
        start, size = 0, _ONE_BY_ONE
        while start < len(points):
            part = points[start : start + size]
            out[start : start + len(part)] = self._in_halves(c, block, shape, part)
            start, size = start + len(part), size * 2
        return out

    def _in_halves(
        self, c: Constraint, block: Sequence[range], shape: tuple[int, ...], points: np.ndarray
    ) -> np.ndarray:
        """``c`` at ``points``: all at once where that evaluates, else each half in turn,
        down to a few configurations taken one at a time, so that the first that fails is
        named, as one by one would."""
        assert c.expr is not None
        if len(points) > _ONE_BY_ONE:
            try:
                env = self._points_env(c.expr, block, shape, points)
                verdict = np.asarray(truth(c.expr.vector(env, strict=True)), dtype=bool)
                return np.broadcast_to(verdict, points.shape)
            except FloatingPointError:
                half = len(points) // 2
                return np.concatenate(
                    [self._in_halves(c, block, shape, part) for part in np.split(points, [half])]
                )
        held = [self._holds(c, self._config_at(block, shape, at)) for at in points.tolist()]
        return np.array(held, dtype=bool)

    def _needed(self, expr: Expr) -> set[str]:
        """The names ``expr`` reads, with those the derived values it reads read."""
        needed = set(expr.names)
        for name, derived in reversed(self._derived):
            if name in needed:
                needed |= derived.names
        return needed

    def _points_env(
        self, expr: Expr, block: Sequence[range], shape: tuple[int, ...], points: np.ndarray
    ) -> dict[str, Any]:
        """Names -> values at ``points`` of a block (one array each), with the derived
        values ``expr`` reads (a FloatingPointError where one fails at some point)."""
        env = dict(self._constants)
        positions = np.unravel_index(points, shape) if shape else ()
        for p, values, b, i in zip(self.params, self._values, block, positions, strict=True):
            env[p.name] = values[b.start + i]
        needed = self._needed(expr)
        for name, derived in self._derived:
            if name in needed:
                env[name] = derived.vector(env, strict=True)
        return env

    def _config_at(self, block: Sequence[range], shape: tuple[int, ...], at: int) -> dict[str, Any]:
        """The configuration at flat position ``at`` of a block, as a dict of values."""
        pos = np.unravel_index(at, shape) if shape else ()
        return {p.name: p.values[b.start + int(i)]
                for p, b, i in zip(self.params, block, pos, strict=True)}  # fmt: skip

    def _holds(self, c: Constraint, config: dict[str, Any]) -> bool:
        """Whether ``c`` holds for one configuration, or a one-line SpecError."""
        if c.expr is None:
            assert c.func is not None
            try:
                return bool(c.func(config))
            except Exception as exc:  # the user's own code: name it and the configuration
                raise SpecError(
                    f"restriction {c.label[:80]} raised {type(exc).__name__}: "
                    f"{str(exc)[:80]} for {config}; fix the function"
                ) from None
        env = {**self._constants, **config}
        try:
            for name, expr in self._derived:
                env[name] = expr.value(env)
            return bool(c.expr.value(env))
        except ExpressionError as exc:
            guard = "; guard it (as in 'b != 0 and a % b == 0') or leave such values out"
            raise SpecError(f"{exc}{guard if 'by zero' in str(exc) else ''}") from None

    def _blocks(self) -> Iterator[tuple[list[range], int]]:
        """Sub-grids that tile the space in row-major order: the position ranges of each axis
        and the flat number of the block's first point (a block is contiguous)."""
        shape = self._shape
        axis = 0  # the axis to slice: the first one whose later axes fit in a block
        while axis < len(shape) - 1 and math.prod(shape[axis + 1 :]) > _BLOCK:
            axis += 1
        inner = math.prod(shape[axis + 1 :])
        step = max(1, _BLOCK // max(inner, 1))
        for prefix in itertools.product(*(range(n) for n in shape[:axis])):
            for start in range(0, shape[axis], step):
                stop = min(start + step, shape[axis])
                block = [range(i, i + 1) for i in prefix] + [range(start, stop)]
                block += [range(n) for n in shape[axis + 1 :]]
                base = int(
                    np.ravel_multi_index((*prefix, start, *[0] * len(shape[axis + 1 :])), shape)
                )
                yield block, base

    def _grid(self, block: Sequence[range]) -> tuple[dict[str, Any], frozenset[str]]:
        """Names -> values on an open grid (axis i holds parameter i) over one block, and
        the derived values that divide by zero somewhere on it (or read one that does)."""
        env = dict(self._constants)
        ndim = len(self.params)
        for axis, (p, values, positions) in enumerate(
            zip(self.params, self._values, block, strict=True)
        ):
            shape = [1] * ndim
            shape[axis] = -1
            env[p.name] = values[positions.start : positions.stop].reshape(shape)
        unsafe: set[str] = set()  # left out of env: their readers go one by one
        for name, expr in self._derived:
            if not expr.names & unsafe:
                try:
                    env[name] = expr.vector(env, strict=True)
                    continue
                except FloatingPointError:
                    pass
            unsafe.add(name)
        return env, frozenset(unsafe)

    def _env(self, flat: np.ndarray) -> dict[str, Any]:
        env = dict(self._constants)
        if self.params:
            positions = np.unravel_index(flat, self._shape)
            for p, values, pos in zip(self.params, self._values, positions, strict=True):
                env[p.name] = values[pos]
        return env

    # ---- access -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._legal)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def config(self, index: int) -> Config:
        """The legal configuration with this number (0 to ``len(self) - 1``)."""
        if not 0 <= index < len(self._legal):  # -1 was the last one, silently
            raise PerfportError(
                f"configuration number {index} is outside the space's 0-{len(self._legal) - 1}"
            )
        flat = int(self._legal[index])
        positions = np.unravel_index(flat, self._shape) if self.params else ()
        return Config.of(
            {p.name: p.values[int(i)] for p, i in zip(self.params, positions, strict=True)}
        )

    def index(self, config: Mapping[str, Any]) -> int | None:
        """The number of a configuration, or None if it is not legal (or not in the space)."""
        try:
            positions = [
                lk[value_key(config[p.name])]
                for p, lk in zip(self.params, self._positions_of, strict=True)
            ]
        except KeyError:
            return None
        flat = int(np.ravel_multi_index(positions, self._shape)) if self.params else 0
        i = int(np.searchsorted(self._legal, flat))
        return i if i < len(self._legal) and self._legal[i] == flat else None

    def __iter__(self) -> Iterator[Config]:
        return (self.config(i) for i in range(len(self)))

    @cached_property
    def _positions_of(self) -> list[dict[tuple[bool, Any], int]]:
        # Keyed by value_key: a parameter may take both 1 and True, which Python equates.
        return [{value_key(v): i for i, v in enumerate(p.values)} for p in self.params]

    def indices(self, configs: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """``index`` of many configurations at once, vectorised (-1 where not legal or not in
        the space): a prior over tens of thousands of configurations needs it."""
        out = np.full(len(configs), -1, dtype=np.int64)
        if not self.params or not len(configs):
            return out if self.params else np.zeros(len(configs), dtype=np.int64)
        positions = np.full((len(configs), len(self.params)), -1, dtype=np.int64)
        for d, (p, lookup) in enumerate(zip(self.params, self._positions_of, strict=True)):
            # a column at a time: a resumed campaign's check reads up to a million results
            positions[:, d] = [lookup.get(value_key(c.get(p.name)), -1) for c in configs]
        known = np.flatnonzero((positions >= 0).all(axis=1))
        flat = np.ravel_multi_index(tuple(positions[known].T), self._shape)
        at = np.minimum(np.searchsorted(self._legal, flat), len(self._legal) - 1)
        legal = self._legal[at] == flat if len(self._legal) else np.zeros(len(flat), dtype=bool)
        out[known[legal]] = at[legal]
        return out

    def columns(self) -> dict[str, np.ndarray]:
        """Every legal configuration as one array per parameter (for models and strategies)."""
        return {k: v for k, v in self._env(self._legal).items() if k in self.names}

    def positions(self) -> np.ndarray:
        """Each legal configuration's value positions, shape (len, n_params): the coordinates
        that neighbourhood-based strategies move on."""
        if not self.params:
            return np.zeros((len(self), 0), dtype=np.int64)
        return np.stack(np.unravel_index(self._legal, self._shape), axis=1)


class _ConfigError(SpecError, ValueError):
    """A configuration outside a space built from configurations (ValueError: as before)."""


def _constraint(given: Any) -> Constraint:
    """A Constraint, or a restriction's text or function taken as one; else a SpecError."""
    if isinstance(given, Constraint):
        return given
    if isinstance(given, str) or callable(given):
        return Constraint.of(given)
    raise SpecError(
        f"constraint {given!r} must be a Constraint, an expression such as 'a * b <= 64', or "
        "a function of the configuration"
    )


def _checked_params(params: Sequence[Param]) -> tuple[Param, ...]:
    """``params`` as a tuple of Param records, or a one-line SpecError."""
    out = as_list(params, "params", SpecError, "[Param('wg', (32, 64))]")
    for p in out:
        if not isinstance(p, Param):
            raise SpecError(f"params must be Param records, got {p!r}; e.g. Param('wg', (32, 64))")
    return out


def _check_size(shape: tuple[int, ...], limit: int) -> None:
    cartesian = math.prod(shape)
    if cartesian > limit:
        sizes = " x ".join(map(str, shape))
        raise SpecError(
            f"the search space has {cartesian:.3g} configurations ({sizes} values), more than "
            f"{limit:.3g} that can be enumerated; give the parameters fewer values"
        )


def _distinct(labels: list[str]) -> list[str]:
    """Labels told apart: two restrictions shown the same (two lambdas on one source line)
    become "label" and "label (2)", so each keeps its own count in a report's JSON."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out
