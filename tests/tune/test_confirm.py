"""Re-timing the top candidates at the end of a campaign (perfport.tune.confirm)."""

import json
import statistics
import subprocess
import sys

import pytest

from perfport import Config, Measurement, Outcome, RunSettings, Timing, tune
from perfport._core import PerfportError
from perfport._core.metrics import Objective, ResultMetrics
from perfport._core.stats import MIN_CI_SAMPLES, summarize
from perfport.cli import main
from perfport.cli import tune as cli_tune
from perfport.store import Store
from perfport.tune import confirm as confirm_module
from perfport.tune.confirm import confirm
from tune.cli_in_process import run_cli

confirmation_line = cli_tune.confirmation_line

A, B, C, D = (Config.of(wg=w) for w in (8, 16, 32, 64))


def _ok(config, times):
    return Measurement(config, Outcome.OK, times_ms=tuple(times))


def _fake(times_of):
    """A device whose every re-timing of a configuration returns these samples."""
    calls = []

    def measure(config):
        calls.append(config)
        return _ok(config, times_of[config])

    return measure, calls


def test_separated_candidates_stop_after_one_round():
    # The search saw D as best (one lucky sample); timed again, A is far faster.
    searched = [_ok(A, [2.0]), _ok(B, [5.0]), _ok(C, [9.0]), _ok(D, [1.0])]
    measure, calls = _fake({A: [1.0] * 9, B: [5.0] * 9, D: [3.0] * 9})
    kept = []
    got = confirm(searched, measure, lambda c, t: kept.append((c, t)), top=3, max_seconds=60)
    assert (
        got is not None and got.rounds == 1 and sorted(calls, key=str) == sorted([A, B, D], key=str)
    )
    assert got.winner.config == A and got.separated and got.indistinguishable == ()
    assert got.winner.n == 10 and got.winner.interval_ms[1] < 3.0
    assert {c for c, _ in kept} == {A, B, D}  # every new sample is handed over to be stored
    j = got.to_json()
    assert j["winner"] == {"wg": 8} and j["indistinguishable"] == [] and len(j["interval_ms"]) == 2


def test_a_configuration_that_now_leads_by_its_stored_median_is_timed_too():
    """Re-timed in a busy spell, the top candidates all came out slower than the next one's
    stored median: the report's best named it while the confirmation named one of them."""
    searched = [_ok(A, [1.0]), _ok(B, [1.1]), _ok(C, [1.5])]
    measure, calls = _fake({A: [3.0] * 9, B: [3.1] * 9, C: [1.4] * 9})
    got = confirm(searched, measure, lambda c, t: None, top=2, max_seconds=60)
    assert got is not None and C in calls and got.winner.config == C


def _busy_spell():
    """The top three re-time twice as slow as the search timed them; the next two were
    stored at 1.10 and 1.15 ms, below the winner's pooled median (1.5 ms)."""
    E, F = Config.of(wg=128), Config.of(wg=256)
    base = {A: 1.00, B: 1.01, C: 1.02, E: 1.10, F: 1.15}
    searched = [_ok(c, [t] * 20) for c, t in base.items()]
    measure, calls = _fake({c: [2 * t] * 20 for c, t in base.items()})
    stored = {m.config: list(m.times_ms) for m in searched}
    return searched, measure, calls, stored, (E, F)


def _stored_best(stored):
    return min(stored, key=lambda c: statistics.median(stored[c]))


def test_every_configuration_that_beats_the_winner_joins_before_concluding():
    """Only one waiting configuration joined per round, so the stored best could be one that
    confirmation never re-timed: the run then named two different winners."""
    searched, measure, calls, stored, (E, F) = _busy_spell()
    keep = lambda c, t: stored[c].extend(t)  # noqa: E731
    got = confirm(searched, measure, keep, top=3, max_seconds=60)
    assert got is not None and got.conclusive and got.unconfirmed == ()
    assert {E, F} <= set(calls) and calls.count(E) == calls.count(F)  # joined in one round
    assert got.winner.config == _stored_best(stored)
    assert got.to_json()["conclusive"] is True and got.to_json()["unconfirmed"] == []


def test_a_time_limit_that_ends_first_is_not_conclusive_and_names_what_beats_the_winner():
    """Stopped by the time limit, the winner ({'wg': 8} at 1.5 ms) was reported confirmed
    while the stored best was {'wg': 128} at 1.1 ms, never re-timed."""
    searched, measure, calls, stored, (E, F) = _busy_spell()
    got = confirm(searched, measure, lambda c, t: stored[c].extend(t), top=3, max_seconds=0.0)
    assert got is not None and got.rounds == 1 and E not in calls
    assert not got.conclusive and [u.config for u in got.unconfirmed] == [E, F]
    assert got.unconfirmed[0].config == _stored_best(stored) != got.winner.config
    j = got.to_json()
    assert j["conclusive"] is False and [u["config"] for u in j["unconfirmed"]] == [
        {"wg": 128},
        {"wg": 256},
    ]
    assert j["unconfirmed"][0]["median_ms"] == pytest.approx(1.10)


