"""Records shared by every layer: configurations, problems, devices, measurements."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any, Self

import numpy as np

from perfport._core.containers import as_mapping
from perfport._core.errors import SpecError
from perfport._core.outcome import Check, Outcome
from perfport._core.stats import Stats, summarize

Value = int | float | str | bool


def _plain(value: Any, what: str) -> Value:
    """Normalise numpy scalars to Python values; reject anything that is not a plain value."""
    if hasattr(value, "item") and not isinstance(value, int | float | str | bool):
        value = value.item()
    if not isinstance(value, int | float | str | bool):
        raise SpecError(f"{what}: value {value!r} must be a number, string or boolean")
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or infinity: stored, such a value made the whole database unreadable
        raise SpecError(f"{what}: value {value!r} must be a finite number")
    return value


def value_key(value: Any) -> tuple[bool, Any]:
    """A parameter value as a key that tells booleans from numbers. Python equates True with 1
    and False with 0, yet a parameter may take both (Kernel Tuner's own test cache declares
    ``['test', 1, True, 2.45]``): key values by this where one parameter's values meet. A
    tuple (a Kernel Tuner list value) is keyed element by element, as (True,) equals (1,)."""
    if isinstance(value, tuple):
        return (False, tuple(value_key(v) for v in value))
    return (isinstance(value, bool), value)


def same_value(given: Any, value: Any) -> bool:
    """Equal and of the same kind: True == 1 and 16.0 == 16 in Python, but a configuration
    saying ``true`` or ``16.0`` for an integer parameter is a mistake, not a spelling."""
    kinds = (bool, np.bool_), (int, np.integer), (float, np.floating), (str,)
    kind = next((k for k in kinds if isinstance(value, k)), None)
    return (
        given == value
        and (kind is None or isinstance(given, kind))
        and (isinstance(given, (bool, np.bool_)) == isinstance(value, (bool, np.bool_)))
    )


def distinct_values(values: Iterable[Any]) -> list[Any]:
    """``values`` without repeats, by value_key (1 and True both stay), each as first seen."""
    out: dict[tuple[bool, Any], Any] = {}
    for v in values:
        out.setdefault(value_key(v), v)
    return list(out.values())


_EXAMPLES = {"problem": "{'n': 4096}", "config": "{'wg': 64}"}


@dataclass(frozen=True)
class Assignment(Mapping[str, Value]):
    """An immutable, hashable name -> value mapping with a canonical text key."""

    items_: tuple[tuple[str, Value], ...] = ()

    def __post_init__(self) -> None:
        # Config({"wg": 64}) took the dict's keys for pairs and unpacked "wg" as w="g".
        if type(self.items_) is not tuple and isinstance(self.items_, Mapping):
            object.__setattr__(self, "items_", type(self).of(self.items_).items_)

    @classmethod
    def of(cls, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Self:
        what = cls.__name__.lower()
        if values is not None:  # 'n=4096' was a raw TypeError: 'str' object is not a mapping
            values = as_mapping(values, what, SpecError, _EXAMPLES.get(what, ""))
        merged = {**(values or {}), **kwargs}
        return cls(tuple(sorted((str(k), _plain(v, f"{what} {k}")) for k, v in merged.items())))

    @cached_property
    def _values(self) -> dict[str, Value]:
        # Built once: ``dict(assignment)`` and every ``env`` look each name up.
        return dict(self.items_)

    def __getitem__(self, key: str) -> Value:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self.items_)

    def __len__(self) -> int:
        return len(self.items_)

    def __hash__(self) -> int:
        return hash(self.items_)  # True and 1 hash alike; __eq__ tells them apart

    def __eq__(self, other: object) -> bool:
        # Type-aware for booleans (value_key): Python equates True with 1, which merged two
        # configurations of a parameter that takes both. 16 and 16.0 stay one value.
        if isinstance(other, Assignment):
            return (
                type(self) is type(other)
                and self.items_ == other.items_
                and self._booleans == other._booleans
            )
        return NotImplemented

    @cached_property
    def _booleans(self) -> tuple[bool, ...]:
        return tuple(isinstance(v, bool) for _, v in self.items_)

    @property
    def key(self) -> str:
        """Canonical JSON text: equal assignments have equal keys."""
        return json.dumps(dict(self.items_), sort_keys=True, separators=(",", ":"))

    def merged(self, other: Mapping[str, Any]) -> Self:
        if (
            isinstance(other, Assignment)
            and type(other) is type(self)
            and self._values.keys() <= other._values.keys()
        ):
            return other  # a resolved problem over its defaults: already the result
        return type(self).of({**self._values, **other})

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.items_)


class Config(Assignment):
    """One point in a search space: tunable parameter -> value."""

    def __str__(self) -> str:
        return super().__str__() or "(no parameters)"  # a kernel with nothing to tune


class Problem(Assignment):
    """The input a kernel runs on: problem parameter -> value (sizes, element type, ...)."""


class Language(Enum):
    OPENCL = "opencl"
    CUDA = "cuda"
    PORTABLE = "portable"  # perfport's macro dialect; compiles as OpenCL C and as CUDA C


class Backend(Enum):
    OPENCL = "opencl"
    CUDA = "cuda"
    EXTERNAL = "external"  # known only from imported data (e.g. a Kernel Tuner cache)

    def accepts(self, language: Language) -> bool:
        if self is Backend.EXTERNAL:
            return False
        return language is Language.PORTABLE or language.value == self.value


class DeviceType(Enum):
    CPU = "cpu"
    GPU = "gpu"
    ACCELERATOR = "accelerator"
    OTHER = "other"


CLIENT_PREFIX = "client:"  # the id of a device a daemon's client described: client:NAME


@dataclass(frozen=True)
class DeviceInfo:
    """What perfport knows about one device. ``id`` is how users name it on this machine;
    ``fingerprint`` identifies it across machines and processes (results are keyed by it)."""

    id: str  # "opencl:<platform>:<device>" or "cuda:<n>"
    backend: Backend
    name: str
    vendor: str
    type: DeviceType
    driver: str
    platform: str
    version: str
    compute_units: int
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    local_mem_bytes: int
    global_mem_bytes: int  # not in the fingerprint: PoCL reports a different value per process
    subgroup_size: int | None = None
    # What carries between CPUs (issue 31), where the driver reports it; not in the
    # fingerprint, so devices stored before these were recorded keep their identity.
    vector_width: int | None = None  # native float vector width: a CPU's SIMD lanes
    cache_bytes: int | None = None  # global memory cache: a CPU's last-level cache
    cache_line_bytes: int | None = None

    @cached_property
    def fingerprint(self) -> str:
        stable = [
            self.backend.value, self.vendor, self.name, self.driver, self.platform,
            self.version, self.compute_units, self.max_work_group_size,
            list(self.max_work_item_sizes), self.local_mem_bytes, self.subgroup_size,
        ]  # fmt: skip
        # A device a daemon's client described is never this machine's, however alike: its
        # row, and the refusals it reported, stay apart. Local fingerprints are unchanged.
        if self.described_by_client:
            stable.append("client")
        return hashlib.sha256(json.dumps(stable).encode()).hexdigest()[:16]

    @property
    def described_by_client(self) -> bool:
        """Whether a client of 'perfport serve' described this device (not found here)."""
        return self.id.startswith(CLIENT_PREFIX)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "fingerprint": self.fingerprint,
            "backend": self.backend.value,
            "name": self.name,
            "vendor": self.vendor,
            "type": self.type.value,
            "driver": self.driver,
            "platform": self.platform,
            "version": self.version,
            "compute_units": self.compute_units,
            "max_work_group_size": self.max_work_group_size,
            "max_work_item_sizes": list(self.max_work_item_sizes),
            "local_mem_bytes": self.local_mem_bytes,
            "global_mem_bytes": self.global_mem_bytes,
            "subgroup_size": self.subgroup_size,
            "vector_width": self.vector_width,
            "cache_bytes": self.cache_bytes,
            "cache_line_bytes": self.cache_line_bytes,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DeviceInfo:
        return cls(
            id=d["id"],
            backend=Backend(d["backend"]),
            name=d["name"],
            vendor=d["vendor"],
            type=DeviceType(d["type"]),
            driver=d["driver"],
            platform=d["platform"],
            version=d["version"],
            compute_units=int(d["compute_units"]),
            max_work_group_size=int(d["max_work_group_size"]),
            max_work_item_sizes=tuple(int(x) for x in d["max_work_item_sizes"]),
            local_mem_bytes=int(d["local_mem_bytes"]),
            global_mem_bytes=int(d["global_mem_bytes"]),
            subgroup_size=d.get("subgroup_size"),
            vector_width=d.get("vector_width"),
            cache_bytes=d.get("cache_bytes"),
            cache_line_bytes=d.get("cache_line_bytes"),
        )


@dataclass(frozen=True)
class Measurement:
    """The result of one configuration: its outcome, the driver's message, every timed sample
    (device-event times in milliseconds) and the build time."""

    config: Config
    outcome: Outcome
    message: str = ""
    times_ms: tuple[float, ...] = ()
    compile_ms: float | None = None
    stats: Stats | None = field(default=None, compare=False)
    # Whether the outputs were checked, and against what (a numpy reference, or a reference
    # configuration); None where a trial left no outputs, or the store predates the record.
    check: Check | None = field(default=None, compare=False)
    verified_against: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.stats is None and self.times_ms:
            object.__setattr__(self, "stats", summarize(self.times_ms))

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK and self.stats is not None

    @property
    def time_ms(self) -> float | None:
        """The objective: the median of the samples (robust to the odd slow launch)."""
        return self.stats.median if self.ok and self.stats else None
