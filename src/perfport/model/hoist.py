"""Local loads as a compiler issues them: loop-invariant loads hoisted out of their loops.

loopy counts an access once per run of its instruction, that is once per iteration of every
loop around it. A compiler does not reload a value it already holds: where a local load's
index does not change across the iterations of an enclosing sequential loop, and nothing can
change the element in between (no write to the array inside that loop, no barrier inside it
through which another work-item's write becomes visible), the load is issued once per
iteration of the loops it does depend on. NVIDIA's OpenCL compiler does this for
dg-prefetch-u (experiments/2026-11-26-model-conflicts/ptx/: 16 ``ld.shared.f32`` per tile
where loopy counts 48).

The rule is an approximation in these ways, all assuming the compiler hoists where it may:

- Register pressure can stop hoisting: a load invariant in an outer loop but dependent on an
  inner one needs one register per inner iteration to be kept; the rule assumes they fit.
- An index that reads anything but inames and problem sizes (a temporary, another array) is
  taken to depend on every loop: such loads are never hoisted here.
- Only sequential loops (no tag, ``unr``, ``for``) are hoisted out of; ``ilp`` and ``vec``
  inames are left as loopy counts them.
- The same load written twice in one expression is still counted twice, as loopy does.

Global accesses are left as loopy counts them: what a compiler may assume about global
memory across loop iterations (aliasing with other arguments) is a different question.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def hoisted_removals(program: Any, knl: Any, subgroup_size: int) -> dict[Any, Any]:
    """Per loopy ``MemAccess`` key (direction set to load), the count loopy's access map
    holds beyond what the rule issues: loopy's count minus the issued count is this value.
    Keys with nothing hoisted are absent. ``knl`` is ``program``'s preprocessed entrypoint."""
    from loopy.kernel.instruction import Assignment, CallInstruction
    from loopy.statistics import LocalMemAccessCounter

    local = _local_arrays(knl)
    if not local:
        return {}
    candidates = []  # (instruction, subscript, loops it is invariant in)
    for insn in knl.instructions:
        if not isinstance(insn, CallInstruction | Assignment):
            continue
        loops = _sequential_loops(knl, insn.within_inames)
        if not loops:
            continue
        for sub in _local_loads(insn.expression, local):
            invariant = _invariant_loops(knl, sub, loops)
            if invariant:
                candidates.append((insn, sub, invariant))
    if not candidates:
        return {}
    blocked = _barrier_loops(program, knl) | _loops_writing(knl)
    counter = LocalMemAccessCounter(knl, program.callables_table, None)
    removed: dict[Any, Any] = {}
    for insn, sub, invariant in candidates:
        loops = frozenset(i for i in invariant if (sub.aggregate.name, i) not in blocked)
        if not loops:
            continue
        per_run = counter(sub).with_set_attributes(direction="load")
        for key, value in per_run.count_map.items():
            saved = subtract(
                _runs(program, knl, insn, subgroup_size, key, frozenset()),
                _runs(program, knl, insn, subgroup_size, key, loops),
            )
            extra = saved * value
            removed[key] = removed[key] + extra if key in removed else extra
    return removed


def subtract(a: Any, b: Any) -> Any:
    """``a - b`` for loopy's guarded piecewise quasi-polynomials (which only add and
    multiply)."""
    return a + b * -1


def _local_arrays(knl: Any) -> set[str]:
    from loopy.kernel.data import AddressSpace

    return {
        name
        for name, tv in knl.temporary_variables.items()
        if tv.address_space == AddressSpace.LOCAL
    }


def _sequential_loops(knl: Any, inames: frozenset[str]) -> frozenset[str]:
    """The inames among ``inames`` that are loops a work-item runs in order (ilp and vec
    inames are concurrent tags: not hoisted out of)."""
    from loopy.kernel.data import ConcurrentTag

    return frozenset(i for i in inames if not knl.iname_tags_of_type(i, ConcurrentTag))


