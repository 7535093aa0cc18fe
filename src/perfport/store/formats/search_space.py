"""Search-space files of the community: Kernel Tuner's T1 input format and BAT's CAFF, read
by one reader, since both describe the space with the same ConfigurationSpace schema.

Both are JSON with ``ConfigurationSpace.TuningParameters`` (each ``Name``, ``Type``, ``Values``
as a Python list expression, ``Default``) and ``ConfigurationSpace.Conditions`` (each an
``Expression`` in Python syntax). Files from other tools are untrusted: values and conditions
go through perfport's whitelisting evaluators, and a malformed file is a one-line SpecError.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfport._core import DeviceInfo, Expr, Param, SpecError
from perfport._core.values import evaluate_values
from perfport.kernels.described import SEARCH_SPACE_KEYS
from perfport.space import Constraint, Space, device_constraints

_NOT_EXACT = object()  # a value that does not convert to the type exactly


def _to_int(v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("+-").isdigit():
        return int(v)
    return _NOT_EXACT  # 0.5 was truncated to 0, True merged with 1


def _to_float(v: Any) -> Any:
    if isinstance(v, int | float) and not isinstance(v, bool) and float(v) == v:
        return float(v)
    try:
        return float(v) if isinstance(v, str) else _NOT_EXACT
    except ValueError:
        return _NOT_EXACT


def _to_bool(v: Any) -> Any:
    if isinstance(v, bool) or v in (0, 1):
        return bool(v)
    text = v.strip().lower() if isinstance(v, str) else None
    return {"true": True, "false": False}.get(text or "", _NOT_EXACT)  # bool('false') is True


# The Type of a tuning parameter -> the conversion of its values (_NOT_EXACT: refused).
_CASTS: dict[str, Callable[[Any], Any]] = {
    "int": _to_int, "float": _to_float, "string": str, "str": str, "bool": _to_bool,
}  # fmt: skip
_MAX_BYTES = 64 << 20


@dataclass(frozen=True)
class SpaceDefinition:
    """Parameters, constraints and the default configuration read from a space file."""

    name: str
    params: tuple[Param, ...]
    constraints: tuple[str, ...]
    default: dict[str, Any] | None
    local_size: tuple[str, ...] = ()  # KernelSpecification.LocalSize, when it names parameters

    def space(self, constraints: int | None = None, device: DeviceInfo | None = None) -> Space:
        """The legal configurations, under all constraints or only the first ``constraints``,
        and under the device's work-group limits when a device is given."""
        chosen = self.constraints if constraints is None else self.constraints[:constraints]
        rules = [Constraint.of(c) for c in chosen]
        if device is not None:
            rules += device_constraints(device, self.local_size)
        return Space(self.params, rules)


def is_space_file(path: str | Path) -> bool:
    """True for a JSON file that looks like T1 or CAFF (a ConfigurationSpace, T1's
    KernelSpecification or General at the top): one that lacks a part is read as one, so that
    its error names the part, not a stencil description's keys."""
    p = Path(path)
    if p.suffix.lower() != ".json" or not p.is_file():
        return False
    try:
        data = json.loads(p.read_text()[:_MAX_BYTES])
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and bool(SEARCH_SPACE_KEYS & set(data))


