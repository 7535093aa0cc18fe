"""A described stencil rebuilt from what a results database keeps of it: its source (the
stencil template with the body in it) and its ``KernelSpec.describe`` (borders and types).
A tool that needs the kernel itself long after its JSON file is gone (the features of a
work-group dataset) rebuilds it here, and a row that is not one's is refused, saying why."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from perfport._core import KernelSpec, SpecError
from perfport.kernels.described import described_stencil
from perfport.kernels.stencil import BORDERS, make_stencil

_MARK = "\0BODY\0"  # no stored C body holds a NUL
_CELLS = re.compile(r"[0-9]{1,9}")


@functools.cache
def _frames() -> tuple[tuple[str, str], ...]:
    """The template's text before and after the body: plain, and guarded (``guard=True``)."""
    frames = []
    for guard in (False, True):
        before, after = make_stencil("frame", _MARK, None, guard=guard).source.split(_MARK)
        frames.append((before, after))
    return tuple(frames)


def stored_body(source: str) -> str | None:
    """The customising function's C body in a stencil's ``source``; None where the source is
    not this perfport's stencil template (another kernel, or another version's template)."""
    for before, after in _frames():
        inside = len(source) - len(before) - len(after)
        if inside > 0 and source.startswith(before) and source.endswith(after):
            return source[len(before) : len(before) + inside]
    return None


def rebuilt_stencil(
    name: str, source: str, source_hash: str, description: Mapping[str, Any]
) -> KernelSpec:
    """The described stencil ``name`` that was stored with ``source`` (whose hash the store
    keeps as ``source_hash``) and ``description`` (``KernelSpec.describe``), rebuilt as
    ``described_stencil`` builds it, without its reference (nothing is verified). SpecError,
    one line saying why, where they are not a described stencil's or not whole: the rebuilt
    kernel's code, hash and defines must be the stored ones."""
    body = stored_body(source)
    if body is None:
        raise SpecError("its stored code is not this perfport version's stencil template")
    defines, problem = description.get("defines"), description.get("problem")
    if not isinstance(defines, Mapping) or not isinstance(problem, Mapping):
        raise SpecError("its stored description is missing or damaged (no defines or problem)")
    given: dict[str, Any] = {"name": name, "body": body}
    for key in BORDERS:
        cells = defines.get(key.upper())
        if not isinstance(cells, str) or not _CELLS.fullmatch(cells):
            raise SpecError(f"its stored {key} border {cells!r} is not a number of cells")
        given[key] = int(cells)
    given.update({k: problem[k] for k in ("dtype", "out_dtype") if k in problem})
    spec = described_stencil(given)
    if spec.source != source:  # guarded where it was not: made in Python (make_stencil)
        raise SpecError("its stored code is not what a description of it gives")
    if spec.source_hash != source_hash:
        raise SpecError("its stored code does not match its stored hash (a damaged row)")
    if dict(spec.defines) != dict(defines):
        raise SpecError("its stored defines are not those of its borders and types")
    return spec
