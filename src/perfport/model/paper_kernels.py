"""The paper's other application kernels (sections 8.4 and 8.5) as loopy kernels: four
variants of discontinuous-Galerkin differentiation and two of a 2-D five-point finite
difference stencil, with their inputs and numpy references.

Every global load carries an access tag naming its variable and variant (``u$uDGP``), so a
model can give each access pattern its own feature (``f_mem_access_tag:uDGP``), as the paper
does, and the work remover (``workremoval.py``) can keep one pattern and strip the rest.
Where loopy stages a load in local memory (``add_prefetch``) it drops the tag; ``retag``
puts it back on the staging load.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perfport.model.gather import loopy

DG_MATRICES = 3  # the paper's nmatrices: one differentiation matrix per dimension in 3-D
DG_NODES = 64  # the paper's nunit_nodes (a multiple of the 16 x 16 work-group)
DG_TILE = 16  # lsize[0] = lsize[1]
DG_VARIANTS = ("plain", "prefetch-u", "prefetch-dm", "prefetch-dm-tr")
_DG_CODE = {"plain": "DGP", "prefetch-u": "DGU", "prefetch-dm": "DGD", "prefetch-dm-tr": "DGT"}
# How u and res lie in memory: node-fastest (C order: the first three variants) or
# element-fastest (prefetch-dm-tr's array-axis tags).
DG_LAYOUTS = ("node-fastest", "element-fastest")


def retag(program: Any, variable: str, tag: str) -> Any:
    """``program`` with every untagged load of global ``variable`` tagged ``tag``."""
    from loopy.kernel.instruction import Assignment, LegacyStringInstructionTag
    from loopy.symbolic import IdentityMapper, TaggedVariable
    from pymbolic.primitives import Subscript, Variable

    class _Tagger(IdentityMapper):
        def map_subscript(self, expr: Any) -> Any:
            index = self.rec(expr.index)
            agg = expr.aggregate
            if type(agg) is Variable and agg.name == variable:
                agg = TaggedVariable(variable, frozenset({LegacyStringInstructionTag(tag)}))
            return Subscript(agg, index)

    tagger = _Tagger()
    knl = program.default_entrypoint
    insns = [
        insn.copy(expression=tagger(insn.expression)) if isinstance(insn, Assignment) else insn
        for insn in knl.instructions
    ]
    return program.with_kernel(knl.copy(instructions=insns))


def dg_diff(variant: str, dtype: str = "float32", tile: int = DG_TILE) -> Any:
    """``res[m, k, i] = sum(j, diff_mat[m, i, j] * u[k, j])``: three 64 x 64 matrices applied
    to ``nelements`` elements of 64 nodes (section 8.4). k and i are split over tile x tile
    work-groups (16, the paper's, by default; a divisor of 64 is the configuration space of
    model-guided search), and tiles of j are as wide. ``plain`` stops there; ``prefetch-u``
    stages tiles of u in local memory and keeps one accumulator per matrix; ``prefetch-dm`` stages tiles of diff_mat;
    ``prefetch-dm-tr`` does too, with u and res stored element-fastest (lid(0) stride 1)."""
    lp = loopy()
    if variant not in DG_VARIANTS:
        raise ValueError(f"DG variant {variant!r}: give one of {', '.join(DG_VARIANTS)}")
    if tile < 1 or DG_NODES % tile:
        raise ValueError(f"DG tile {tile}: give a divisor of {DG_NODES}")
    code = _DG_CODE[variant]
    knl = lp.make_kernel(
        "{[m,k,i,j]: 0<=m<nmatrices and 0<=k<nelements and 0<=i,j<nunit_nodes}",
        f"res[m, k, i] = sum(j, diff_mat$dm{code}[m, i, j] * u$u{code}[k, j])",
        [
            lp.GlobalArg(
                "diff_mat", np.dtype(dtype), shape=("nmatrices", "nunit_nodes", "nunit_nodes")
            ),
            lp.GlobalArg("u", np.dtype(dtype), shape=("nelements", "nunit_nodes")),
            lp.GlobalArg("res", np.dtype(dtype), shape=("nmatrices", "nelements", "nunit_nodes")),
            ...,
        ],
        name="dg_" + variant.replace("-", "_"),
        lang_version=(2018, 2),
    )
    knl = lp.fix_parameters(knl, nmatrices=DG_MATRICES, nunit_nodes=DG_NODES)
    knl = lp.assume(knl, f"nelements >= {tile} and nelements mod {tile} = 0")
    knl = lp.split_iname(knl, "i", tile, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "k", tile, outer_tag="g.0", inner_tag="l.0")
    if variant == "prefetch-u":
        knl = lp.split_iname(knl, "j", tile)
        knl = lp.add_prefetch(
            knl, "u", ["k_inner", "j_inner"], fetch_outer_inames="i_outer,k_outer,j_outer",
            default_tag="l.auto",
        )  # fmt: skip
        knl = lp.add_inames_for_unused_hw_axes(knl)
        # The paper's restructuring: one accumulator per matrix, the m loop innermost.
        knl = lp.realize_reduction(knl)
        knl = lp.privatize_temporaries_with_inames(knl, "m")
        knl = lp.duplicate_inames(knl, "m", "id:*init*")
        knl = lp.duplicate_inames(knl, "m", "writes:res")
        knl = lp.prioritize_loops(knl, "j_outer,j_inner,m")
        knl = retag(knl, "u", f"u{code}")
    elif variant.startswith("prefetch-dm"):
        knl = lp.split_iname(knl, "j", tile)
        knl = lp.add_prefetch(knl, "diff_mat", ["j_inner", "i_inner"], default_tag="l.auto")
        knl = lp.add_inames_for_unused_hw_axes(knl)
        knl = lp.prioritize_loops(knl, "m,j_outer,j_inner")
        if variant == "prefetch-dm-tr":
            knl = lp.tag_array_axes(knl, "u", "N0,N1")
            knl = lp.tag_array_axes(knl, "res", "N2,N0,N1")
        knl = retag(knl, "diff_mat", f"dm{code}")
    return knl


def dg_inputs(nelements: int, rng: np.random.Generator, transposed: bool = False) -> dict[str, Any]:
    shape = (DG_MATRICES, DG_NODES, DG_NODES)
    u = rng.standard_normal((nelements, DG_NODES)).astype(np.float32)
    return {
        "diff_mat": rng.standard_normal(shape).astype(np.float32),
        "u": np.asfortranarray(u) if transposed else u,
    }


def dg_reference(diff_mat: np.ndarray, u: np.ndarray) -> np.ndarray:
    return np.einsum("mij,kj->mki", diff_mat, u)


def finite_diff(lsize: int, dtype: str = "float32") -> Any:
    """The five-point stencil on an (n + 2) x (n + 2) grid (section 8.5): lsize x lsize
    work-groups each stage an lsize x lsize tile of u (halo included) in local memory, one
    load per work-item, and (lsize - 2)^2 of them compute an interior point."""
    lp = loopy()
    interior = lsize - 2
    knl = lp.make_kernel(
        "{[i,j]: 0<=i,j<n}",
        "res[i, j] = u[i, j+1] + u[i+1, j] - 4*u[i+1, j+1] + u[i+1, j+2] + u[i+2, j+1]",
        [
            lp.GlobalArg("u", np.dtype(dtype), shape=("n+2", "n+2")),
            lp.GlobalArg("res", np.dtype(dtype), shape=("n", "n")),
            ...,
        ],
        name=f"finite_diff_{lsize}",
        lang_version=(2018, 2),
    )
    knl = lp.assume(knl, f"n >= {interior} and n mod {interior} = 0")
    knl = lp.split_iname(knl, "i", interior, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", interior, outer_tag="g.0", inner_tag="l.0")
    knl = lp.add_prefetch(knl, "u", ["i_inner", "j_inner"], fetch_bounding_box=True)
    knl = lp.tag_inames(knl, "u_dim_0:l.1, u_dim_1:l.0")
    return retag(knl, "u", f"uFD{lsize}")


def fd_inputs(n: int, rng: np.random.Generator) -> dict[str, Any]:
    return {"u": rng.standard_normal((n + 2, n + 2)).astype(np.float32)}


def fd_reference(u: np.ndarray) -> np.ndarray:
    return u[:-2, 1:-1] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1] + u[1:-1, 2:] + u[2:, 1:-1]
