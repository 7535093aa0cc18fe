"""A bundle's pick is checked against the kernel's restrictions at each problem: a Dispatcher
never launches a configuration the kernel forbids there, and ``select predict`` says so."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from select_cli import perfport

from perfport._core import LaunchError
from perfport.select import SelectError, dispatch
from perfport.select.bundle import TRAIN_PERFORMANCE, load_bundle, write_bundle
from perfport.select.dispatch import Dispatcher
from perfport.select.legality import Legality, legal_choice, preference_order
from perfport.select.tree import SelectorTree

# Each work-item doubles TS elements: where TS does not divide n, n // TS work-items leave the
# tail undone, a wrong result with no error. The restriction forbids that.
SOURCE = """__kernel void twice(__global const float* x, __global float* y, const int n) {
    const int g = get_global_id(0);
    for (int i = 0; i < TS; ++i) y[g * TS + i] = 2.0f * x[g * TS + i];
}
"""
SPEC = """name = "twice_ts"
entry = "twice"
source_file = "twice.cl"
global_size = ["n // TS"]
local_size = ["1"]
restrictions = ["n % TS == 0"]
default = { TS = 1 }
params = [{ name = "TS", values = [1, 2, 4] }]
args = [
  { kind = "array", name = "x", dtype = "float", shape = ["n"] },
  { kind = "array", name = "y", dtype = "float", shape = ["n"], output = true },
  { kind = "scalar", name = "n", dtype = "int", value = "n" },
]