def _local_loads(expr: Any, local: set[str]) -> Iterator[Any]:
    """Subscripts of local arrays read in ``expr`` (the loads; assignees are not walked)."""
    from loopy.symbolic import CombineMapper
    from pymbolic.primitives import Variable

    class _Loads(CombineMapper):
        def combine(self, values: Any) -> list[Any]:
            return [x for v in values for x in v]

        def map_subscript(self, e: Any) -> list[Any]:
            found = self.rec(e.index)
            if isinstance(e.aggregate, Variable) and e.aggregate.name in local:
                found = [*found, e]
            return found

        def map_constant(self, e: Any) -> list[Any]:
            return []

        def map_variable(self, expr: Any, *args: Any, **kwargs: Any) -> list[Any]:
            return []  # a local scalar is not indexed: never a candidate

        def map_tagged_variable(self, expr: Any, *args: Any, **kwargs: Any) -> list[Any]:
            return []

    yield from _Loads()(expr)


def _invariant_loops(knl: Any, sub: Any, loops: frozenset[str]) -> frozenset[str]:
    """The loops among ``loops`` the subscript's index does not depend on; none where the
    index reads a variable other than inames and problem sizes (its value may change in any
    loop)."""
    from loopy.symbolic import get_dependencies

    deps = set(get_dependencies(sub.index))
    if deps - knl.all_inames() - knl.all_params():
        return frozenset()
    return frozenset(i for i in loops if i not in deps)


def _loops_writing(knl: Any) -> set[tuple[str, str]]:
    """(local array, loop) pairs where some instruction inside the loop writes the array:
    the element may change between iterations, so the load stays in the loop."""
    local = _local_arrays(knl)
    return {
        (name, iname)
        for insn in knl.instructions
        for name in insn.assignee_var_names()
        if name in local
        for iname in insn.within_inames
    }


def _barrier_loops(program: Any, knl: Any) -> set[tuple[str, str]]:
    """(local array, loop) pairs for every loop with a local barrier inside: after a barrier
    another work-item's write may be visible, so no load is hoisted over one. Every local
    array is paired (a barrier does not say which array it orders)."""
    import loopy as lp
    from loopy.kernel.instruction import BarrierInstruction
    from loopy.schedule import Barrier, EnterLoop, LeaveLoop, RunInstruction

    linear = lp.get_one_linearized_kernel(knl, program.callables_table)
    open_loops: list[str] = []
    fenced: set[str] = set()
    for item in linear.linearization or ():
        if isinstance(item, EnterLoop):
            open_loops.append(item.iname)
        elif isinstance(item, LeaveLoop):
            open_loops.pop()
        elif isinstance(item, Barrier) and item.synchronization_kind == "local":
            fenced.update(open_loops)  # a barrier loopy inserted
        elif isinstance(item, RunInstruction):
            insn = linear.id_to_insn[item.insn_id]
            # A barrier the kernel's author wrote (``... lbarrier``), inside its own loops.
            if isinstance(insn, BarrierInstruction) and insn.synchronization_kind == "local":
                fenced.update(open_loops)
    return {(name, iname) for name in _local_arrays(knl) for iname in fenced}


def _runs(
    program: Any, knl: Any, insn: Any, subgroup_size: int, key: Any, hoisted: frozenset[str]
) -> Any:
    """loopy's run count of ``insn`` at ``key``'s granularity, with the ``hoisted`` loops
    taken out of the instruction's loops (the count over the remaining loops' domain)."""
    from loopy.statistics import _get_insn_count

    if hoisted:
        moved = insn.copy(within_inames=insn.within_inames - hoisted)
        knl = knl.copy(instructions=[moved if i.id == insn.id else i for i in knl.instructions])
    return _get_insn_count(
        knl, program.callables_table, insn.id, subgroup_size, True, key.count_granularity
    )
