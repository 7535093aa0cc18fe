"""A space's legal configurations are those Python's own eval keeps, for random restrictions
over parameters of numbers, conditions, strings and values of mixed types: membership in
lists of parameter expressions, text beside numbers, guards, branches and operands that
decide. The grid is evaluated whole where it can be; each point must come out as Python has
it (or, past a documented bound, a one-line error)."""

from __future__ import annotations

import itertools
import math
import random
import warnings

from perfport._core import Param, PerfportError
from perfport.space import Space

FUNCTIONS = {
    "min": min, "max": max, "abs": abs, "ceil": math.ceil, "floor": math.floor,
    "sqrt": math.sqrt, "log2": math.log2, "ceil_div": lambda a, b: -(-a // b),
    "round_up": lambda a, b: -(-a // b) * b, "is_pow2": lambda x: x > 0 and x & (x - 1) == 0,
}  # fmt: skip
POOLS = {
    "int": [0, 1, 2, 3, 4, 8, 16, 64, 1024, -1, -2, -8],
    "float": [0.0, 0.5, 1.0, 1.5, 2.0, 0.1, -1.5],
    "bool": [True, False],
    "str": ["a", "b", "tile", "1", "", "x y"],
    "mixed": [1, "a", True, 2.5, 2, "1", False, 0],
}
NAMES = ["bx", "by", "tile", "vw"]
LEAVES = ["0", "1", "2", "3", "4", "16", "-1", "0.5", "2.0", "'a'", "'1'", "'tile'", "True"]


def _values(rng: random.Random) -> tuple[object, ...]:
    pool = POOLS[rng.choice(["int", "int", "float", "bool", "str", "mixed"])]
    values: list[object] = []
    for v in rng.sample(pool, min(len(pool), rng.choice([1, 2, 3, 4]))):
        if not any(v == w for w in values):  # Python-equal values (1, True) are one value
            values.append(v)
    return tuple(values)


def _expression(rng: random.Random, names: list[str], depth: int = 0) -> str:
    def leaf() -> str:
        return rng.choice(names) if rng.random() < 0.6 else rng.choice(LEAVES)

    if depth > 3 or rng.random() < 0.25:
        return leaf()

    def sub() -> str:
        return _expression(rng, names, depth + 1)

    r = rng.random()
    if r < 0.3:
        op = rng.choice(["+", "-", "*", "/", "//", "%", "&", "|", "^", "**", "<<"])
        right = rng.choice(["2", "3", "0", "-1", "0.5"]) if op in ("**", "<<") else sub()
        return f"({sub()} {op} {right})"
    if r < 0.5:
        return f"({sub()} {rng.choice(['<', '<=', '>', '==', '!='])} {sub()})"
    if r < 0.62:
        return f"({sub()} {rng.choice(['and', 'or'])} {sub()})"
    if r < 0.67:
        return f"(not {sub()})"
    if r < 0.77:
        return f"({sub()} if {sub()} else {sub()})"
    if r < 0.9:  # items that are values of the configuration, of mixed types
        items = ", ".join(rng.choice([leaf(), sub()]) for _ in range(rng.choice([1, 2, 3])))
        return f"({sub()} {rng.choice(['in', 'not in'])} ({items},))"
    f = rng.choice(list(FUNCTIONS))
    arity = 2 if f in ("min", "max", "ceil_div", "round_up") else 1
    return f"{f}({', '.join(sub() for _ in range(arity))})"


def _python(params: list[Param], constraints: list[str]) -> list[tuple[object, ...]]:
    legal = []
    for combo in itertools.product(*(p.values for p in params)):
        env = dict(zip((p.name for p in params), combo, strict=True))
        if all(eval(c, {"__builtins__": {}, **FUNCTIONS}, env) for c in constraints):
            legal.append(combo)
    return legal


def _typed(combo: tuple[object, ...]) -> tuple[tuple[str, object], ...]:
    return tuple((type(v).__name__, v) for v in combo)


def test_random_restrictions_keep_what_python_keeps():
    checked = 0
    for seed in range(1000):
        rng = random.Random(seed)
        names = rng.sample(NAMES, rng.choice([1, 2, 3]))
        params = [Param(n, _values(rng)) for n in names]
        constraints = [_expression(rng, names) for _ in range(rng.choice([1, 2]))]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want: list[tuple[object, ...]] | None = _python(params, constraints)
        except Exception:  # Python raises somewhere: so must perfport
            want = None
        try:
            got = [tuple(c[n] for n in names) for c in Space(params, constraints)]
        except PerfportError as exc:
            message = str(exc)
            assert "\n" not in message, message
            # Past a documented bound perfport refuses what Python would compute.
            bounded = "no kernel input is that large" in message
            assert want is None or bounded, (seed, params, constraints, message)
            continue
        assert want is not None, (seed, params, constraints, "Python raises")
        assert sorted(map(_typed, got), key=repr) == sorted(map(_typed, want), key=repr), (
            seed, params, constraints,
        )  # fmt: skip
        checked += 1
    assert checked > 300  # many restrictions evaluate (others raise in Python too)
