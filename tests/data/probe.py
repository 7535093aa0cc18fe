"""A kernel whose compile-time MODE picks an outcome: the test bed for every failure path.

MODE 0: correct. 1: does not compile. 2: wrong result. 3: never finishes (waits for a flag
that is never set). 4: kills the worker (a write far outside any buffer). 5: demands a
work-group of 16 (reqd_work_group_size), so the driver refuses other sizes. The launch
parameter ``lmem`` asks for a local buffer larger than any device has: pruned before launch.
"""

from perfport import ArrayArg, KernelSpec, LocalArg, Param, ParamKind, ScalarArg

SOURCE = """
#if MODE == 1
#error this configuration does not compile
#endif
#if MODE == 5
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
#else
__kernel
#endif
void probe(__global const float* a, __global float* b, __global const int* flag, int n,
           __local float* scratch) {
    const int i = get_global_id(0);
#if MODE == 3
    while (flag[0] == 0) {}
#endif
#if MODE == 4
    if (i == 0)
        b[(ulong)1 << 40] = 1.0f;
#endif
    if (i < n)
        b[i] = 2.0f * a[i] + (MODE == 2 ? 1.0f : 0.0f);
}
"""


def reference(problem, inputs):
    return {"b": 2.0 * inputs["a"]}


kernel = KernelSpec(
    name="probe",
    source=SOURCE,
    entry="probe",
    params=(
        Param("MODE", (0, 1, 2, 3, 4, 5)),
        Param("wg", (8, 16), ParamKind.LAUNCH),
        Param("lmem", (1, 1 << 30), ParamKind.LAUNCH),
    ),
    global_size=("round_up(n, wg)",),
    local_size=("wg",),
    args=(
        ArrayArg("a", "float", ("n",)),
        ArrayArg("b", "float", ("n",), output=True),
        ArrayArg("flag", "int", ("1",), init="zeros"),
        ScalarArg("n", "int", "n"),
        LocalArg("scratch", "float", "lmem"),
    ),
    problem={"n": 256},
    # The hanging and crashing modes only once each, to keep the test short.
    restrictions=("MODE not in (3, 4) or wg == 8",),
    default={"MODE": 0, "wg": 8, "lmem": 1},
    reference=reference,
)
