"""A described stencil cannot read outside its declared borders: constant GET offsets are
checked before anything compiles (one line, exit 2, store untouched); other offsets are
guarded at run time, and a read outside makes the trial wrong, never ok."""

import json
import re
import subprocess
import sys

import pytest

from perfport._core import Config, Outcome, Problem, SpecError
from perfport.devices import open_session
from perfport.kernels import described_stencil
from perfport.kernels.stencil import FLAG
from perfport.measure import Runner, RunSettings, Timing, TrialEngine

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))
OOB_SOUTH = {"name": "oob_south", "body": "return GET(0, 3);", "south": 1}
SMALL = Problem.of({"width": 40, "height": 24})


@pytest.mark.parametrize(
    ("description", "message"),
    [
        (OOB_SOUTH, 'GET(0, 3) reads 3 rows south of the cell, beyond the south border of 1; set "south": 3'),
        ({"name": "n", "body": "return GET(0, -2);", "north": 1}, "2 rows north"),
        ({"name": "e", "body": "return GET(1, 0);"}, "1 columns east of the cell, beyond the east border of 0"),
        ({"name": "w", "body": "return GET(-(WEST + 1), 0);", "west": 2}, "GET(-(WEST + 1), 0) = GET(-3, 0)"),
    ],
)  # fmt: skip
def test_a_constant_offset_outside_the_borders_is_refused(description, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        described_stencil(description)


def test_constant_offsets_inside_the_borders_need_no_guard():
    body = "return GET(0, SOUTH) + GET(-WEST, -1) /* GET(9, 9) is a comment */;"
    spec = described_stencil({"name": "fine", "body": body, "north": 1, "south": 2, "west": 1})
    assert not spec.fault_flag and "guarded_get" not in spec.source
    assert FLAG not in [a.name for a in spec.args]


def test_tune_refuses_oob_south_in_one_line_and_leaves_the_store(tmp_path):
    path, db = tmp_path / "oob_south.json", tmp_path / "r.db"
    path.write_text(json.dumps(OOB_SOUTH))
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "tune", str(path), "--db", str(db), "--budget", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "GET(0, 3)" in done.stderr and "south border of 1" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not db.exists()


def test_a_loop_reading_outside_the_borders_is_wrong_never_ok(cpu):
    body = "ELEM s = 0; for (int dy = 0; dy <= 3; ++dy) s += GET(0, dy); return (OUT)s;"
    spec = described_stencil({"name": "oob_loop", "body": body, "south": 1})
    assert spec.fault_flag == FLAG and "guarded_get" in spec.source
    engine = TrialEngine(open_session(cpu), spec, SMALL, QUICK)
    for wc, wr in ((8, 4), (16, 2)):
        m = engine.run(Config.of(wc=wc, wr=wr))
        assert m.outcome is Outcome.WRONG_RESULT, m
        assert f"{FLAG} = 2" in m.message  # 2: the south border
    # Through the runner too: no reference can be made, so nothing is stored as ok.
    with Runner(spec, SMALL, cpu, QUICK) as runner:
        outcomes = {runner.measure(Config.of(wc=c, wr=4)).outcome for c in (32, 8)}
    assert outcomes == {Outcome.WRONG_RESULT}


def test_a_guarded_loop_inside_the_borders_runs_and_verifies(cpu):
    body = "ELEM s = 0; for (int dy = -1; dy <= 1; ++dy) s += GET(0, dy); return (OUT)s;"
    spec = described_stencil(
        {"name": "col3", "body": body, "north": 1, "south": 1, "reference": "N + C + S"}
    )
    assert spec.fault_flag == FLAG
    with Runner(spec, SMALL, cpu, QUICK) as runner:
        for wc, wr in ((32, 4), (8, 8)):
            m = runner.measure(Config.of(wc=wc, wr=wr))
            assert m.outcome is Outcome.OK and m.verified_against == "numpy reference", m


def test_the_guarded_source_stays_as_its_campaigns_were_keyed():
    """The guard is compiled into every guarded stencil's own source, whose hash is part of
    its campaign keys. Its flag keeps one violated direction's bit (a loop reading east and
    west reports 4 or 8, not 12): OR-ing them would move every such campaign to a new key,
    and stored ones would no longer resume (docs/kernel-spec.md says what the flag holds)."""
    body = "float s = 0; for (int i = -2; i <= 2; ++i) s += GET(i, 0); return (OUT)s;"
    spec = described_stencil({"name": "lp", "body": body, "east": 1, "west": 1})
    assert spec.fault_flag == FLAG and spec.source_hash[:16] == "b997d4925d2068fe"