def test_overlapping_candidates_are_named_and_time_is_bounded():
    searched = [_ok(A, [1.0]), _ok(B, [1.1])]
    noisy = [1.0, 3.0, 0.5, 2.0, 1.5]
    measure, _ = _fake({A: noisy, B: noisy})
    got = confirm(searched, measure, lambda c, t: None, top=3, max_seconds=0.05)
    assert got is not None and got.rounds >= 1
    assert not got.separated and [c.config for c in got.indistinguishable] == [
        c.config for c in got.candidates[1:]
    ]


def test_nothing_to_compare_and_a_flaky_candidate():
    assert confirm([_ok(A, [1.0])], _fake({})[0], lambda c, t: None) is None
    searched = [_ok(A, [1.0]), _ok(B, [2.0]), _ok(C, [3.0])]

    def measure(config):
        if config == A:
            return Measurement(config, Outcome.WRONG_RESULT, "differs")
        return _ok(config, {B: [2.0] * 9, C: [3.0] * 9}[config])

    got = confirm(searched, measure, lambda c, t: None, top=3, max_seconds=60)
    assert got is not None and got.dropped == (A,) and got.winner.config == B


def test_cli_defaults_agree_with_the_module():
    assert (cli_tune.CONFIRM_TOP, cli_tune.CONFIRM_SECONDS) == (
        confirm_module.DEFAULT_TOP,
        confirm_module.DEFAULT_SECONDS,
    )


def test_tune_retimes_on_pocl_and_stores_samples_not_configurations(db):
    settings = RunSettings(timing=Timing.fixed(3))
    r = tune("vector_add", problem={"n": 4096}, budget=4, db=db, settings=settings,
             strategy="brute_force", confirm_top=3, confirm_seconds=1.0)  # fmt: skip
    c = r.confirmed
    assert c is not None and len(c.candidates) + len(c.dropped) == 3 and c.rounds >= 1
    assert len(r.measurements) == 4  # configurations: what the search measured
    with Store(db) as store:
        assert store.query("SELECT count(*) FROM results")[0][0] == 4
        n = {json.loads(k)["wg"]: n for k, n in store.query(
            "SELECT c.key, r.n FROM results r JOIN configs c ON c.id = r.config_id")}  # fmt: skip
    for cand in c.candidates:  # the search's 3 samples plus every round's 3
        assert n[cand.config["wg"]] == cand.n == 3 + 3 * c.rounds
    assert r.best is not None and r.best.config == c.winner.config  # ranks on the pooled samples
    j = r.to_json()["confirmed"]
    assert j["winner"] == dict(c.winner.config) and isinstance(j["indistinguishable"], list)


