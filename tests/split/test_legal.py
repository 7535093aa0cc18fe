"""Each part of a split is checked before anything runs: the parts cover the extent, and each
part's configuration may launch at its own problem (its elements and halo), so a kernel
whose global size is exactly n is refused in one line naming the part and the fix instead of
the driver's INVALID_WORK_GROUP_SIZE; with n padded to whole work-groups the same split runs
and matches numpy."""

from __future__ import annotations

import numpy as np
import pytest

from perfport._core import Config, SpecError
from perfport.devices import get_device
from perfport.kernels import load_kernel
from perfport.measure.data import host_arrays
from perfport.split.execute import Part, run_parts
from perfport.split.legal import check_cover
from perfport.split.split import split_run

# out[i] = x[i-1] + x[i] + x[i+1], clamped at the ends; split with a halo of 1 each side
SMOOTH = '''
import numpy as np
from perfport import ArrayArg, KernelSpec, Param, ParamKind, ScalarArg, SplitArray, SplitDim

SRC = """
__kernel void smooth(__global const float* in, __global float* out, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    int a = i > 0 ? i - 1 : 0, b = i < n - 1 ? i + 1 : n - 1;
    out[i] = in[a] + in[i] + in[b];
}
"""

kernel = KernelSpec(
    name="smooth1d", source=SRC, entry="smooth",
    params=(Param("wg", (8, 16, 25, 40), ParamKind.LAUNCH),),
    global_size=(GLOBAL,), local_size=("wg",),
    args=(ArrayArg("x", "float", ("n",)), ArrayArg("y", "float", ("n",), output=True),
          ScalarArg("n", "int", "n")),
    problem={"n": 4000}, default={"wg": 16},
    split=(SplitDim(0, "n", (SplitArray("x"), SplitArray("y")), halo=(HALO, HALO)),),
)
'''


def _spec(tmp_path, global_size: str, halo: str = "1"):
    path = tmp_path / f"smooth_{len(list(tmp_path.iterdir()))}.py"
    path.write_text(SMOOTH.replace("GLOBAL", repr(global_size)).replace("HALO", repr(halo)))
    return load_kernel(str(path))


def _numpy(x: np.ndarray) -> np.ndarray:
    p = np.concatenate([x[:1], x, x[-1:]]).astype(np.float64)
    return p[:-2] + p[1:-1] + p[2:]


@pytest.fixture(scope="module")
def two():
    return get_device("opencl:0:0.0"), get_device("opencl:0:0.1")


def test_a_part_whose_halo_breaks_global_divisible_by_local_is_refused(tmp_path, two):
    spec = _spec(tmp_path, "n")
    a, b = two
    parts = [Part(a, Config.of(wg=16), 0, 2000), Part(b, Config.of(wg=16), 2000, 4000)]
    with pytest.raises(SpecError) as caught:
        run_parts(spec, spec.problem, parts, spec.split[0], target_s=0.0)
    text = str(caught.value)
    assert "\n" not in text
    assert "part 0 [0, 2000) on opencl:0:0.0" in text and "n=2001 with its halo" in text
    assert "global size [2001], local size [16]" in text and "round_up(n, wg)" in text


def test_split_run_refuses_a_leftover_that_is_not_whole_work_groups(tmp_path, two):
    # no halo; 40 and 25 elements a group, equal times: 480 + 520, and 520 % 25 != 0
    spec = _spec(tmp_path, "n", halo="0")
    a, b = two
    configs = {a.id: Config.of(wg=40), b.id: Config.of(wg=25)}
    with pytest.raises(SpecError, match=r"part 1 \[480, 1000\) on opencl:0:0.1 .*n % wg == 0"):
        split_run(spec, {"n": 1000}, two, configs=configs, target_s=0.0, plan_from="eq4",
                  times={a.id: 1.0, b.id: 1.0})  # fmt: skip


def test_the_same_split_padded_to_whole_work_groups_runs_and_matches_numpy(tmp_path, two):
    spec = _spec(tmp_path, "round_up(n, wg)")
    a, b = two
    full = spec.problem.merged({"n": 4001})
    parts = [Part(a, Config.of(wg=16), 0, 2000), Part(b, Config.of(wg=40), 2000, 4001)]
    run = run_parts(spec, full, parts, spec.split[0], target_s=0.0)
    x = host_arrays(spec, spec.env({}, full), 0)["x"]
    np.testing.assert_allclose(run.outputs["y"], _numpy(x), rtol=1e-6)


def test_parts_with_a_gap_are_refused_before_anything_runs(tmp_path, two):
    spec = _spec(tmp_path, "round_up(n, wg)")
    a, b = two
    parts = [Part(a, Config.of(wg=16), 0, 10), Part(b, Config.of(wg=16), 15, 4000)]
    with pytest.raises(SpecError, match="leave elements from 10 of"):
        run_parts(spec, spec.problem, parts, spec.split[0], target_s=0.0)


def test_cover_accepts_overlaps_and_refuses_gaps_and_ranges_outside():
    check_cover([(0, 25), (15, 40)], 40)  # the paper lets parts overlap
    check_cover([(0, 0), (0, 40)], 40)
    for bad in ([(0, 10), (15, 40)], [(5, 20), (20, 40)], [(0, 20), (20, 50)], [(0, 50), (50, 40)]):
        with pytest.raises(SpecError):
            check_cover(bad, 40)


def test_a_part_that_breaks_the_kernels_restriction_at_its_problem_is_refused(tmp_path, two):
    """A kernel may rely on its restriction instead of a bounds check (n % wg == 0): a part of
    1984 elements in groups of 40 launched and wrote past its buffers (heap corruption). The
    restriction holds at the whole problem (4000), so it is checked at each part's."""
    import dataclasses

    spec = dataclasses.replace(
        _spec(tmp_path, "round_up(n, wg)", halo="0"), restrictions=("n % wg == 0",)
    )
    a, b = two
    parts = [Part(a, Config.of(wg=16), 0, 2016), Part(b, Config.of(wg=40), 2016, 4000)]
    with pytest.raises(SpecError) as caught:
        run_parts(spec, spec.problem, parts, spec.split[0], target_s=0.0)
    text = str(caught.value)
    assert "\n" not in text
    assert "part 1 [2016, 4000) on opencl:0:0.1" in text and "restriction n % wg == 0" in text
    assert "(n=1984)" in text
    # A part smaller than one work-group breaks wg <= n at its problem alike.
    spec = dataclasses.replace(spec, restrictions=("wg <= n",))
    parts = [Part(a, Config.of(wg=16), 0, 3996), Part(b, Config.of(wg=40), 3996, 4000)]
    with pytest.raises(SpecError, match=r"part 1 .*restriction wg <= n at its problem \(n=4\)"):
        run_parts(spec, spec.problem, parts, spec.split[0], target_s=0.0)


def test_the_refusal_brackets_a_compound_global_size(tmp_path, two):
    # 'n + 2 % wg == 0' (the rule's label) reads as n + (2 % wg) == 0
    spec = _spec(tmp_path, "n + 2", halo="0")
    a, b = two
    parts = [Part(a, Config.of(wg=16), 0, 2000), Part(b, Config.of(wg=16), 2000, 4000)]
    with pytest.raises(SpecError, match=r"breaks \(n \+ 2\) % wg == 0 \(global divisible"):
        run_parts(spec, spec.problem, parts, spec.split[0], target_s=0.0)
