"""An argument count that gets past the check at load (a parameter list it cannot read) still
fails with a message that names the mismatch, not as an unexpected TypeError."""

from perfport import ArrayArg, KernelSpec, RunSettings, Timing, tune
from perfport._core import Outcome

# A macro standing for parameters: the list is not read when the spec is loaded.
SOURCE = """#define ARGS __global float* x, const int n
__kernel void k(ARGS) { const int i = get_global_id(0); if (i < n) x[i] = 1.0f; }"""


def test_a_wrong_argument_count_is_named_in_the_stored_failure(db):
    spec = KernelSpec(
        name="k", source=SOURCE, entry="k", global_size=("n",), local_size=("8",),
        args=(ArrayArg("x", "float", ("n",), output=True),), problem={"n": 64},
    )  # fmt: skip
    result = tune(spec, db=db, settings=RunSettings(timing=Timing.fixed(2), timeout_s=10.0))
    (m,) = result.measurements
    assert m.outcome is Outcome.CRASHED
    assert "kernel k takes 2 argument(s) but the spec passes 1" in m.message
    assert "in order" in m.message and "unexpected" not in m.message
