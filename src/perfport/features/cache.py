"""Kernel features on disk, per kernel source and types: a new scenario's first prediction
compiles the kernel with PoCL for its instruction counts (0.3-1.9 s on the GPU machine), and
every later one, in this process or the next, reads them back.

One small JSON file per kernel build, named by a digest of what the counts depend on: the
code (language, entry, source), the ``-D`` defines (element types, borders, the default
configuration's compile-time values) and the instruction classes counted. The PoCL and LLVM
versions are not in the key: after upgrading them, delete the folder to count afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from perfport._core import KernelSpec

VERSION = 1  # of the counting method: bump when opcode classes or their reading change


def feature_key(spec: KernelSpec, defines: Mapping[str, str], classes: tuple[str, ...]) -> str:
    """The digest naming one kernel build's counts."""
    text = json.dumps(
        [VERSION, spec.source_hash, sorted(defines.items()), list(classes)], sort_keys=True
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class FeatureCache:
    """Instruction-class counts in ``directory`` (created on the first write). Reads and
    writes never raise for the cache's own sake: an unreadable entry is counted afresh, and a
    directory that cannot be written only costs the next process a compile."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def get(self, key: str, classes: tuple[str, ...]) -> dict[str, int] | None:
        try:
            counts = json.loads((self.directory / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None
        valid = isinstance(counts, dict) and set(counts) == set(classes)
        if not valid or not all(type(v) is int and v >= 0 for v in counts.values()):
            return None  # damaged or foreign: count again, and overwrite it
        return {c: counts[c] for c in classes}

    def put(self, key: str, counts: Mapping[str, int]) -> None:
        # Written whole to a temporary file and renamed: a reader never sees half a file.
        with contextlib.suppress(OSError):
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as out:
                    json.dump(dict(counts), out)
                os.replace(tmp, self.directory / f"{key}.json")
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