def load_space_file(path: str | Path) -> SpaceDefinition:
    """Read a T1 or CAFF search-space file."""
    p = Path(path)
    where = str(p)
    try:
        if p.stat().st_size > _MAX_BYTES:
            raise SpecError(f"{where}: larger than {_MAX_BYTES >> 20} MiB; not a search-space file")
        data = json.loads(p.read_text())
    except OSError as exc:
        raise SpecError(f"{where}: cannot read it ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise SpecError(f"{where}: not valid JSON ({exc}); give a T1 or CAFF file") from None
    space = data.get("ConfigurationSpace") if isinstance(data, dict) else None
    if not isinstance(space, dict) or not isinstance(space.get("TuningParameters"), list):
        raise SpecError(
            f"{where}: no ConfigurationSpace.TuningParameters list (the tuning parameters); a "
            "Kernel Tuner T1 or BAT CAFF file lists them there"
        )
    params = tuple(_param(entry, where) for entry in space["TuningParameters"])
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise SpecError(f"{where}: parameter names repeat in {names}")
    conditions = space.get("Conditions", [])
    if not isinstance(conditions, list):
        raise SpecError(f"{where}: Conditions must be a list")
    constraints = tuple(_condition(c, i, where, set(names)) for i, c in enumerate(conditions))
    general = data.get("General") if isinstance(data.get("General"), dict) else {}
    name = str(general.get("BenchmarkName") or p.stem)
    default = _default(space["TuningParameters"], params)
    return SpaceDefinition(name, params, constraints, default, _local_size(data, set(names)))


def _local_size(data: dict[str, Any], names: set[str]) -> tuple[str, ...]:
    spec = data.get("KernelSpecification")
    local = spec.get("LocalSize") if isinstance(spec, dict) else None
    if not isinstance(local, dict):
        return ()
    dims = tuple(str(local.get(axis, "1")) for axis in ("X", "Y", "Z"))
    try:
        if all(Expr(d, "LocalSize").names <= names for d in dims):
            return dims
    except SpecError:
        pass
    return ()  # some files name parameters that do not exist (gemm_milo's block_size_x)


def _param(entry: Any, where: str) -> Param:
    if not isinstance(entry, dict) or "Name" not in entry or "Values" not in entry:
        raise SpecError(
            f"{where}: each tuning parameter needs Name and Values, got {str(entry)[:80]}"
        )
    name = entry["Name"]
    raw = entry["Values"]
    values = (
        evaluate_values(raw, f"{where}: parameter {name} Values") if isinstance(raw, str) else raw
    )
    if not isinstance(values, list | tuple):
        raise SpecError(f"{where}: parameter {name}: Values must be a list")
    cast = _CASTS.get(str(entry.get("Type", "")).lower())
    converted = tuple(cast(v) if cast else v for v in values)
    for v, c in zip(values, converted, strict=True):
        if c is _NOT_EXACT:
            raise SpecError(
                f"{where}: parameter {str(name)[:40]}: value {repr(v)[:40]} does not convert "
                f"exactly to its Type {entry.get('Type')!r}; give values of that Type, or the "
                "Type of its values"
            )
    values = converted
    for v in values:
        if not isinstance(v, bool | int | float | str):
            raise SpecError(
                f"{where}: parameter {str(name)[:40]}: value {str(v)[:40]} is not a number, "
                "string or boolean"
            )
    try:  # the tools accept repeats; a set is meant
        return Param(name, tuple(dict.fromkeys(values)))
    except SpecError as exc:  # Param's own message ("give at least one value") lacks the file
        raise SpecError(f"{where}: {exc}") from None


def _condition(entry: Any, index: int, where: str, names: set[str]) -> str:
    text = entry.get("Expression") if isinstance(entry, dict) else entry
    if not isinstance(text, str):
        raise SpecError(f"{where}: condition {index} has no Expression string")
    expr = Expr(text, f"{where}: condition {index}")
    unknown = expr.names - names
    if unknown:
        raise SpecError(
            f"{where}: condition {index} {text!r} uses unknown parameter(s) {sorted(unknown)}"
        )
    return text


def _default(entries: list[Any], params: tuple[Param, ...]) -> dict[str, Any] | None:
    default = {}
    for entry, p in zip(entries, params, strict=True):
        value = entry.get("Default")
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        cast = _CASTS.get(str(entry.get("Type", "")).lower())
        if cast is not None and value is not None:  # "true" of a bool is True, as its values
            converted = cast(value)
            value = value if converted is _NOT_EXACT else converted
        if value not in p.values:
            return None
        default[p.name] = value
    return default
