"""Typed reads of a model or calibration file's JSON fields. A value of the wrong kind is a
``ValueError`` naming the field and what it should be ("parameters must be a JSON object,
e.g. {...}, not a list"), never Python's own words ("'int' object is not iterable")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def kind(value: Any) -> str:
    """A JSON value's kind, as a user who wrote the file would name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list | tuple) else "an object"


def shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def number(value: Any, where: str) -> float:
    """A JSON number (perfport writes no other: "1e-7" is a string a hand edit left)."""
    if not isinstance(value, bool) and isinstance(value, int | float):
        return float(value)
    fix = "; write it without quotes" if isinstance(value, str) else ""
    raise ValueError(f"{where} is {shown(value)}, not a number{fix}")


def boolean(value: Any, where: str) -> bool:
    """true or false ("false" would be read as true)."""
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false, not {kind(value)}")
    return value


def integer(value: Any, where: str) -> int:
    found = number(value, where) if not isinstance(value, int) or isinstance(value, bool) else value
    if not float(found).is_integer():
        raise ValueError(f"{where} is {shown(value)}, not a whole number")
    return int(found)


def mapping(value: Any, where: str, example: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be a JSON object, e.g. {example}, not {kind(value)}")
    return value


def numbers(value: Any, where: str, example: str) -> dict[str, float]:
    """An object of name: number."""
    return {str(k): number(v, f"{where}.{k}") for k, v in mapping(value, where, example).items()}


def names(value: Any, where: str) -> tuple[str, ...]:
    """A list of names (a string would be read letter by letter)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        shown = kind(value) if not isinstance(value, list | tuple) else "a list of other values"
        raise ValueError(f'{where} must be a list of names, e.g. ["p_launch"], not {shown}')
    return tuple(value)


def numbers_list(value: Any, where: str) -> tuple[float, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{where} must be a list of numbers, not {kind(value)}")
    return tuple(number(v, f"{where}[{i}]") for i, v in enumerate(value))
