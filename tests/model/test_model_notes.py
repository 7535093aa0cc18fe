"""Approximation notes loopy gives no warning for (model/notes.py): a conditional expression's
memory accesses summed over both branches, and a predicated instruction counted as if every
work-item ran it (audit kernels cond.py and a predicated store)."""

from __future__ import annotations

import pytest
from model_support import LOOPY

pytest.importorskip("loopy", reason=LOOPY)


def _stats(instructions):
    import loopy as lp
    import numpy as np

    from perfport.model import gather

    knl = lp.make_kernel("{[i]: 0 <= i < n}", instructions,
                         [lp.GlobalArg("x,y", np.float32, shape=("n",)),
                          lp.ValueArg("n", np.int32)], lang_version=(2018, 2))  # fmt: skip
    knl = lp.assume(knl, "n mod 64 = 0 and n >= 64")
    return gather(lp.split_iname(knl, "i", 64, outer_tag="g.0", inner_tag="l.0"))


def test_a_conditional_s_memory_counts_are_noted():
    # Global loads were 4 per work-item (both branches) with only the op counts noted.
    from perfport.model.notes import CONDITIONAL, PREDICATED

    stats = _stats("y[i] = if(x[i] > 0, x[i] * 2.0f, x[i] * x[i] + 1.0f)")
    assert CONDITIONAL in stats.approximations and PREDICATED not in stats.approximations
    plain = _stats("y[i] = 2 * x[i]")
    assert CONDITIONAL not in plain.approximations


def test_a_predicated_instruction_is_noted():
    from perfport.model.notes import PREDICATED

    stats = _stats("""
        <> t = x[i]
        if t > 0
            y[i] = t
        end
        """)
    assert PREDICATED in stats.approximations
