"""Derived problem features: values a selector computes from the problem's own sizes before it
decides (products such as the output size ``M*N*batch``, divisibility such as ``M%64``).

A decision tree splits one feature at a time, so "the output is small" (``M*N`` under some
bound) costs it a staircase of splits on M and N that a few hundred training problems cannot
pin down; one split on the product can. Divisibility by a tile size says whether a tiled
kernel's edge tiles are partial.

Each derived feature is one ``Derived`` record in a small closed language (no ``eval``):

- ``A*B*...``: the product of problem values, computed in double precision left to right:
  ``float64(A) * float64(B) * ...``. Generated C and Python compute it the same way
  (``(double)A * (double)B``), and IEEE multiplication is correctly rounded, so they see the
  very value the model saw.
- ``A%n``: 1 where ``float64(A)`` is a multiple of the positive integer ``n``, else 0.

``default_derived`` chooses a set for a table's problem names; ``parse_derived`` reads one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from perfport.select.errors import SelectError

DIVISORS = (16, 32, 64, 128)  # tile sizes whose multiples a tiled kernel handles without edges
# GEMM shapes (Lawson's problem names): the output's size per batch entry and in all, and the
# whole work; chosen as what a GEMM's cost depends on, measured in docs/results.
GEMM_NAMES = frozenset({"M", "N", "K", "batch"})
GEMM_PRODUCTS = (("M", "N"), ("M", "N", "batch"), ("K", "M", "N", "batch"))
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PRODUCT = re.compile(rf"({_NAME})(\*{_NAME})+\Z")
_DIVISIBLE = re.compile(rf"({_NAME})%([1-9][0-9]{{0,17}})\Z")


class DerivedKind(Enum):
    PRODUCT = "product"
    DIVISIBLE = "divisible"


@dataclass(frozen=True)
class Derived:
    """One derived feature: the product of ``inputs`` or whether ``inputs[0]`` is a multiple of
    ``divisor``."""

    kind: DerivedKind
    inputs: tuple[str, ...]
    divisor: int = 0

    def __post_init__(self) -> None:
        if self.kind is DerivedKind.PRODUCT and len(self.inputs) < 2:
            raise SelectError(f"a product needs at least two inputs, got {list(self.inputs)}")
        if self.kind is DerivedKind.DIVISIBLE and (len(self.inputs) != 1 or self.divisor < 1):
            raise SelectError("a divisibility test needs one input and a positive divisor")

    @property
    def name(self) -> str:
        """An identifier for generated code: ``M_x_N``, ``M_div64``."""
        if self.kind is DerivedKind.PRODUCT:
            return "_x_".join(self.inputs)
        return f"{self.inputs[0]}_div{self.divisor}"

    @property
    def text(self) -> str:
        """The spec it was parsed from: ``M*N``, ``M%64``."""
        if self.kind is DerivedKind.PRODUCT:
            return "*".join(self.inputs)
        return f"{self.inputs[0]}%{self.divisor}"

    def values(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """The feature from float64 input columns (name -> array)."""
        first = np.asarray(columns[self.inputs[0]], dtype=np.float64)
        if self.kind is DerivedKind.DIVISIBLE:
            return (np.mod(first, float(self.divisor)) == 0.0).astype(np.float64)
        out = first.copy()
        with np.errstate(over="ignore", invalid="ignore"):
            for name in self.inputs[1:]:
                out = out * np.asarray(columns[name], dtype=np.float64)
        return out


def parse_derived(spec: str | Sequence[str]) -> tuple[Derived, ...]:
    """``"M*N, M*N*batch, M%64"`` (or a list of such terms) as records."""
    terms = spec.split(",") if isinstance(spec, str) else list(spec)
    out = []
    for raw in terms:
        term = str(raw).replace(" ", "")
        if not term:
            continue
        if _PRODUCT.match(term):
            out.append(Derived(DerivedKind.PRODUCT, tuple(term.split("*"))))
        elif m := _DIVISIBLE.match(term):
            out.append(Derived(DerivedKind.DIVISIBLE, (m.group(1),), int(m.group(2))))
        else:
            raise SelectError(
                f"derived feature {raw!r} is neither a product (M*N) nor a divisibility test "
                "(M%64); write one of those"
            )
    names = [d.name for d in out]
    if len(set(names)) != len(names):
        raise SelectError(f"derived features repeat in {spec!r}; give each once")
    return tuple(out)


def size_features(names: Sequence[str], rows: np.ndarray) -> tuple[str, ...]:
    """The problem features that are sizes: every column not made only of 0 and 1 (flags)."""
    x = np.asarray(rows, dtype=np.float64)
    return tuple(n for j, n in enumerate(names) if not np.isin(x[:, j], (0.0, 1.0)).all())


def default_derived(names: Sequence[str], rows: np.ndarray) -> tuple[Derived, ...]:
    """Derived features for problems with these names and training rows.

    GEMM shapes (M, N, K, batch among the names) get the output size ``M*N``, ``M*N*batch``
    and the work ``K*M*N*batch``; any other problem gets, per size feature, the product of all
    the other sizes (with three or more sizes). Every size gets its divisibility by 16, 32,
    64 and 128."""
    sizes = size_features(names, rows)
    if GEMM_NAMES.issubset(names):
        products = list(GEMM_PRODUCTS)
    elif len(sizes) >= 3:
        products = [tuple(s for s in sizes if s != left_out) for left_out in sizes]
    else:
        products = [tuple(sizes)] if len(sizes) == 2 else []
    out = [Derived(DerivedKind.PRODUCT, p) for p in products]
    out += [Derived(DerivedKind.DIVISIBLE, (s,), d) for s in sizes for d in DIVISORS]
    return tuple(out)


def check_derived(derived: Sequence[Derived], names: Sequence[str]) -> None:
    """Every input a known feature, no derived name clashing with a feature or another."""
    known = set(names)
    seen = set(names)
    for d in derived:
        missing = [i for i in d.inputs if i not in known]
        if missing:
            raise SelectError(
                f"derived feature {d.text} reads {', '.join(missing)}, which the problem "
                f"does not have ({', '.join(names)})"
            )
        if d.name in seen:
            raise SelectError(f"derived feature {d.text} is named {d.name}, already taken")
        seen.add(d.name)


def with_derived(rows: np.ndarray, names: Sequence[str], derived: Sequence[Derived]) -> np.ndarray:
    """The raw feature columns followed by one column per derived feature."""
    x = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    if not derived:
        return x
    columns = {n: x[:, j] for j, n in enumerate(names)}
    return np.column_stack([x, *(d.values(columns) for d in derived)])
