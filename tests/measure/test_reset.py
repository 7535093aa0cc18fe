"""Every configuration starts from the seeded data of every array the kernel may write, inputs
included, whether or not it is verified; its repetitions run on what the previous one left."""

from conftest import DATA
from perfport import RunSettings, Timing, load_kernel, tune
from perfport._core import Check, Outcome

UNVERIFIED = RunSettings(verify=False, timing=Timing.fixed(3, warmup=0), timeout_s=30.0)


def _first_launch_slow(times_ms: tuple[float, ...]) -> bool:
    """heavy_once spins only on its seeded data: ~10 ms against microseconds after."""
    return times_ms[0] > 10.0 * min(times_ms[1:])


def test_without_verification_each_configuration_is_timed_from_the_seeded_data(db):
    """--no-verify left the outputs as the previous configuration's launches had left them,
    so only the first configuration measured paid for the seeded data."""
    result = tune(load_kernel(DATA / "heavy_once.py"), db=db, settings=UNVERIFIED,
                  strategy="brute_force")  # fmt: skip
    assert len(result.measurements) == 3
    for m in result.measurements:
        assert m.outcome is Outcome.OK and m.check is Check.UNVERIFIED
        assert _first_launch_slow(m.times_ms), (m.config, m.times_ms)


def test_an_input_used_as_scratch_is_reset_for_every_configuration(db):
    """An input the kernel overwrites (not declared an output) reached the configurations
    after the first as the earlier ones had left it: each was a wrong_result."""
    settings = RunSettings(timing=Timing.fixed(2), timeout_s=30.0)
    result = tune(load_kernel(DATA / "scratch_input.py"), db=db, settings=settings,
                  strategy="brute_force")  # fmt: skip
    assert [m.outcome for m in result.measurements] == [Outcome.OK] * 3
    assert {m.check for m in result.measurements} == {Check.VERIFIED}