def test_cli_confirm_zero_disables_and_json_has_confirmed(tmp_path, capfd):
    def run(*extra):
        done = run_cli(
            capfd, "tune", "vector_add", "--problem", "n=2048", "--budget", "3", "--repeats", "2",
            "--db", tmp_path / "r.db", "--json", "--strategy", "brute_force", *extra,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["confirmed"]

    assert run("--confirm", "0") is None
    got = run("--confirm", "2", "--confirm-seconds", "0.5")
    assert set(got) >= {"winner", "interval_ms", "indistinguishable"}


# A metric that rewards the work-group size more than the time costs: the fastest is not the best.
SCORING = ResultMetrics.of({"name": "k", "metrics": {"score": "wg / time_ms"}}, {})


def test_an_objective_chooses_the_candidates_and_the_winner():
    """With --objective score, confirmation re-timed the fastest and named the fastest the
    winner, while the run's best (by score) was another configuration."""
    # scores: A 8, B 10.7, C 16, D 6.4; the fastest are A and B
    searched = [_ok(A, [1.0]), _ok(B, [1.5]), _ok(C, [2.0]), _ok(D, [10.0])]
    measure, calls = _fake({A: [1.0] * 9, B: [1.5] * 9, C: [2.0] * 9, D: [10.0] * 9})
    goal = Objective.parse("score")
    got = confirm(searched, measure, lambda c, t: None, top=2, max_seconds=60, objective=goal,
                  scoring=SCORING)  # fmt: skip
    assert got is not None and set(calls) == {B, C} and got.winner.config == C and got.separated
    assert got.winner.median_ms == 2.0 and got.value(got.winner) == pytest.approx(16.0)
    j = got.to_json()
    assert j["objective"] == "score:max" and j["winner"] == {"wg": 32}
    assert j["value"] == pytest.approx(16.0)
    assert j["candidates"][1]["value"] == pytest.approx(32 / 3)


def test_an_objective_compares_intervals_of_its_score():
    """Times that overlap (B 1.5, C 2.0 with wide intervals) may still separate by score."""
    noisy = {B: [1.2, 1.5, 1.8] * 3, C: [1.7, 2.0, 2.3] * 3}
    measure, _ = _fake(noisy)
    goal = Objective.parse("score")
    got = confirm([_ok(B, [1.5]), _ok(C, [2.0])], measure, lambda c, t: None, top=2,
                  max_seconds=0.05, objective=goal, scoring=SCORING)  # fmt: skip
    assert got is not None and got.winner.config == C
    low, high = got.winner.score_interval or (0.0, 0.0)
    assert low <= got.winner.rank <= high and got.separated  # 32/2.3 > 16/1.2


def test_an_objective_nothing_can_rank_confirms_nothing():
    """Without the values a metric needs (no scoring), no result can be ranked by it."""
    searched = [_ok(A, [1.0]), _ok(B, [2.0])]
    goal = Objective.parse("score")
    assert confirm(searched, _fake({})[0], lambda c, t: None, objective=goal) is None


SCORED_SPEC = (
    'name = "vscore"\nentry = "vscore"\nglobal_size = ["n"]\nlocal_size = ["block"]\n'
    'source = "__kernel void vscore(__global const float* a, __global float* c) '
    '{ int i = get_global_id(0); c[i] = a[i] * 2; }"\nproblem = { n = 4096 }\n'
    'params = [{ name = "block", values = [4, 16, 64], kind = "launch" }]\n'
    'args = [{ kind = "array", name = "a", dtype = "float32", shape = ["n"] },\n'
    '  { kind = "array", name = "c", dtype = "float32", shape = ["n"], output = true }]\n'
    '[metrics]\nscore = "block * block / time_ms"\n'
)


@pytest.mark.slow  # two tuning runs in subprocesses
def test_cli_confirms_by_the_objective_in_json_and_text(tmp_path):
    """tune --objective printed a best by the objective and a confirmed best by time."""
    kernel = tmp_path / "vscore.toml"
    kernel.write_text(SCORED_SPEC)
    run = [sys.executable, "-m", "perfport", "tune", str(kernel), "--repeats", "2", "--no-verify",
           "--db", str(tmp_path / "s.db"), "--objective", "score", "--confirm", "3",
           "--confirm-seconds", "0.5"]  # fmt: skip
    done = subprocess.run([*run, "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["confirmed"]["objective"] == "score:max" == out["objective"]
    assert out["confirmed"]["winner"] == out["best"]["config"]
    text = subprocess.run(run, capture_output=True, text=True).stdout
    assert "confirmed best by score:max {'block': " in text.replace("\n", " ")


@pytest.mark.parametrize("top", [1, -1, True, 2.5])
def test_confirm_top_of_one_is_refused_before_anything_is_written(tmp_path, top):
    """confirm_top=1 was accepted and re-timed nothing (one has nothing to be compared with)."""
    db = tmp_path / "r.db"
    with pytest.raises(PerfportError, match="give 0 \\(off\\) or at least 2"):
        tune("vector_add", problem={"n": 1024}, budget=2, db=db, confirm_top=top)
    assert not db.exists()


def test_cli_confirm_one_is_one_line_exit_2(tmp_path, capsys):
    """`tune --confirm 1` ran and gave confirmed: null, as --confirm 0 does."""
    db = tmp_path / "r.db"
    with pytest.raises(SystemExit) as stopped:
        main(["tune", "vector_add", "--confirm", "1", "--budget", "2", "--db", str(db)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1 and not db.exists()
    assert "--confirm N re-times the N best side by side: give 0 (off) or at least 2" in err


def test_two_samples_each_are_never_beyond_doubt():
    """With --repeats 1 a round adds one sample a candidate: the range of two samples holds
    the median only half the time, so re-timing goes on to MIN_CI_SAMPLES before it
    separates, and a time limit that ends first leaves the winner not separated."""
    searched = [_ok(A, [1.0]), _ok(B, [5.0])]
    measure, _ = _fake({A: [1.0], B: [5.0]})
    got = confirm(searched, measure, lambda c, t: None, top=2, max_seconds=60)
    assert got is not None and got.separated
    assert min(c.n for c in got.candidates) == MIN_CI_SAMPLES
    measure, _ = _fake({A: [1.0], B: [5.0]})
    cut = confirm(searched, measure, lambda c, t: None, top=2, max_seconds=0)
    assert cut is not None and cut.rounds == 1 and not cut.separated and cut.too_few
    assert "give no 95% interval" in confirmation_line(cut)


def test_six_samples_are_the_fewest_with_a_95_percent_interval():
    assert MIN_CI_SAMPLES == 6  # the range of n samples: 1 - 2^(1-n) >= 0.95 from n = 6
    five, six = summarize([1.0, 2.0, 3.0, 4.0, 5.0]), summarize([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert (five.ci_low, five.ci_high, six.ci_low, six.ci_high) == (1.0, 5.0, 1.0, 6.0)