[problem]
n = 64
"""
TS = [{"TS": 1}, {"TS": 2}, {"TS": 4}]


def spec_file(tmp_path: Path) -> Path:
    (tmp_path / "twice.cl").write_text(SOURCE)
    path = tmp_path / "twice.toml"
    path.write_text(SPEC)
    return path


def always(tmp_path: Path, pick: int, configs=TS, metadata=None) -> Path:
    """A bundle whose selector picks configuration ``pick`` at every problem."""
    out = tmp_path / f"bundle{pick}{len(configs)}"
    tree = SelectorTree.constant(("n",), pick)
    write_bundle(out, "twice_ts", ("TS",), configs, ("n",), tree, metadata=metadata)
    return out


def test_an_illegal_pick_falls_back_to_the_best_legal_configuration(tmp_path, cpu):
    spec = spec_file(tmp_path)
    ranked = always(tmp_path, 2, metadata={TRAIN_PERFORMANCE: [0.3, 0.8, 1.0]})
    x = np.arange(6, dtype=np.float32)
    with Dispatcher(ranked, device=cpu, spec=spec) as dispatcher:
        # TS=4 at n=6 doubled only 4 of the 6 elements, and said nothing.
        np.testing.assert_array_equal(dispatcher.run({"n": 6}, {"x": x})["y"], 2 * x)
        choice = dispatcher.choice({"n": 6})
        assert (choice.predicted, choice.index) == (2, 1)  # TS=2: the best that is legal
        assert "n % TS == 0" in choice.illegal
        assert dict(dispatcher.choose({"n": 8})) == {"TS": 4}  # legal: the pick itself
        assert not dispatcher.choice({"n": 8}).fell_back
        assert dict(dispatcher.choose({"n": 7})) == {"TS": 1}
    # A bundle that records no training performance falls back in its own order.
    with Dispatcher(always(tmp_path, 2), device=cpu, spec=spec) as dispatcher:
        assert dict(dispatcher.choose({"n": 6})) == {"TS": 1}


def test_no_legal_configuration_is_one_line(tmp_path, cpu):
    out = always(tmp_path, 1, configs=TS[1:])
    none = "n=7: none of the 2 shipped configurations is legal"
    with (
        Dispatcher(out, device=cpu, spec=spec_file(tmp_path)) as d,
        pytest.raises(SelectError, match=none),
    ):
        d.run({"n": 7}, {"x": np.ones(7)})


def test_the_launch_rules_count_without_restrictions(tmp_path):
    # No restriction, but the global size must still divide by the local size.
    path = spec_file(tmp_path)
    path.write_text(SPEC.replace('restrictions = ["n % TS == 0"]\n', "").replace(
        'global_size = ["n // TS"]\nlocal_size = ["1"]', 'global_size = ["n"]\nlocal_size = ["TS"]'
    ))  # fmt: skip
    from perfport.kernels import resolve_kernel

    spec = resolve_kernel(path)
    bundle = load_bundle(always(tmp_path, 2))
    choice = legal_choice(bundle, Legality(spec), spec.problem.merged({"n": 6}))
    assert (choice.index, choice.illegal) == (0, "n % TS == 0")
    assert preference_order(bundle) == (0, 1, 2)


def test_select_predict_names_an_illegal_pick_and_its_fallback(tmp_path, capsys):
    def predict(bundle: Path, *more: str) -> SimpleNamespace:
        return perfport(["select", "predict", "--bundle", str(bundle), *more], capsys)

    spec = spec_file(tmp_path)
    out = always(tmp_path, 2, metadata={TRAIN_PERFORMANCE: [0.3, 0.8, 1.0]})
    done = predict(out, "--problem", "n=6", "--spec", str(spec), "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["config"] == {"TS": 4} and answer["index"] == 2  # the selector's own pick
    assert answer["legal"] is False and answer["illegal"] == "n % TS == 0"
    assert answer["fallback"] == {"index": 1, "config": {"TS": 2}}
    text = predict(out, "--problem", "n=6", "--spec", str(spec))
    assert "illegal at this problem (breaks n % TS == 0)" in text.stdout
    legal = json.loads(predict(out, "--problem", "n=8", "--spec", str(spec), "--json").stdout)
    assert (legal["legal"], legal["illegal"], legal["fallback"]) == (True, None, None)
    unknown = json.loads(predict(out, "--problem", "n=6", "--json").stdout)  # no spec known
    assert unknown["legal"] is None and unknown["config"] == {"TS": 4}
    none = predict(out, "--problem", "n=7", "--spec", str(spec))
    assert none.returncode == 0  # TS=1 is legal at n=7
    odd = predict(always(tmp_path, 1, configs=TS[1:]), "--problem", "n=7", "--spec", str(spec))
    assert odd.returncode == 2 and "none of the 2 shipped" in odd.stderr.strip().splitlines()[-1]


def test_a_bundle_of_your_own_kernel_names_how_to_give_its_spec(tmp_path, cpu):
    out = always(tmp_path, 0)
    with pytest.raises(SelectError, match=r"spec='FILE.toml'\), or --spec FILE.toml"):
        Dispatcher(out, device=cpu)


def test_fit_records_the_spec_file_and_the_fallback_order(tmp_path, cpu):
    pytest.importorskip("sklearn", reason="scikit-learn (the models extra)")
    from perfport.select import PerfTable, fit_bundle

    spec = spec_file(tmp_path)
    sizes = [[8.0], [16.0], [32.0], [64.0], [128.0], [256.0]]
    times = [[4.0, 2.0, 1.0], [4.0, 2.0, 1.0], [4.0, 2.0, 1.5], [1.0, 2.0, 3.0],
             [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]  # fmt: skip
    table = PerfTable(("n",), sizes, ("TS",), ((1,), (2,), (4,)), times, "PoCL", "twice_ts")
    with pytest.raises(SelectError, match="is kernel matmul, but the data is of twice_ts"):
        fit_bundle(table, 2, tmp_path / "wrong", spec_file="matmul")
    bundle = fit_bundle(table, 3, tmp_path / "b", spec_file=spec)
    assert bundle.metadata["spec_file"] == str(spec.resolve())
    scores = bundle.metadata[TRAIN_PERFORMANCE]
    assert len(scores) == 3 and preference_order(bundle)[0] == int(np.argmax(scores))
    with Dispatcher(tmp_path / "b", device=cpu) as dispatcher:  # finds the recorded spec
        assert dispatcher.spec.name == "twice_ts"


# ---- refusals at run time: the device itself refuses a build or a launch ----------------------
RANKED = {TRAIN_PERFORMANCE: [0.3, 0.8, 1.0]}  # falls back TS=4 -> TS=2 -> TS=1


def refusing(tmp_path: Path, monkeypatch, fails_on: str = "TS == 4", local: str = "1") -> Path:
    """twice_ts whose source does not build where ``fails_on`` holds (a compiler refusing a
    tile), its work-group ``local``; each session it opens counts its builds in .compiled."""
    path = spec_file(tmp_path)
    source = f"#if {fails_on}\n#error this device refuses it\n#endif\n" + SOURCE
    (tmp_path / "twice.cl").write_text(source)
    path.write_text(SPEC.replace('local_size = ["1"]', f'local_size = ["{local}"]'))
    monkeypatch.setattr(dispatch, "open_session", counting(dispatch.open_session))
    return path


def counting(open_session):
    def opened(device):
        session = open_session(device)
        compile_ = session.compile
        session.compiled = 0

        def compile_counted(*args):
            session.compiled += 1
            return compile_(*args)

        session.compile = compile_counted
        return session

    return opened


def refuse_launches(dispatcher: Dispatcher, local_sizes, healthy: bool = True) -> None:
    session = dispatcher._open()
    launch = session.launch

    def refused(kernel, global_size, local_size, args, repeats=1):
        if tuple(local_size) in local_sizes:
            session.healthy = healthy
            raise LaunchError("CL_INVALID_WORK_GROUP_SIZE", f"local {local_size}", healthy)
        return launch(kernel, global_size, local_size, args, repeats)

    session.launch = refused


def test_a_configuration_that_does_not_build_falls_back_once(tmp_path, cpu, monkeypatch):
    spec = refusing(tmp_path, monkeypatch)
    x = np.arange(64, dtype=np.float32)
    with Dispatcher(always(tmp_path, 2, metadata=RANKED), device=cpu, spec=spec) as dispatcher:
        with pytest.warns(RuntimeWarning, match=r"build configuration TS=4 .*launched .*TS=2"):
            np.testing.assert_array_equal(dispatcher.run({"n": 64}, {"x": x})["y"], 2 * x)
        assert dispatcher._session.compiled == 2  # TS=4 (refused), then TS=2
        assert dict(dispatcher.choose({"n": 64})) == {"TS": 4}  # choose stays static
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # warned once: not again
            np.testing.assert_array_equal(dispatcher.run({"n": 64}, {"x": x})["y"], 2 * x)
        assert dispatcher._session.compiled == 2 and dispatcher.builds == 1  # nothing rebuilt


def test_a_refused_launch_falls_back(tmp_path, cpu, monkeypatch):
    spec = refusing(tmp_path, monkeypatch, fails_on="0", local="TS")
    x = np.arange(64, dtype=np.float32)
    with Dispatcher(always(tmp_path, 2, metadata=RANKED), device=cpu, spec=spec) as dispatcher:
        refuse_launches(dispatcher, {(4,)})
        with pytest.warns(RuntimeWarning, match="refused to launch configuration TS=4"):
            np.testing.assert_array_equal(dispatcher.run({"n": 64}, {"x": x})["y"], 2 * x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(dispatcher.run({"n": 64}, {"x": x})["y"], 2 * x)


def test_every_configuration_refused_is_one_line(tmp_path, cpu, monkeypatch):
    spec = refusing(tmp_path, monkeypatch, local="TS")  # TS=4 does not build
    with Dispatcher(always(tmp_path, 2, metadata=RANKED), device=cpu, spec=spec) as dispatcher:
        refuse_launches(dispatcher, {(1,), (2,)})  # and the others' launches are refused
        with pytest.raises(SelectError) as raised:
            dispatcher.run({"n": 64}, {"x": np.ones(64)})
    message = str(raised.value)
    assert "\n" not in message and "every shipped configuration was refused or illegal" in message
    assert "(configuration TS=1: CL_INVALID_WORK_GROUP_SIZE: local (1,))" in message  # the last
    assert message.endswith("fit the bundle on this device")


def test_a_poisoned_session_still_raises(tmp_path, cpu, monkeypatch):
    spec = refusing(tmp_path, monkeypatch, fails_on="0", local="TS")
    with Dispatcher(always(tmp_path, 2, metadata=RANKED), device=cpu, spec=spec) as dispatcher:
        refuse_launches(dispatcher, {(4,)}, healthy=False)
        with pytest.raises(SelectError, match="refused configuration TS=4 of twice_ts"):
            dispatcher.run({"n": 64}, {"x": np.ones(64)})
