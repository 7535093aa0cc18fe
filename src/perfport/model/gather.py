"""Kernel statistics from loopy (the ``model`` extra): operations, memory accesses with their
strides and access-to-footprint ratios, synchronisations and thread groups, symbolic in the
problem sizes, as a :class:`~perfport.model.counts.KernelStats`.

Counting is loopy's (islpy's piecewise quasi-polynomials). Where islpy has no barvinok,
loopy counts a loop domain by its bounding box and warns when that over-, under- or
misestimates; those warnings are recorded in ``KernelStats.approximations``, as is loopy's
sub-group count (it divides each work-group by the sub-group size, rounding up). loopy 2025.2
counts additions and multiplications apart; the paper's multiply-add sequences are found here
(``_MaddCounter``), which is why this module uses a few of loopy's internals, pinned by the
extra's ``loopy==2025.2``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from fractions import Fraction
from typing import Any

from perfport._core.errors import PerfportError, SpecError
from perfport._core.optional import require
from perfport.model.counts import (
    Granularity,
    KernelStats,
    MemCount,
    OpCount,
    SyncCount,
    SyncKind,
)
from perfport.model.errors import UncountableKernel
from perfport.model.hoist import hoisted_removals, subtract
from perfport.model.notes import structural_notes

SUBGROUP_SIZE = 32  # the paper's one hardware statistic: NVIDIA's and AMD's sub-group width


def loopy() -> Any:
    return require("loopy", "model", "Kernel statistics")


def gather(program: Any, subgroup_size: int = SUBGROUP_SIZE) -> KernelStats:
    """The statistics of a loopy program (one entrypoint) with ``subgroup_size`` work-items
    per sub-group. Slow (loopy and islpy): ``StatsCache`` keeps the result."""
    # loopy prints some diagnostics (a set's pieces it cannot make convex) to stdout, where
    # they would break a command's --json: they go to stderr.
    with redirect_stdout(sys.stderr):
        try:
            return _gather(program, subgroup_size)
        except PerfportError:
            raise
        except Exception:  # loopy's bare errors: an indirect access is one it never counts
            _refuse_indirect(program)
            raise


def _refuse_indirect(program: Any) -> None:
    """An UncountableKernel naming an access whose index reads an array's values
    (``x[idx[i]]``): loopy counts accesses only where the indices are affine in the loop
    indices and sizes, and fails inside on any other (a pymbolic error that says nothing)."""
    lp = loopy()
    from loopy.symbolic import WalkMapper, get_dependencies
    from pymbolic.primitives import Subscript

    try:
        knl = program if isinstance(program, lp.LoopKernel) else program.default_entrypoint
    except Exception:  # no single entrypoint: _gather said so, or loopy did
        return
    data = {a.name for a in knl.args if not isinstance(a, lp.ValueArg)}
    data |= set(knl.temporary_variables)
    found: list[tuple[str, str, list[str]]] = []

    class _Walk(WalkMapper):
        def visit(self, expr: Any, *args: Any, **kwargs: Any) -> bool:
            if isinstance(expr, Subscript) and not found:
                names = sorted(get_dependencies(expr.index) & data)
                if names:
                    found.append((str(expr), str(expr.aggregate), names))
            return True

    walk = _Walk()
    for insn in knl.instructions:
        for expr in (getattr(insn, "expression", None), *getattr(insn, "assignees", ())):
            if expr is not None and not found:
                walk(expr)
    if found:
        access, array, names = found[0]
        raise UncountableKernel(
            f"loopy cannot count {knl.name}: {access} indexes {array} by the values of "
            f"{', '.join(names)} (an indirect access), and loopy counts only accesses whose "
            f"indices are affine in the loop indices and sizes; count a variant that indexes "
            f"{array} directly instead"
        )


def _gather(program: Any, subgroup_size: int) -> KernelStats:
    lp = loopy()
    if not isinstance(program, lp.TranslationUnit | lp.LoopKernel):
        raise SpecError(f"expected a loopy kernel, got {type(program).__name__}")
    if isinstance(program, lp.LoopKernel):
        program = lp.make_program(program)
    if len(program.entrypoints) != 1:
        names = ", ".join(sorted(program.entrypoints)) or "none"
        raise SpecError(f"kernel statistics need a loopy program with exactly one entrypoint; "
                        f"this one has {names}: keep one with "
                        "program.with_entrypoints('NAME')")  # fmt: skip
    from loopy.preprocess import infer_unknown_types, preprocess_program

    notes: list[str] = []
    with _noted(notes, "preprocessing"):
        program = infer_unknown_types(preprocess_program(program), expect_completion=True)
    knl = program[next(iter(program.entrypoints))]
    notes += structural_notes(knl)  # what loopy counts without a warning (notes.py)
    with _noted(notes, "operation counts"):
        ops = _ops(program, knl, subgroup_size)
    with _noted(notes, "memory access counts"):
        mem = _mem(program, knl, subgroup_size, notes)
    with _noted(notes, "synchronisation counts"):
        sync = _sync(program, subgroup_size)
    gsize, lsize = knl.get_grid_size_upper_bounds_as_exprs(program.callables_table)
    return KernelStats(
        kernel=knl.name,
        params=tuple(sorted(_params(knl))),
        subgroup_size=subgroup_size,
        ops=ops,
        mem=mem,
        sync=sync,
        thread_groups=_product_text(gsize),
        work_group_size=_product_text(lsize),
        guard=assumptions_text(knl),
        approximations=tuple(dict.fromkeys(notes)),
        local_mem_bytes=local_bytes(knl),
    )


def local_bytes(knl: Any) -> str:
    """Bytes of local memory one work-group declares: its local temporaries (an expression in
    the kernel's parameters)."""
    lp = loopy()
    terms = []
    for tv in knl.temporary_variables.values():
        if tv.address_space != lp.AddressSpace.LOCAL:
            continue
        itemsize = getattr(tv.dtype, "numpy_dtype", tv.dtype).itemsize
        terms.append(" * ".join([str(itemsize), *(f"({_py(s)})" for s in tv.shape or ())]))
    return " + ".join(terms) or "0"


def _params(knl: Any) -> set[str]:
    """The kernel's sizes: its assumptions' parameters and the names its arguments' shapes
    use. A size only an array's shape names (x of m elements, n of them read) is still one
    the problem gives: it sizes the array perfport allocates."""
    isl = require("islpy", "model", "Kernel statistics")
    from loopy.symbolic import get_dependencies

    space = knl.assumptions.space
    names = {
        space.get_dim_name(isl.dim_type.param, i) for i in range(space.dim(isl.dim_type.param))
    }
    for arg in knl.args:
        shape = getattr(arg, "shape", None)
        for extent in shape if isinstance(shape, tuple) else ():  # not lp.auto or None
            names |= {str(n) for n in get_dependencies(extent)}
    return names


# loopy's counting warnings, by key: which counts are approximations, and why.
_APPROXIMATIONS = {
    "count_overestimate": "over-estimated (no barvinok: a loop domain counted by its box)",
    "count_underestimate": "under-estimated (no barvinok: a loop domain counted by its box)",
    "count_misestimate": "approximate (no barvinok: a loop domain counted by its box)",
    "insn_count_subgroups_upper_bound": (
        "per sub-group: work-groups divided into sub-groups rounding up"
    ),
    "summing_if_branches_ops": "both branches of a conditional counted",
    "summing_ifpos_branches_ops": "both branches of a conditional counted",
}


@contextmanager
def _noted(notes: list[str], what: str) -> Iterator[None]:
    """Records loopy's counting warnings raised inside as notes on ``what``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        text = str(w.message)
        notes.extend(f"{what}: {note}" for key, note in _APPROXIMATIONS.items() if key in text)


def _ops(program: Any, knl: Any, subgroup_size: int) -> tuple[OpCount, ...]:
    from loopy.kernel.instruction import Assignment, CallInstruction
    from loopy.statistics import _get_insn_count

    counter = _madd_counter_class()(knl, program.callables_table, None, True)
    total: dict[tuple[str, str, str], Any] = {}
    for insn in knl.instructions:
        if not isinstance(insn, CallInstruction | Assignment):
            continue
        found = counter(insn.assignees) + counter(insn.expression)
        for key, per_run in found.count_map.items():
            runs = _get_insn_count(
                knl, program.callables_table, insn.id, subgroup_size, True, key.count_granularity
            )
            k = (_dtype(key.dtype), key.name, key.count_granularity)
            total[k] = total[k] + runs * per_run if k in total else runs * per_run
    return tuple(
        OpCount(dtype, op, Granularity(g), _count_text(value))
        for (dtype, op, g), value in sorted(total.items())
        if not _is_zero(value)
    )


def _madd_counter_class() -> type:
    """loopy's operation counter, with ``a*b + c`` counted as one multiply-add: in a sum of
    k terms, each product term up to k - 1 of them takes one addition and one multiplication
    into a madd (made lazily: loopy is an optional import). A subtraction is a sum with a
    product by -1, which loopy counts as no multiplication: only products that multiply fuse."""
    from loopy.statistics import ExpressionOpCounter, Op
    from pymbolic.primitives import Product, is_zero

    def multiplications(term: Any) -> int:
        """As loopy counts them: a product of k factors other than -1 is k - 1 of them."""
        if not isinstance(term, Product):
            return 0
        factors = sum(not is_zero(c + 1) for c in term.children)
        return factors - 1 + sum(multiplications(c) for c in term.children)

    class _MaddCounter(ExpressionOpCounter):
        def map_sum(self, expr: Any) -> Any:
            result = super().map_sum(expr)
            products = [c for c in expr.children if multiplications(c) > 0]
            fused = min(len(expr.children) - 1, len(products))
            if not fused:
                return result
            grain, name = self.arithmetic_count_granularity, self.knl.name
            adjust = {
                Op(self.type_inf(expr), "madd", grain, name): self.zero + fused,
                Op(self.type_inf(expr), "add", grain, name): self.zero - fused,
            }
            fix = self.new_poly_map(adjust)
            for product in products[:fused]:
                fix = fix + self.new_poly_map(
                    {Op(self.type_inf(product), "mul", grain, name): self.zero - 1}
                )
            return result + fix

    return _MaddCounter


def _mem(program: Any, knl: Any, subgroup_size: int, notes: list[str]) -> tuple[MemCount, ...]:
    lp = loopy()
    access = lp.get_mem_access_map(program, count_redundant_work=True, subgroup_size=subgroup_size)
    global_vars = {str(k.variable) for k in access.count_map if str(k.mtype) == "global"}
    footprints = _footprints(program, knl, global_vars, notes)
    try:
        removed = hoisted_removals(program, knl, subgroup_size)
    except Exception as exc:  # loopy's bare errors: the optional count must not cost the rest
        notes.append(f"issued counts: loopy's, no load hoisted ({_reason(exc)})")
        removed = {}
    result = []
    for key, value in access.count_map.items():
        direction = "load" if key.direction == "load" else "store"
        # Local arrays' footprints are per work-group, their counts per kernel: no ratio.
        footprint = (
            footprints.get((key.variable, "read" if direction == "load" else "write"))
            if str(key.mtype) == "global"
            else None
        )
        result.append(
            MemCount(
                mtype=str(key.mtype),
                dtype=_dtype(key.dtype),
                direction=direction,
                variable=str(key.variable),
                tags=tuple(sorted(str(getattr(t, "value", t)) for t in key.variable_tags)),
                lstrides=_strides(key.lid_strides),
                gstrides=_strides(key.gid_strides),
                granularity=Granularity(key.count_granularity),
                count=_count_text(value),
                footprint=footprint or "",
                issued=_count_text(subtract(value, removed[key]) if key in removed else value),
            )
        )
    result.sort(key=lambda m: (m.mtype, m.variable, m.direction, m.lstrides, m.gstrides))
    return tuple(result)


def _footprints(
    program: Any, knl: Any, variables: set[str], notes: list[str]
) -> dict[tuple[str, str], str]:
    """Distinct elements each of the global ``variables`` is read and written at, where loopy
    can say. Local arrays are left out: their ratio is never used, and a strided local read
    (``loc[2*lid + k % 8]``) has a footprint isl cannot make convex, which loopy's counting
    raises on."""
    lp = loopy()
    from loopy.statistics import count

    try:
        sets = lp.gather_access_footprints(program, ignore_uncountable=True)
    except Exception:  # loopy raises bare errors for footprints it cannot bound; none then
        notes.append("footprints: none (loopy cannot bound them)")
        return {}
    found = {}
    for key, fp in sets.items():
        if key[0] not in variables:
            continue
        try:
            found[key] = _count_text(count(knl, fp))
        except Exception as exc:  # as above: one uncountable footprint leaves the others
            notes.append(f"footprint of {key[0]} ({key[1]}): not counted ({_reason(exc)})")
    return found


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")


def _sync(program: Any, subgroup_size: int) -> tuple[SyncCount, ...]:
    lp = loopy()
    found = lp.get_synchronization_map(program, subgroup_size=subgroup_size)
    kinds = {k.value: k for k in SyncKind}
    result = []
    for key, value in found.count_map.items():
        kind = kinds.get(str(key.kind))
        if kind is not None:
            result.append(SyncCount(kind, _count_text(value)))
    return tuple(sorted(result, key=lambda s: s.kind.value))


def _dtype(dtype: Any) -> str:
    numpy_dtype = getattr(dtype, "numpy_dtype", dtype)
    return str(getattr(numpy_dtype, "name", numpy_dtype))


def _strides(strides: Any) -> tuple[tuple[int, str], ...]:
    return tuple(sorted((int(axis), _py(stride)) for axis, stride in dict(strides).items()))


def _product_text(sizes: Any) -> str:
    return " * ".join(f"({_py(s)})" for s in sizes) or "1"


# {{{ isl piecewise quasi-polynomials and sets as perfport expression text


def _count_text(value: Any) -> str:
    """``a if cond else (b if cond2 else 0)`` for a (guarded) piecewise quasi-polynomial."""
    pw = getattr(value, "pwqpolynomial", value)
    if isinstance(pw, int | float):
        return str(pw)
    text = "0"
    for domain, qpoly in reversed(pw.get_pieces()):
        cond = _set_text(domain)
        body = _qpoly_text(qpoly)
        text = body if cond == "True" and text == "0" else f"({body}) if ({cond}) else ({text})"
    return text


def _qpoly_text(qpoly: Any) -> str:
    isl = require("islpy", "model", "Kernel statistics")
    terms = []
    for term in qpoly.get_terms():
        coefficient = Fraction(str(term.get_coefficient_val()))
        factors = []
        for i in range(term.dim(isl.dim_type.param)):
            power = term.get_exp(isl.dim_type.param, i)
            if power:
                name = qpoly.space.get_dim_name(isl.dim_type.param, i)
                factors.append(name if power == 1 else f"{name}**{power}")
        for i in range(term.dim(isl.dim_type.div)):
            power = term.get_exp(isl.dim_type.div, i)
            if power:
                div = f"({_py(_aff(term.get_div(i)))})"
                factors.append(div if power == 1 else f"{div}**{power}")
        numerator = [] if coefficient.numerator == 1 and factors else [str(coefficient.numerator)]
        product = "*".join([*numerator, *factors])
        # A true quotient: counts per sub-group need not be whole numbers.
        terms.append(
            product if coefficient.denominator == 1 else f"{product}/{coefficient.denominator}"
        )
    return " + ".join(terms) or "0"


def _aff(aff: Any) -> Any:
    from loopy.symbolic import aff_to_expr

    return aff_to_expr(aff)


def assumptions_text(knl: Any) -> str:
    """A loopy kernel's assumptions on its sizes, as an expression perfport evaluates."""
    return _set_text(knl.assumptions.params())


def _set_text(domain: Any) -> str:
    if domain.is_empty():
        return "False"
    if domain.plain_is_universe():
        return "True"
    from loopy.symbolic import constraint_to_cond_expr

    disjuncts = []
    for basic in domain.get_basic_sets():
        parts = [_py(constraint_to_cond_expr(c)) for c in basic.get_constraints()]
        disjuncts.append(" and ".join(f"({p})" for p in parts) if parts else "True")
    return " or ".join(f"({d})" for d in disjuncts)


def _py(expr: Any) -> str:
    """pymbolic's text is Python syntax (``//`` floors as isl does); perfport parses it back
    with its whitelisted parser, so a stray construct fails there, never runs."""
    return str(expr)


def _is_zero(value: Any) -> bool:
    pw = getattr(value, "pwqpolynomial", value)
    return bool(pw.is_zero()) if hasattr(pw, "is_zero") else not pw


# }}}

Gatherer = Callable[[Any, int], KernelStats]
