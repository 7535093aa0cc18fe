"""Does deleting the barriers change what a work-removed kernel measures on PoCL?

    python experiments/2026-11-26-model-pocl-accuracy/barrier_test.py [--db PATH] [--reps 2]

For dg-prefetch-dm-tr and dg-prefetch-dm at nelements = 2048, times through perfport's
measurement layer: the full kernel; its work-removed kernel keeping u's loads (the work
remover deletes the local memory and with it the barriers); and the same work-removed
kernel with one local barrier put back at the start of each j_outer iteration, where the
full kernel's prefetch synchronised. Prints one line per kernel and repetition.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

from perfport._core.records import Problem
from perfport.devices import get_device
from perfport.model import APPLICATIONS
from perfport.model.gather import loopy
from perfport.model.measure import measure_application
from perfport.model.workremoval import remove_work


def with_barrier(program: Any) -> Any:
    """The work-removed DG kernel with a local barrier in each j_outer iteration."""
    lp = loopy()
    out = lp.realize_reduction(program)
    knl = out.default_entrypoint
    update = next(i for i in knl.instructions if "j_outer" in i.within_inames)
    barrier = lp.BarrierInstruction(
        id="kept_barrier", within_inames=frozenset(update.within_inames) - {"j_inner"},
        synchronization_kind="local", mem_kind="local", depends_on=frozenset(update.depends_on),
    )  # fmt: skip
    insns = [i.copy(depends_on=i.depends_on | {"kept_barrier"}) if i.id == update.id else i
             for i in knl.instructions]  # fmt: skip
    return out.with_kernel(knl.copy(instructions=[*insns, barrier]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", default="/tmp/perfport-barrier-test.db")
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # loopy's codegen notes
    device, size = get_device(None), Problem.of({"nelements": 2048})
    for rep in range(args.reps):
        for app in ("dg-prefetch-dm-tr", "dg-prefetch-dm"):
            removed = remove_work(APPLICATIONS[app].make(), {"diff_mat"})
            for label, program in (("full", APPLICATIONS[app].make()), ("wr-u", removed),
                                   ("wr-u-barrier", with_barrier(removed))):  # fmt: skip
                # Each repetition its own name: the store skips a name it already holds.
                (r,) = measure_application(program, f"{app}-{label}-r{rep}", [size], device,
                                           args.db)  # fmt: skip
                print(f"{app} {label} rep {rep}: {r.status.value} {r.time_ms} ms", flush=True)


if __name__ == "__main__":
    main()
