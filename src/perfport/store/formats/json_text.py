"""JSON text other tools can read: Python's ``json`` writes NaN and Infinity by default, which
no JSON parser accepts (perfport's own import included)."""

from __future__ import annotations

import json
import math
from typing import Any

from perfport._core import StoreError
from perfport.store.formats.untrusted import clip


def strict_json(document: Any, what: str) -> str:
    """``document`` as JSON text, or a one-line error naming where it holds NaN or an infinity
    (a result a store took in before its importers refused such times)."""
    try:
        return json.dumps(document, allow_nan=False)
    except ValueError:
        where = non_finite(document) or "a value"
        raise StoreError(
            f"cannot write {what}: {where} is not a finite number, which JSON cannot hold; the "
            "stored result is not a time (`perfport export --format csv` shows it as inf or nan)"
        ) from None


def non_finite(value: Any, where: str = "") -> str | None:
    """Where in ``value`` (as ``[key][index]``) the first NaN or infinity is; None if nowhere."""
    if isinstance(value, float):
        return None if math.isfinite(value) else where or "the value"
    if isinstance(value, list | tuple):
        value = dict(enumerate(value))
    for key, item in value.items() if isinstance(value, dict) else ():
        found = non_finite(item, f"{where}[{clip(key)}]")
        if found is not None:
            return found
    return None


def finite_or_null(value: Any) -> Any:
    """``value`` with every NaN and infinity replaced by None (JSON's null)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value
