"""Bank conflicts of local-memory accesses, from a pattern's strides and the work-group shape.

Local memory is split into ``banks`` banks ``bank_bytes`` wide; a word (``bank_bytes``
bytes) at word address ``w`` lives in bank ``w % banks``. A sub-group (NVIDIA's warp) issues
one access for all its lanes, which the hardware serves in as many passes (wavefronts) as the
most distinct words any one bank must deliver: lanes reading the same word share it (a
broadcast), lanes reading different words of one bank wait for each other. That count is the
access's *conflict degree*: 1 without conflicts, up to the sub-group width.

Which lanes form a sub-group depends on the work-group's shape: work-items are numbered
lid(0) fastest, then lid(1), then lid(2), and each run of ``subgroup`` consecutive numbers
is one sub-group. So a lid(0) stride of 16 words puts 32 lanes into 2 banks in a 1-D group of
256 (16-fold), but in a 16 x 16 group a sub-group is 16 lid(0) by 2 lid(1), and with lid(1)
stride 0 the second row re-reads the first row's words (8-fold).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import lru_cache

BANKS = 32  # NVIDIA since Fermi, AMD's LDS: 32 banks ...
BANK_BYTES = 4  # ... of four bytes each


def conflict_degree(
    lstrides: Mapping[int, int],
    local_sizes: Sequence[int],
    subgroup: int,
    element_bytes: int,
    banks: int = BANKS,
    bank_bytes: int = BANK_BYTES,
) -> float:
    """Mean conflict degree over the sub-groups of one work-group of an access whose element
    index moves by ``lstrides[axis]`` elements per step of lid(axis) (an axis not given: 0).
    The base address is taken as bank-aligned: a common offset shifts every lane's bank
    alike and changes no degree for elements of whole words."""
    strides = tuple(int(lstrides.get(a, 0)) for a in range(len(local_sizes)))
    return _degree(strides, tuple(int(s) for s in local_sizes), subgroup, element_bytes,
                   banks, bank_bytes)  # fmt: skip


@lru_cache(maxsize=4096)
def _degree(
    strides: tuple[int, ...],
    sizes: tuple[int, ...],
    subgroup: int,
    element_bytes: int,
    banks: int,
    bank_bytes: int,
) -> float:
    if min(sizes, default=1) < 1 or subgroup < 1 or element_bytes < 1 or banks < 1:
        raise ValueError("work-group sizes, sub-group width, element and bank sizes must be >= 1")
    group = 1
    for s in sizes:
        group *= s
    degrees = []
    for first in range(0, group, subgroup):
        words: dict[int, set[int]] = defaultdict(set)  # bank -> distinct words it serves
        for lane in range(first, min(first + subgroup, group)):
            element = sum(st * idx for st, idx in zip(strides, _ids(lane, sizes), strict=True))
            start = element * element_bytes
            # An element wider than a bank spans several words, each a bank access of its own.
            for word in range(start // bank_bytes, (start + element_bytes - 1) // bank_bytes + 1):
                words[word % banks].add(word)
        degrees.append(max(len(w) for w in words.values()))
    return sum(degrees) / len(degrees)


def _ids(linear: int, sizes: tuple[int, ...]) -> tuple[int, ...]:
    """lid(0), lid(1), ... of the work-item numbered ``linear`` (lid(0) fastest)."""
    ids = []
    for s in sizes:
        ids.append(linear % s)
        linear //= s
    return tuple(ids)
