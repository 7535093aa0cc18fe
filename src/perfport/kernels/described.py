"""Stencils described as data (a JSON object): what a client that is not Python gives.

A description says what the kernel is, so that it cannot lie about it:

- its ``GET(dx, dy)`` offsets are checked against the declared borders before anything is
  compiled when they are constants (``GET(0, 3)``, ``GET(-WEST, 0)``); when any is not (a loop,
  an expression of a variable), every ``GET`` is guarded at run time instead and a read outside
  the borders makes the trial wrong (``make_stencil(guard=True)``);
- ``dtype`` and ``out_dtype`` are its element types (the problem can still override them);
- ``reference`` is a numpy expression of the shifted neighbours, or ``reference_file`` a
  Python function (``file.py:function`` beside the JSON file), so its outputs are verified
  against what it is meant to compute, not only against another work-group size's.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfport._core import Expr, ExpressionError, KernelSpec, Problem, SpecError
from perfport.kernels.stencil import (
    BORDERS,
    MAX_BODY,
    MAX_BORDER,
    Shifted,
    make_stencil,
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_KEYS = ("name", "body", *BORDERS, "dtype", "out_dtype", "reference", "reference_file")
_DTYPES = ("int", "float", "double")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_GET = re.compile(r"\bGET\s*\(")
# A constant offset: integers, the border names, + - * and parentheses (C and Python agree).
_CONSTANT = re.compile(r"[\s()+\-*0-9]*(?:(?:NORTH|SOUTH|EAST|WEST)[\s()+\-*0-9]*)*")
# Neighbour names of a reference expression: (dx, dy), dx east and dy south.
NEIGHBOURS = {
    "C": (0, 0), "N": (0, -1), "S": (0, 1), "E": (1, 0), "W": (-1, 0),
    "NE": (1, -1), "NW": (-1, -1), "SE": (1, 1), "SW": (-1, 1),
}  # fmt: skip
_PROBLEM_NAMES = frozenset({"width", "height", "pad", *BORDERS})
# The top-level keys of Kernel Tuner's T1 and BAT's CAFF search-space files: a JSON file with
# any of them is one of those (perhaps incomplete), never a stencil description.
SEARCH_SPACE_KEYS = frozenset({"ConfigurationSpace", "KernelSpecification", "General"})


def described_stencil(description: Mapping[str, Any], path: Path | None = None) -> KernelSpec:
    """A stencil from a description, as a JSON object: ``name``, ``body`` (the customising
    function's C body, reading neighbours with ``GET(dx, dy)`` and returning an ``OUT``), the
    ``north``, ``south``, ``east``, ``west`` border sizes (0 when absent), and optionally
    ``dtype``/``out_dtype`` (int, float, double; out_dtype also 'same') and a ``reference``
    expression or a ``reference_file`` ('file.py:function', only for a description read from
    the file ``path``). This is how a client that is not Python (a launcher asking the daemon,
    a JSON file) gives its own stencil."""
    unknown = set(description) - set(_KEYS)
    if unknown:
        raise SpecError(
            f"stencil description: unknown keys {sorted(unknown)}; give {', '.join(_KEYS)}"
        )
    name, body = description.get("name"), description.get("body")
    if name is None:
        raise SpecError(
            'stencil description: name is missing; give "name": an identifier of at most 64 '
            "characters"
        )
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise SpecError(
            f"stencil description: name {name!r} must be an identifier of at most 64 characters"
        )
    if not isinstance(body, str) or not body.strip() or len(body) > MAX_BODY:
        raise SpecError(
            f"stencil {name}: body must be the C body of the customising function, 1 to {MAX_BODY} characters"
        )
    borders = _borders(name, description)
    constant = check_offsets(name, body, borders)
    spec = make_stencil(
        name,
        body,
        _reference(name, description, borders, path),
        problem=_types(name, description),
        borders=(str(borders[0]), str(borders[1]), str(borders[2]), str(borders[3])),
        doc=f"described stencil {name}",
        guard=not constant,
    )
    return spec


def described_stencil_file(path: Path, also: str = "") -> KernelSpec:
    """The stencil described in the JSON file ``path``; a file that cannot be read or is not
    a JSON object is refused in one line, naming what to give (``also``: what else the
    asking command takes, said after it)."""
    try:
        description = json.loads(path.read_text())
    except OSError as exc:
        raise SpecError(f"{path}: cannot be read ({exc.strerror}); give an existing file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(
            f"{path}: not JSON ({exc}); give a stencil description object (name, body, north, "
            f"...){also}"
        ) from None
    if not isinstance(description, dict):
        raise SpecError(
            f"{path}: not a JSON object but {type(description).__name__}; give a stencil "
            f"description object (name, body, north, ...){also}"
        )
    if keys := sorted(SEARCH_SPACE_KEYS & set(description)):
        raise SpecError(
            f"{path}: a Kernel Tuner T1 or BAT search-space file (it has {', '.join(keys)}), "
            "not a stencil description (name, body, north, ...); 'perfport space' reads "
            "search-space files"
        )
    return described_stencil(description, path)


def _borders(name: str, description: Mapping[str, Any]) -> tuple[int, int, int, int]:
    values = []
    for key in BORDERS:
        value = description.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BORDER:
            raise SpecError(
                f"stencil {name}: {key} must be an integer from 0 to {MAX_BORDER}, got {value!r}"
            )
        values.append(value)
    n, s, e, w = values
    return n, s, e, w


def _types(name: str, description: Mapping[str, Any]) -> dict[str, object]:
    types: dict[str, object] = {}
    for key, allowed in (("dtype", _DTYPES), ("out_dtype", (*_DTYPES, "same"))):
        if key in description:
            if description[key] not in allowed:
                raise SpecError(
                    f"stencil {name}: {key} must be one of {', '.join(allowed)}, "
                    f"got {description[key]!r}"
                )
            types[key] = description[key]
    return types


def _outside(
    name: str, dx: int, dy: int, borders: tuple[int, int, int, int], label: str = ""
) -> str:
    """Why offset (dx, dy) (written ``label``) lies outside the borders, with the fix; ''
    if inside."""
    n, s, e, w = borders
    for reach, border, key, what in (
        (-dy, n, "north", "rows north"),
        (dy, s, "south", "rows south"),
        (dx, e, "east", "columns east"),
        (-dx, w, "west", "columns west"),
    ):
        if reach > border:
            return (
                f"stencil {name}: {label or f'GET({dx}, {dy})'} reads {reach} {what} of the cell, beyond the "
                f'{key} border of {border}; set "{key}": {reach} or change the offset'
            )
    return ""


def get_offsets(body: str) -> list[tuple[str, str] | None]:
    """The argument texts of every ``GET(dx, dy)`` in ``body`` (comments left out); None for a
    ``GET`` whose arguments cannot be read as two (not a call, unbalanced)."""
    text = _COMMENT.sub(" ", body)
    found: list[tuple[str, str] | None] = []
    for match in _GET.finditer(text):
        depth, args, start = 1, [], match.end()
        for i in range(match.end(), len(text)):
            ch = text[i]
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if (ch == "," and depth == 1) or depth == 0:
                args.append(text[start:i])
                start = i + 1
            if depth == 0:
                break
        found.append((args[0], args[1]) if depth == 0 and len(args) == 2 else None)
    # A bare GET (passed as a name, say) cannot be checked either.
    bare = len(re.findall(r"\bGET\b", text)) - len(found)
    return found + [None] * bare


def check_offsets(name: str, body: str, borders: tuple[int, int, int, int]) -> bool:
    """SpecError (one line) for a constant ``GET`` offset outside the borders; True when every
    offset is a constant (no run-time guard needed), False when some must be guarded."""
    n, s, e, w = borders
    env = {"NORTH": n, "SOUTH": s, "EAST": e, "WEST": w}
    constant = True
    for offsets in get_offsets(body):
        values = [_constant(text, env) for text in offsets] if offsets else [None]
        if None in values:
            constant = False
            continue
        dx, dy = values
        assert dx is not None and dy is not None
        assert offsets is not None
        written = f"GET({offsets[0].strip()}, {offsets[1].strip()})"
        if written != f"GET({dx}, {dy})":
            written += f" = GET({dx}, {dy})"
        if problem := _outside(name, dx, dy, borders, written):
            raise SpecError(problem)
    return constant


def _constant(text: str, env: Mapping[str, int]) -> int | None:
    if not text.strip() or not _CONSTANT.fullmatch(text) or not re.search(r"\d|[A-Z]", text):
        return None
    try:
        value = Expr(text, "GET offset").value(env)
    except ExpressionError:
        return None
    return value if isinstance(value, int) else None


# ---- the reference ------------------------------------------------------------------------
def _reference(
    name: str,
    description: Mapping[str, Any],
    borders: tuple[int, int, int, int],
    path: Path | None,
) -> Callable[[Shifted, Problem], np.ndarray] | None:
    expression, file = description.get("reference"), description.get("reference_file")
    if expression is not None and file is not None:
        raise SpecError(f"stencil {name}: give reference or reference_file, not both")
    if expression is not None:
        return NeighbourExpression.parse(name, expression, borders)
    if file is None:
        return None
    if path is None:
        raise SpecError(
            f"stencil {name}: reference_file is only read from a JSON file beside it; "
            "give a reference expression instead"
        )
    from perfport.kernels.loader import _reference as load_function

    function: Callable[[Shifted, Problem], np.ndarray] = load_function(file, path)
    return function


@dataclass(frozen=True)
class NeighbourExpression:
    """A numpy reference written as a safe expression (``perfport._core.expr``, never eval)
    of the shifted neighbours: ``C``, ``N``, ``S``, ``E``, ``W``, ``NE``, ``NW``, ``SE``,
    ``SW`` and ``nb(dx, dy)`` for any constant offset, plus the problem's values."""

    text: str  # the expression with every nb(dx, dy) renamed nb_<dx>_<dy> (m for minus)
    offsets: tuple[tuple[str, int, int], ...]  # (name, dx, dy) of each neighbour used

    @classmethod
    def parse(cls, name: str, text: Any, borders: tuple[int, int, int, int]) -> NeighbourExpression:
        if not isinstance(text, str) or not text.strip() or len(text) > 10_000:
            raise SpecError(
                f"stencil {name}: reference must be an expression of the neighbours such as "
                "'0.25 * (N + S + E + W)' or 'nb(0, 1) - C'"
            )
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise SpecError(f"stencil {name}: reference {text[:60]!r}: {exc.msg}") from None
        offsets: dict[str, tuple[int, int]] = {}
        tree = _Renamer(name, offsets).visit(tree)
        renamed = ast.unparse(tree)
        try:
            expr = Expr(renamed, f"stencil {name} reference")
        except ExpressionError as exc:
            raise SpecError(str(exc)) from None
        unknown = expr.names - NEIGHBOURS.keys() - offsets.keys() - _PROBLEM_NAMES
        if unknown:
            raise SpecError(
                f"stencil {name}: reference names {', '.join(sorted(unknown))}; use the "
                f"neighbours {', '.join(NEIGHBOURS)}, nb(dx, dy) and {', '.join(sorted(_PROBLEM_NAMES))}"
            )
        for key in expr.names & NEIGHBOURS.keys():
            offsets[key] = NEIGHBOURS[key]
        for dx, dy in offsets.values():
            if problem := _outside(name, dx, dy, borders):
                raise SpecError(problem.replace("GET(", "the reference's nb("))
        return cls(renamed, tuple((k, dx, dy) for k, (dx, dy) in sorted(offsets.items())))

    def __call__(self, get: Shifted, problem: Problem) -> np.ndarray:
        env: dict[str, Any] = dict(problem.items())
        env.update({key: get(dx, dy) for key, dx, dy in self.offsets})
        result = Expr(self.text, "stencil reference").vector(env)
        return np.broadcast_to(np.asarray(result), get(0, 0).shape)


class _Renamer(ast.NodeTransformer):
    """nb(dx, dy) with integer constants -> the name nb_<dx>_<dy>."""

    def __init__(self, stencil: str, offsets: dict[str, tuple[int, int]]) -> None:
        self.stencil = stencil
        self.offsets = offsets

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id == "nb":
            values = [_integer(a) for a in node.args]
            if len(values) != 2 or None in values or node.keywords:
                raise SpecError(
                    f"stencil {self.stencil}: reference: nb takes two integer constants, "
                    "nb(dx, dy) (dx east, dy south)"
                )
            dx, dy = values
            assert dx is not None and dy is not None
            key = f"nb_{dx}_{dy}".replace("-", "m")
            self.offsets[key] = (dx, dy)
            return ast.copy_location(ast.Name(key, ast.Load()), node)
        return self.generic_visit(node)


def _integer(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _integer(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None
