"""The work remover (the paper's section 7.1.1): strip the on-chip work (arithmetic and local
memory) and chosen global accesses from an application kernel, keeping the loop structure
and the remaining global loads exactly as they were (variable, index, tags), so the result
is a measurement kernel of those access patterns in situ.

Every kept load is summed into one private accumulator, ``read_tgt``, in the instruction and
loops where the load was; the kernel's stores write the accumulator where they wrote before
(into ``read_tgt_dest`` of the same shape when the stored variable is removed), so an
optimising compiler cannot drop the loads. The paper notes that the accumulation is a tight
dependency chain; so is it here. ``work_removal_generators`` makes one collection generator
per built-in application (``wr_<app>``, tags ``work_removal``), its ``keep`` argument naming
the global input whose loads stay (``all``: every input).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from perfport.model.apps import APPLICATIONS, AppKernel
from perfport.model.collection import KERNEL_PREFIX, Generator, VariantArg
from perfport.model.errors import ModelError
from perfport.model.gather import loopy

ACCUMULATOR = "read_tgt"
DESTINATION = "read_tgt_dest"
_INIT = "read_tgt_init"


def _name(var: Any) -> str | None:
    return getattr(var, "name", None)


def _kept_loads(keep: frozenset[str]) -> Any:
    """A mapper from an expression to the tuple of its kept global loads, each reduction
    over them kept as a sum over the same inames (so the loads stay in their loops)."""
    from loopy.symbolic import CombineMapper, Reduction

    class _Loads(CombineMapper):
        def combine(self, values: Iterable[tuple[Any, ...]]) -> tuple[Any, ...]:
            return tuple(x for v in values for x in v)

        def map_constant(self, expr: Any) -> tuple[Any, ...]:
            return ()

        map_variable = map_tagged_variable = map_constant

        def map_subscript(self, expr: Any) -> tuple[Any, ...]:
            # Index expressions are integer arithmetic on inames: not work to keep.
            return (expr,) if _name(expr.aggregate) in keep else ()

        def map_reduction(self, expr: Any) -> tuple[Any, ...]:
            terms = self.rec(expr.expr)
            return (Reduction("sum", tuple(expr.inames), _sum(terms)),) if terms else ()

    return _Loads()


def _sum(terms: tuple[Any, ...]) -> Any:
    from pymbolic.primitives import Sum

    return terms[0] if len(terms) == 1 else Sum(terms)


def remove_work(program: Any, remove_vars: Iterable[str] = (), keep_barriers: bool = False) -> Any:
    """``program`` (a loopy program or kernel, transformed as for its run) without on-chip
    work and without the global accesses of ``remove_vars``: every remaining global load is
    summed into ``read_tgt`` where it was, and each store writes ``read_tgt`` (plus the loads
    of its own expression) to the index it wrote. ``keep_barriers`` puts a local barrier
    back in each loop where a local-memory fetch was: on a CPU, PoCL runs a work-group's
    items one after another between barriers, so deleting them changes the order of the
    kept loads and what they cost (docs/results/2026-11-26-model-pocl-accuracy.md)."""
    lp = loopy()
    if isinstance(program, lp.LoopKernel):
        program = lp.make_program(program)
    knl = program.default_entrypoint
    arrays = {a.name: a for a in knl.args if isinstance(a, lp.ArrayArg)}
    removed = frozenset(remove_vars)
    unknown = sorted(removed - set(arrays))
    if unknown:
        raise ModelError(
            f"work removal: {unknown[0]} is not a global array of {knl.name}; give some of "
            f"{', '.join(sorted(arrays))}"
        )
    written = knl.get_written_variables()
    syncs = {frozenset(i.within_inames) for i in knl.instructions if _fills_local(knl, i)}
    loads = _kept_loads(frozenset(arrays) - removed - written)
    stores = [i for i in knl.instructions if set(i.assignee_var_names()) & set(arrays)]
    if not stores:
        raise ModelError(f"work removal: {knl.name} stores to no global array; nothing to keep")
    acc = lp.TemporaryVariable(ACCUMULATOR, arrays[stores[0].assignee_var_names()[0]].dtype,
                               shape=(), address_space=lp.AddressSpace.PRIVATE)  # fmt: skip
    insns, dropped, accumulating = [], set(), []
    for insn in knl.instructions:
        if not isinstance(insn, lp.Assignment):
            insns.append(insn)
            continue
        terms = loads(insn.expression)
        if insn.id in {s.id for s in stores}:
            insns.append(_store(insn, terms, removed, acc))
        elif terms:
            accumulating.append(insn.id)
            insns.append(_accumulate(insn, terms))
        else:
            dropped.add(insn.id)  # on-chip work only
            insns.append(insn)
    knl = knl.copy(instructions=insns)
    knl = lp.remove_instructions(knl, dropped)
    knl = _wire(knl, stores, accumulating, acc)
    program = program.with_kernel(_tidy(knl, arrays, removed, stores))
    return _put_barriers_back(program, syncs) if keep_barriers and syncs else program


def _fills_local(knl: Any, insn: Any) -> bool:
    """Whether an instruction writes local memory: a temporary declared local, or one left
    to loopy (``auto``, as a prefetch leaves it) written in local-parallel loops."""
    lp = loopy()
    for name in insn.assignee_var_names():
        temporary = knl.temporary_variables.get(name)
        if temporary is None or temporary.address_space == lp.AddressSpace.PRIVATE:
            continue
        if temporary.address_space == lp.AddressSpace.LOCAL or any(
            knl.iname_tags_of_type(i, lp.kernel.data.LocalInameTagBase) for i in insn.within_inames
        ):
            return True
    return False


def _put_barriers_back(program: Any, syncs: set[frozenset[str]]) -> Any:
    """A local barrier in each loop nest a fetch ran in (its sequential loops that are
    left), before the work in that nest; reductions are realised first so the barrier can
    sit inside the loop a reduction runs."""
    lp = loopy()
    program = lp.realize_reduction(program)
    knl = program.default_entrypoint
    alive = set(knl.all_inames())
    nests = sorted({frozenset(s & alive) for s in syncs if s & alive}, key=sorted)
    barriers = [
        lp.BarrierInstruction(
            id=f"{ACCUMULATOR}_barrier_{n}",
            within_inames=nest,
            synchronization_kind="local",
            mem_kind="local",
            depends_on=frozenset({_INIT}),
        )
        for n, nest in enumerate(nests)
    ]
    insns = []
    for insn in knl.instructions:
        before = {
            b.id for b in barriers if insn.id != _INIT and b.within_inames <= insn.within_inames
        }
        insns.append(insn.copy(depends_on=insn.depends_on | before) if before else insn)
    return program.with_kernel(knl.copy(instructions=[*insns, *barriers]))


def _accumulate(insn: Any, terms: tuple[Any, ...]) -> Any:
    from pymbolic.primitives import Sum, Variable

    return insn.copy(assignee=Variable(ACCUMULATOR),
                     expression=Sum((Variable(ACCUMULATOR), *terms)))  # fmt: skip


def _store(insn: Any, terms: tuple[Any, ...], removed: frozenset[str], acc: Any) -> Any:
    from pymbolic.primitives import Subscript, Sum, Variable

    assignee = insn.assignee
    if _name(assignee.aggregate) in removed:
        assignee = Subscript(Variable(DESTINATION), assignee.index)
    value = Sum((Variable(ACCUMULATOR), *terms)) if terms else Variable(ACCUMULATOR)
    return insn.copy(assignee=assignee, expression=value)


def _wire(knl: Any, stores: list[Any], accumulating: list[str], acc: Any) -> Any:
    """Add the accumulator, zeroed before any load is summed, every store after them."""
    lp = loopy()
    store_ids = {s.id for s in stores}
    # Zeroed in the parallel inames of the first load summed (or of the first store): a load
    # may run in lanes the stores skip (the stencils' halo) and must add to a zeroed value.
    first = knl.id_to_insn[accumulating[0]] if accumulating else stores[0]
    parallel = frozenset(
        iname for iname in first.within_inames
        if knl.iname_tags_of_type(iname, lp.kernel.data.HardwareConcurrentTag)
    )  # fmt: skip
    init = lp.Assignment(ACCUMULATOR, 0, id=_INIT, within_inames=parallel)
    insns = []
    for insn in knl.instructions:
        if insn.id in accumulating:
            insn = insn.copy(depends_on=insn.depends_on | {_INIT})
        elif insn.id in store_ids:
            insn = insn.copy(depends_on=insn.depends_on | {_INIT, *accumulating})
        insns.append(insn)
    temporaries = {**knl.temporary_variables, ACCUMULATOR: acc}
    return knl.copy(instructions=[init, *insns], temporary_variables=temporaries)


def _tidy(knl: Any, arrays: dict[str, Any], removed: frozenset[str], stores: list[Any]) -> Any:
    """Drop temporaries, arguments and inames nothing uses any more; add ``read_tgt_dest``
    in place of a removed output."""
    lp = loopy()
    used = set().union(*(i.dependency_names() for i in knl.instructions))
    temporaries = {k: v for k, v in knl.temporary_variables.items() if k in used}
    args = []
    for a in knl.args:
        if a.name in removed and a.name in {s.assignee_var_names()[0] for s in stores}:
            args.append(a.copy(name=DESTINATION))
        elif a.name in arrays and a.name not in used:
            continue
        else:
            args.append(a)
    knl = lp.remove_unused_inames(knl.copy(temporary_variables=temporaries, args=args))
    # Loop priorities may name inames of the work removed.
    priority = frozenset(p for p in knl.loop_priority if set(p) <= set(knl.all_inames()))
    return knl.copy(loop_priority=priority)


def loaded_arrays(app: AppKernel) -> tuple[str, ...]:
    """The global inputs an application kernel loads, in argument order."""
    lp = loopy()
    knl = app.make().default_entrypoint
    written = knl.get_written_variables()
    return tuple(a.name for a in knl.args if isinstance(a, lp.ArrayArg) and a.name not in written)


def make_removed(app: str, keep: str, keep_barriers: bool = False) -> Any:
    """The work-removed kernel of a built-in application keeping the loads of ``keep`` (a
    global input, or ``all``), with its barriers put back if ``keep_barriers``."""
    application = APPLICATIONS[app]
    inputs = loaded_arrays(application)
    if keep != "all" and keep not in inputs:
        raise ModelError(f"work removal of {app}: keep:{keep} is not one of all, "
                         f"{', '.join(inputs)}")  # fmt: skip
    removed = [] if keep == "all" else set(inputs) - {keep}
    program = remove_work(application.make(), removed, keep_barriers)
    # A measurement kernel of its own, named apart from the application and any built-in.
    name = f"{KERNEL_PREFIX}{'wrb' if keep_barriers else 'wr'}_{app.replace('-', '_')}"
    return loopy().rename_callable(program, program.default_entrypoint.name, name)


# The global inputs of each built-in application (checked against loopy by the tests), so a
# collection lists its variants without building any kernel.
_INPUTS = {"matmul": ("a", "b"), "dg": ("diff_mat", "u"), "fd": ("u",)}


# The built-in applications that stage data in local memory, so synchronise (``wrb_``).
_WITH_BARRIERS = frozenset(
    {"matmul-prefetch", "dg-prefetch-u", "dg-prefetch-dm", "dg-prefetch-dm-tr", "fd-16x16",
     "fd-18x18"}
)  # fmt: skip


def work_removal_generators() -> tuple[Generator, ...]:
    """One generator per built-in application, ``wr_<app>``, at the application's PoCL sizes
    (give others with a variant tag, ``n:2048``, as on a GPU); and for those with barriers,
    ``wrb_<app>`` (tag ``work_removal_barriers``), the same with the barriers put back."""
    out = []
    for name, app in APPLICATIONS.items():
        inputs = _INPUTS[name.split("-")[0]]
        keep = ("all", *inputs) if len(inputs) > 1 else ("all",)
        out.append(
            Generator(
                "wr_" + name.replace("-", "_"),
                frozenset({"work_removal", "wr_" + name.replace("-", "_")}),
                (VariantArg("keep", keep), VariantArg(app.size, app.sizes, open=True)),
                lambda keep, _app=name: make_removed(_app, keep),
                frozenset({app.size}),
                f"{name} with its on-chip work removed, keeping the loads of one input",
            )
        )
        if name in _WITH_BARRIERS:
            out.append(
                Generator(
                    "wrb_" + name.replace("-", "_"),
                    frozenset({"work_removal_barriers", "wrb_" + name.replace("-", "_")}),
                    (VariantArg("keep", keep), VariantArg(app.size, app.sizes, open=True)),
                    lambda keep, _app=name: make_removed(_app, keep, keep_barriers=True),
                    frozenset({app.size}),
                    f"wr_{name.replace('-', '_')} with the kernel's barriers put back",
                )
            )
    return tuple(out)
