"""The runtime selector's decision tree as plain data, and its exact cutoffs, for the code
generators (``emit_c``, ``emit_python``; Lawson, section 5: the selector runs before every
launch, so it must cost next to nothing and be easy to compile into a library).

``SelectorTree`` is the fitted tree as plain data (no scikit-learn needed to use it): node
arrays, one ``Transform`` per feature, and at each leaf the index of the shipped configuration
it chooses. ``fold`` maps it to raw-input cutoffs, which ``generate_c`` and
``generate_python`` emit as nested ifs.

Exactness. scikit-learn converts each input to float32 and sends it left when
``float32(x) <= threshold`` with a float64 threshold. Instead of repeating that (and the
feature's log, if any) at run time, every split is mapped back to raw-input space once, here:
``float32(T(x)) <= t`` is monotone in ``x`` (both the transform and the rounding are), so it
holds exactly for ``x`` up to one cutoff. A bisection over the inputs themselves, using the
very numpy operations the model's pipeline uses, finds that cutoff: the largest ``long`` for
the C code, the largest finite double for the Python code. The generated code then compares
the caller's raw values with constants (no conversion, no ``log2``) and agrees with
``model.predict`` on every input, ties at thresholds included (for |x| < 2**53, where a
``long`` converts to double exactly).

Derived features (``perfport.select.derive``: products such as ``M*N``, divisibility such as
``M%64``) are computed from the raw inputs first, in double precision exactly as the model's
numpy code computes them (``(double)M * (double)N``; IEEE products are correctly rounded), so
a product's cutoff is the largest double that goes left and the generated code compares the
same double. A divisibility flag is 0 or 1. In C, ``(double)M`` is exact for |M| < 2**53;
divisibility is taken of that double, as numpy does, for every ``long``.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from perfport._core.identifiers import is_code_keyword, is_identifier
from perfport.select.derive import Derived, DerivedKind, check_derived, parse_derived
from perfport.select.errors import SelectError

LEAF = -1
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


class Transform(Enum):
    """What the tree saw of a feature. ``LOG2`` is ``sign(x) * log2(1 + |x|)`` (the same
    formula as ``perfport.select.log_features``): sizes on a log scale, flags 0/1 unchanged."""

    IDENTITY = "identity"
    LOG2 = "log2"

    def apply(self, values: Any) -> np.ndarray:
        x = np.asarray(values, dtype=np.float64)
        if self is Transform.IDENTITY:
            return x
        return np.sign(x) * np.log2(1.0 + np.abs(x))


def model_inputs(
    rows: np.ndarray | Sequence[Sequence[float]], transforms: Sequence[Transform]
) -> np.ndarray:
    """The float64 matrix a tree is trained on from raw feature rows (one column each)."""
    raw = np.asarray(rows, dtype=np.float64)
    return np.stack([t.apply(raw[:, j]) for j, t in enumerate(transforms)], axis=1)


def _goes_left(transform: Transform, threshold: float, x: float) -> bool:
    """scikit-learn's test on a raw value: float32 of the transformed value <= threshold, the
    comparison in double. ``float()`` keeps it in double: a numpy float32 compared with a
    Python float would round the threshold to float32 (NEP 50)."""
    with np.errstate(over="ignore"):
        z = np.float32(transform.apply(np.float64(x)))
    return float(z) <= threshold


def _last_true(lo: int, hi: int, test: Callable[[int], bool]) -> int:
    """The largest n in [lo, hi] with test(n), for a test true then false; lo - 1 if none."""
    if not test(lo):
        return lo - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if test(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


_SIGN = 1 << 63


def _order_key(x: float) -> int:
    """An integer that orders finite doubles as their values do (bisection over doubles)."""
    (bits,) = struct.unpack("<Q", struct.pack("<d", x))
    return -(bits ^ _SIGN) if bits & _SIGN else bits


def _from_key(key: int) -> float:
    bits = key if key >= 0 else (-key) | _SIGN
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def long_cutoff(transform: Transform, threshold: float) -> int:
    """The largest ``long`` n that goes left (the model sees float64(n)); LONG_MIN - 1 when
    none does, LONG_MAX when all do."""
    return _last_true(LONG_MIN, LONG_MAX, lambda n: _goes_left(transform, threshold, float(n)))


def real_cutoff(transform: Transform, threshold: float) -> float:
    """The largest finite double that goes left; -inf when none does, +inf when all do."""
    top = _order_key(float(np.finfo(np.float64).max))
    key = _last_true(-top, top, lambda k: _goes_left(transform, threshold, _from_key(k)))
    if key < -top:
        return -math.inf
    return math.inf if key == top else _from_key(key)


def check_identifier(name: str, what: str) -> str:
    if not is_identifier(name):
        raise SelectError(f"{what} {name!r} is not an identifier; use letters, digits and _")
    if is_code_keyword(name):
        raise SelectError(f"{what} {name!r} is a C or Python keyword; rename it")
    return name


@dataclass(frozen=True)
class SelectorTree:
    """A fitted decision tree as plain data. Node 0 is the root; a leaf has ``left == -1``
    and ``choice`` = the index of the configuration it picks (``-1`` at inner nodes).
    ``threshold`` is scikit-learn's, in the transformed space of the node's feature.
    ``feature`` indexes ``features`` (the inputs, each through its transform) followed by
    ``derived`` (computed from the raw inputs, seen as they are)."""

    features: tuple[str, ...]
    transforms: tuple[Transform, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    choice: tuple[int, ...]
    derived: tuple[Derived, ...] = ()

    def __post_init__(self) -> None:
        for name in self.features:
            check_identifier(name, "feature name")
        object.__setattr__(self, "derived", tuple(self.derived))
        check_derived(self.derived, self.features)
        for d in self.derived:
            check_identifier(d.name, "derived feature name")
        if len(set(self.features)) != len(self.features):
            raise SelectError(f"feature names repeat in {list(self.features)}; name each once")
        if len(self.transforms) != len(self.features):
            raise SelectError(
                f"{len(self.transforms)} transforms for {len(self.features)} features; "
                "give one per feature"
            )
        n = len(self.left)
        arrays = (self.right, self.feature, self.threshold, self.choice)
        if n == 0 or any(len(a) != n for a in arrays):
            raise SelectError("selector tree arrays are empty or of different lengths")
        for i in range(n):
            if self.left[i] == LEAF:
                if self.choice[i] < 0:
                    raise SelectError(f"selector tree leaf {i} chooses no configuration")
                continue
            # Children numbered after their parent (as scikit-learn builds them) rules out
            # cycles, so walking the tree always ends.
            if not (i < self.left[i] < n and i < self.right[i] < n):
                raise SelectError(f"selector tree node {i} has children out of order or range")
            if not 0 <= self.feature[i] < self.n_columns:
                raise SelectError(f"selector tree node {i} tests unknown feature {self.feature[i]}")
            if not math.isfinite(self.threshold[i]):
                raise SelectError(f"selector tree node {i} has a non-finite threshold")

    # ---- construction -----------------------------------------------------------------
    @classmethod
    def from_sklearn(
        cls,
        model: Any,
        features: Sequence[str],
        transforms: Sequence[Transform | str] | None = None,
        labels: Mapping[Any, int] | None = None,
        derived: Sequence[Derived] = (),
        regret: bool = False,
    ) -> SelectorTree:
        """From a fitted ``DecisionTreeClassifier``, or with ``regret`` from the regret tree of
        ``select.classify``: a ``DecisionTreeRegressor`` with one output per configuration,
        whose leaves answer the largest. ``labels`` maps each class label (each output's
        position) to the index of its configuration; without it the labels must be those
        indices. A tree fitted on derived columns too (``derive.with_derived``) names them in
        ``derived``."""
        tree = getattr(model, "tree_", None)
        if tree is None:
            raise SelectError(
                f"{type(model).__name__} is not a fitted decision tree; fit a "
                "DecisionTreeClassifier (or a tree selector) first"
            )
        classifier = hasattr(model, "classes_")
        if not classifier and not regret:
            raise SelectError(
                f"{type(model).__name__} is a regression tree; its outputs are configurations "
                "only in a regret tree: pass a DecisionTreeClassifier or a perfport Selector"
            )
        if classifier and regret:
            raise SelectError("regret=True needs the regret tree's DecisionTreeRegressor")
        if classifier and getattr(model, "n_outputs_", 1) != 1:
            raise SelectError("the decision tree predicts several outputs; fit it on one label")
        if tree.n_features != len(features) + len(derived):
            raise SelectError(
                f"the tree was fitted on {tree.n_features} features but {len(features)} names "
                f"and {len(derived)} derived features were given ({', '.join(features)}); "
                "give one name per column"
            )
        value = np.asarray(tree.value)
        # scikit-learn's predict answers the class of the first largest value of the leaf; a
        # regret tree's leaf holds one mean per configuration, and the selector takes the first
        # largest of those.
        outputs = value[:, 0, :] if classifier else value[:, :, 0]
        classes = model.classes_ if classifier else range(outputs.shape[1])
        index = np.array([label_index(c, labels) for c in classes], dtype=np.int64)
        inner = np.asarray(tree.children_left) != LEAF
        chosen = index[np.argmax(outputs, axis=1)]
        return cls(
            features=tuple(features),
            transforms=_transforms(transforms, len(features)),
            left=tuple(int(x) for x in np.where(inner, tree.children_left, LEAF)),
            right=tuple(int(x) for x in np.where(inner, tree.children_right, LEAF)),
            feature=tuple(int(x) for x in np.where(inner, tree.feature, LEAF)),
            threshold=tuple(float(x) for x in np.where(inner, tree.threshold, 0.0)),
            choice=tuple(int(x) for x in np.where(inner, LEAF, chosen)),
            derived=tuple(derived),
        )

    @classmethod
    def constant(
        cls,
        features: Sequence[str],
        choice: int = 0,
        transforms: Sequence[Transform | str] | None = None,
    ) -> SelectorTree:
        """A selector that always answers ``choice`` (one shipped configuration)."""
        return cls(
            tuple(features), _transforms(transforms, len(features)), (LEAF,), (LEAF,), (LEAF,),
            (0.0,), (int(choice),),
        )  # fmt: skip

    # ---- use ----------------------------------------------------------------------------
    def choose(self, values: Mapping[str, Any]) -> int:
        """The configuration index for one problem, exactly as the fitted model predicts."""
        missing = [f for f in self.features if f not in values]
        if missing:
            raise SelectError(
                f"the problem lacks feature(s) {', '.join(missing)}; give "
                + ", ".join(f"{f}=..." for f in missing)
            )
        row = []
        for f in self.features:
            try:
                x = float(values[f])
            except (TypeError, ValueError):
                raise SelectError(f"feature {f}={values[f]!r} is not a number; give one") from None
            except OverflowError:  # an int past any double
                x = math.inf
            if not math.isfinite(x):
                shown = (
                    repr(values[f]) if len(repr(values[f])) <= 40 else repr(values[f])[:37] + "..."
                )
                raise SelectError(f"feature {f}={shown} is not finite; give a finite number")
            row.append(x)
        columns = {f: np.array([x]) for f, x in zip(self.features, row, strict=True)}
        row += [float(d.values(columns)[0]) for d in self.derived]
        node = 0
        while self.left[node] != LEAF:
            j = self.feature[node]
            go_left = _goes_left(self.transform_of(j), self.threshold[node], row[j])
            node = self.left[node] if go_left else self.right[node]
        return self.choice[node]

    @property
    def n_columns(self) -> int:
        """Columns the tree tests: the inputs, then the derived features."""
        return len(self.features) + len(self.derived)

    def transform_of(self, column: int) -> Transform:
        """What the tree saw of a column: an input's transform; a derived value as it is."""
        return self.transforms[column] if column < len(self.features) else Transform.IDENTITY

    def column_name(self, column: int) -> str:
        n = len(self.features)
        return self.features[column] if column < n else self.derived[column - n].name

    @property
    def choices(self) -> frozenset[int]:
        return frozenset(c for c in self.choice if c != LEAF)

    @property
    def depth(self) -> int:
        def down(node: int) -> int:
            if self.left[node] == LEAF:
                return 0
            return 1 + max(down(self.left[node]), down(self.right[node]))

        return down(0)

    # ---- storage ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Plain arrays; thresholds as JSON numbers (Python writes floats that read back
        bit for bit)."""
        return {
            "features": [{"name": f, "transform": t.value} for f, t in zip(self.features, self.transforms, strict=True)],
            "left": list(self.left), "right": list(self.right), "feature": list(self.feature),
            "threshold": list(self.threshold), "choice": list(self.choice),
            "derived": [d.text for d in self.derived],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SelectorTree:
        try:
            feats = list(data["features"])
            return cls(
                features=tuple(str(f["name"]) for f in feats),
                transforms=_transforms([f["transform"] for f in feats], len(feats)),
                left=tuple(int(x) for x in data["left"]),
                right=tuple(int(x) for x in data["right"]),
                feature=tuple(int(x) for x in data["feature"]),
                threshold=tuple(float(x) for x in data["threshold"]),
                choice=tuple(int(x) for x in data["choice"]),
                derived=parse_derived([str(d) for d in data.get("derived", [])]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SelectError(f"the selector tree is malformed ({exc!r})") from None


def label_index(label: Any, labels: Mapping[Any, int] | None) -> int:
    """The configuration index of a class label: ``labels[label]``, or the label itself."""
    if labels is not None:
        key = label.item() if hasattr(label, "item") else label
        if key not in labels:
            raise SelectError(f"class label {key!r} has no configuration; add it to labels")
        return int(labels[key])
    try:
        index = int(label)
        exact = float(label) == index
    except (TypeError, ValueError):
        exact = False
    if not exact or index < 0:
        raise SelectError(
            f"class label {label!r} is not a configuration index; pass labels=... to map it"
        )
    return index


def _transforms(transforms: Sequence[Transform | str] | None, n: int) -> tuple[Transform, ...]:
    if transforms is None:
        return (Transform.IDENTITY,) * n
    try:
        out = tuple(Transform(t) for t in transforms)
    except ValueError as exc:
        raise SelectError(
            f"{exc}; transforms are {', '.join(t.value for t in Transform)}"
        ) from None
    if len(out) != n:
        raise SelectError(f"{len(out)} transforms for {n} features; give one per feature")
    return out


# ---- for the emitters: a tree folded into (test, left, right) or a constant ---------------
@dataclass(frozen=True)
class Split:
    feature: str
    cutoff: int | float
    model_test: str  # the model's own test, kept as a comment
    left: Node
    right: Node


Node = Split | int


def _integer_column(
    tree: SelectorTree, column: int, integer: bool, real: Collection[str] = ()
) -> bool:
    """Whether generated code holds the column as a ``long``: C's inputs (but those in
    ``real``, which take fractional values) and divisibility flags; products are doubles, and
    everything is a double in Python."""
    if not integer:
        return False
    if column < len(tree.features):
        return tree.features[column] not in real
    return tree.derived[column - len(tree.features)].kind is DerivedKind.DIVISIBLE


def fold(tree: SelectorTree, integer: bool, real: Collection[str] = ()) -> Node:
    """The tree with raw-space cutoffs (for ``long`` inputs when ``integer``, but doubles for
    the inputs named in ``real``; doubles throughout otherwise); splits that every input
    passes (or fails), and splits whose two sides choose the same configuration, are folded
    away."""

    def walk(node: int) -> Node:
        if tree.left[node] == LEAF:
            return tree.choice[node]
        j = tree.feature[node]
        t = tree.transform_of(j)
        as_long = _integer_column(tree, j, integer, real)
        cut: int | float
        if as_long:
            cut = long_cutoff(t, tree.threshold[node])
            always, never = cut >= LONG_MAX, cut < LONG_MIN
        else:
            cut = real_cutoff(t, tree.threshold[node])
            always, never = cut == math.inf, cut == -math.inf
        if always:
            return walk(tree.left[node])
        if never:
            return walk(tree.right[node])
        left, right = walk(tree.left[node]), walk(tree.right[node])
        if isinstance(left, int) and left == right:
            return left
        name = tree.column_name(j)
        shown = name if t is Transform.IDENTITY else f"log2(1 + {name})"
        return Split(name, cut, f"{shown} <= {tree.threshold[node]!r}", left, right)

    return walk(0)


def tested_features(node: Node) -> set[str]:
    if isinstance(node, int):
        return set()
    return {node.feature} | tested_features(node.left) | tested_features(node.right)


def used_derived(tree: SelectorTree, folded: Node) -> list[Derived]:
    tested = tested_features(folded)
    return [d for d in tree.derived if d.name in tested]


def comment_safe(title: str) -> str:
    # The title lands in a C comment and a Python docstring: nothing that could end either.
    return f" {re.sub(r'[^A-Za-z0-9_.,:+=() -]', '_', title)}" if title else ""
