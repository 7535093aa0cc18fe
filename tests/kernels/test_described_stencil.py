"""A stencil described as data (name, C body, borders): runs like the built-ins, loads from a
.json file, and malformed descriptions get one-line errors."""

import json

import numpy as np
import pytest

from conftest import BOX_STENCIL
from perfport._core import Config, Outcome, Problem, SpecError
from perfport.devices import open_session
from perfport.kernels import described_stencil, resolve_kernel
from perfport.kernels.stencil import shifted_views
from perfport.measure import RunSettings, Timing, TrialEngine

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))


def test_described_stencil_computes_its_body(cpu):
    spec = described_stencil(BOX_STENCIL)
    assert spec.reference is None and spec.name == "box5x3"
    engine = TrialEngine(
        open_session(cpu), spec, Problem.of({"width": 37, "height": 23, "dtype": "int"}), QUICK
    )
    get = shifted_views(
        engine.initial["input"],
        {"boundary": "nearest", "north": 1, "south": 1, "east": 2, "west": 2},
    )
    expected = sum(get(dx, dy) for dy in (-1, 0, 1) for dx in (-2, -1, 0, 1, 2))
    engine.use_expected({"output": expected.astype(np.int32)}, "numpy box sum")
    for wc, wr in ((1, 1), (16, 4), (8, 16)):
        m = engine.run(Config.of(wc=wc, wr=wr))
        assert m.outcome is Outcome.OK, (wc, wr, m.message)


def test_described_stencil_loads_from_a_json_file(tmp_path):
    path = tmp_path / "box.json"
    path.write_text(json.dumps(BOX_STENCIL))
    spec = resolve_kernel(path)
    assert spec.source == described_stencil(BOX_STENCIL).source
    assert dict(spec.define_exprs)["EAST"].value({}) == 2


@pytest.mark.parametrize(
    ("description", "message"),
    [
        ({**BOX_STENCIL, "radius": 2}, "unknown keys ['radius']"),
        ({**BOX_STENCIL, "name": "two words"}, "must be an identifier"),
        ({**BOX_STENCIL, "name": 3}, "must be an identifier"),
        ({**BOX_STENCIL, "body": "  "}, "body must be"),
        ({**BOX_STENCIL, "body": "x" * 20_001}, "body must be"),
        ({**BOX_STENCIL, "north": -1}, "north must be an integer from 0 to 64"),
        ({**BOX_STENCIL, "west": 2.5}, "west must be an integer"),
        ({**BOX_STENCIL, "south": True}, "south must be an integer"),
        ({"body": "return GET(0, 0);"}, "name is missing"),  # said "name None must be ..."
    ],
)
def test_malformed_descriptions_are_refused(description, message):
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        described_stencil(description)


def test_a_json_file_of_another_kind_says_what_perfport_reads(tmp_path):
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2, 3]")
    with pytest.raises(SpecError, match=r"stencil description object .*T1 or BAT search-space"):
        resolve_kernel(listed)  # 'perfport space' and 'tune': the three kinds of JSON file
    t1 = tmp_path / "t1.json"
    t1.write_text(json.dumps({"General": {}, "KernelSpecification": {}}))
    with pytest.raises(SpecError, match=r"t1.json: a Kernel Tuner T1 .*'perfport space' reads"):
        resolve_kernel(t1)


@pytest.mark.parametrize(
    ("text", "message"), [("not json", "not JSON"), ("[1, 2]", "not a JSON object")]
)
def test_a_malformed_json_file_is_refused(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SpecError, match=message):
        resolve_kernel(path)
    with pytest.raises(SpecError, match="cannot be read"):
        resolve_kernel(tmp_path / "missing.json")
