"""A measurement kernel of 2-D tile loads with a halo: what every stencil that stages its
input in local memory loads, measured apart from any application.

Each work-group of ``lsize`` x ``lsize`` work-items loads one ``lsize`` x ``lsize`` tile of a
2-D global array (one element per work-item, lid(0) along a row) into local memory, waits at
a barrier, and each work-item stores one word of the tile read back in another row (so the
load and the barrier cannot be dropped). Neighbouring groups' tiles overlap by ``2 * halo``
rows and columns: a group advances ``lsize - 2 * halo`` elements per axis, the interior a
stencil of radius ``halo`` computes when the group spans its tile with the halo included.
The array's pitch is ``(lsize - 2 * halo) * ng + 2 * halo``, so a row segment (``lsize``
words) starts wherever the grid puts it, aligned to a 32-byte sector or not, as in any
stencil with a halo.

The tile load's statistics are those of any such stencil's: lid strides {0: 1, 1: pitch},
both group strides positive, and an access-to-footprint ratio above 1 (the halo is read by
two groups). ``paper-linear-tile.json`` prices loads of that kind by a cost per load and a
cost per row segment, fixed by this generator's kernels.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perfport.model.collection import KERNEL_PREFIX, Generator, VariantArg
from perfport.model.gather import loopy

# Row-segment lengths (words): multiples of 4 from 8 to 32 (whole, half and quarter
# 32-byte sectors, groups of 64 to 1024 work-items: 32 to 2 resident per SM on an H100) and
# two odd lengths, which no sector size divides.
TILE_LSIZES = (8, 11, 12, 16, 20, 24, 27, 28, 32)
TILE_HALOS = (1, 2)


def make_tile_halo(dtype: str, lsize: int, halo: int) -> Any:
    """Work-group (gi, gj) loads ``u[I*gi + li, I*gj + lj]`` (I = lsize - 2 * halo) into a
    local tile, waits at a barrier, and stores the tile's word of row ``lsize - 1 - li`` to
    ``out[lsize*gi + li, lsize*gj + lj]``: ``ng`` x ``ng`` groups, one load and one store
    per work-item."""
    lp = loopy()
    inner = lsize - 2 * halo
    if inner < 1:
        raise ValueError(f"tile {lsize} with halo {halo} has no interior; give lsize > 2*halo")
    tile = lp.TemporaryVariable(
        "tile", np.dtype(dtype), shape=(lsize, lsize), address_space=lp.AddressSpace.LOCAL
    )
    pitch = f"{inner}*ng + {2 * halo}"
    body = f"""
    tile[li, lj] = u[{inner}*gi + li, {inner}*gj + lj] {{id=fetch}}
    ... lbarrier {{id=sync, dep=fetch}}
    out[{lsize}*gi + li, {lsize}*gj + lj] = tile[{lsize - 1} - li, lj] {{id=store, dep=sync}}
    """
    knl = lp.make_kernel(
        f"{{[gi,gj,li,lj]: 0<=gi,gj<ng and 0<=li,lj<{lsize}}}",
        body,
        [
            lp.GlobalArg("u", np.dtype(dtype), shape=(pitch, pitch)),
            lp.GlobalArg("out", np.dtype(dtype), shape=(f"{lsize}*ng", f"{lsize}*ng")),
            lp.ValueArg("ng", np.int32),
            tile,
        ],
        name=f"{KERNEL_PREFIX}tile_halo",
        lang_version=(2018, 2),
    )
    knl = lp.assume(knl, "ng >= 1")
    return lp.tag_inames(knl, {"gi": "g.1", "gj": "g.0", "li": "l.1", "lj": "l.0"})


def tile_ng(scale: int) -> tuple[int, ...]:
    """Groups per side: on PoCL (scale 1) 16 and 32; on a GPU about sqrt(scale) times as
    many (an H200, scale 1056: 512 and 1024, 67M and 268M work-items in 16 x 16 groups).
    ``gpu_run.sh`` of experiments/2026-11-26-model-tile gives each lsize its own ng instead,
    so that every lsize runs about as many work-items."""
    base = 16 * max(1, round(math.sqrt(scale)))
    return (base, 2 * base)


def tile_generators(scale: int) -> list[Generator]:
    return [
        Generator(
            "tile_halo_pattern",
            frozenset({"gmem_tile", "tile_halo_pattern"}),
            (
                VariantArg("dtype", ("float32",)),
                VariantArg("lsize", TILE_LSIZES),
                VariantArg("halo", TILE_HALOS),
                VariantArg("ng", tile_ng(scale), open=True),
            ),
            make_tile_halo,
            frozenset({"ng"}),
            "2-D tile loads with a halo into local memory (lsize x lsize groups, rows of "
            "lsize words at unaligned starts), a barrier, one store per work-item",
        )
    ]
