"""Statistics computed once per kernel: in memory, and optionally as JSON files in a folder
(the CLI passes one under ``$XDG_CACHE_HOME``), keyed by loopy's hash of the program."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfport._core.errors import PerfportError, SpecError
from perfport.model.counts import KernelStats
from perfport.model.errors import UncountableKernel
from perfport.model.gather import SUBGROUP_SIZE, gather

# The counting rules' version in every key: statistics cached under older rules (before the
# issued count of hoist.py, the local memory per work-group, the sizes only an array's
# shape names, or the notes on conditionals and predicates) are gathered again instead of read
# without it.
COUNTING = "issued1-lmem1-shape1-notes1"


def program_key(program: Any, subgroup_size: int) -> str:
    """A stable digest of a loopy program (its domains, instructions, types and tags)."""
    from loopy.tools import LoopyKeyBuilder

    return f"{LoopyKeyBuilder()(program)}-sg{subgroup_size}-{COUNTING}"


def _uncountable(program: Any, exc: BaseException) -> str:
    name = next(iter(getattr(program, "entrypoints", ())), "the kernel")
    first = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"loopy cannot count {name} ({type(exc).__name__}: {first}); a simpler loop domain "
        "or index expression may count"
    )


class StatsCache:
    """Kernel statistics by program. ``gatherer`` is what computes them on a miss (loopy's
    counting, the slow part); ``folder`` keeps them across processes. Not thread-safe: one
    cache per thread."""

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        gatherer: Callable[[Any, int], KernelStats] = gather,
        subgroup_size: int = SUBGROUP_SIZE,
    ) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.gatherer = gatherer
        self.subgroup_size = subgroup_size  # where a caller gives none (the device's width)
        self._memory: dict[str, KernelStats] = {}

    def stats(self, program: Any, subgroup_size: int | None = None) -> KernelStats:
        subgroup_size = subgroup_size or self.subgroup_size
        key = program_key(program, subgroup_size)
        found = self._memory.get(key)
        if found is None:
            found = self._read(key)
        if found is None:
            try:
                found = self.gatherer(program, subgroup_size)
            except PerfportError:
                raise
            except Exception as exc:  # loopy and islpy raise bare errors of many kinds
                raise UncountableKernel(_uncountable(program, exc)) from None
            self._write(key, found)
        self._memory[key] = found
        return found

    def _path(self, key: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{key}.json"

    def _read(self, key: str) -> KernelStats | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            return KernelStats.from_json(json.loads(path.read_text()))
        except (SpecError, ValueError, OSError):
            return None  # a damaged entry is counted again and rewritten

    def _write(self, key: str, stats: KernelStats) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed: a reader never sees half a file.
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as f:
            f.write(stats.dumps())
        os.replace(f.name, path)
