"""The report's sections for the other capabilities: from the store (calibrations, split
sweeps) and from the commands' --json files given with --with."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from report_store import FILES, KINDS, add_capabilities, small_store_at

from perfport._core import PerfportError
from perfport.report import write_report
from perfport.report.attached import Kind, read_attached, recognise

ALL = [FILES / f"{k}.json" for k in KINDS]


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    return small_store_at(tmp_path)


def _titles(page: str) -> list[str]:
    return re.findall(r"<title>([^<]*)</title>", page)


def test_each_command_output_is_recognised_by_its_keys():
    kinds = [read_attached(p).kind for p in ALL]
    assert kinds == [Kind.WG, Kind.SELECT, Kind.MODEL, Kind.SPLIT]
    assert recognise({"results": []}) is None and recognise([1, 2]) is None
    # A wg result is not a select result: the keys tell them apart.
    wg = json.loads((FILES / "wg.json").read_text())["results"][0]
    assert recognise({"results": [{k: v for k, v in wg.items() if k != "method"}]}) is None


def test_every_section_from_files(small_store: Path, tmp_path: Path):
    written = write_report(small_store, tmp_path / "out", attach=ALL)
    assert written.sections == ("split plans", *(k.value for k in Kind))
    page = Path(written.files[0]).read_text()
    titles = _titles(page)
    wg = json.loads((FILES / "wg.json").read_text())["results"][0]
    # wg: one bar per device and per kernel, and every name in the table
    assert "fraction of the oracle per device: performance_forest+novel, device" in titles
    assert "fraction of the oracle per kernel: performance_forest+novel, device" in titles
    for name in (*wg["per_device"], *wg["per_kernel"]):
        assert f"<td>{name}</td>" in page
    # select: mean and worst against k for each normalisation and pruning
    for group in ("relative, greedy", "relative, top_n"):
        assert f"mean fraction of best: {group}" in titles
        assert f"worst fraction of best: {group}" in titles
    # model: Figures 7-9, the breakdown and the calibrated parameters
    assert any(t.startswith("matmul on pthread-AMD EPYC") for t in titles)
    assert any(t.startswith("Share of each model term") for t in titles)
    assert "Calibrated parameters" in page and "<th>p_gload</th>" in page
    # split: the file's sweep, its computed split marked
    assert "sweep of convolution: time against the split" in titles
    assert "computed 0.58" in page
    assert "https://" not in page and page.count('class="sortable"') >= 8


def test_the_store_draws_its_calibrations_and_sweeps(small_store: Path, tmp_path: Path):
    add_capabilities(small_store)
    written = write_report(small_store, tmp_path / "out", attach=[FILES / "split.json"])
    page = Path(written.files[0]).read_text()
    assert written.sections == ("split plans", "model calibrations", "split --sweep N --json")
    assert "sweep of plan 2: time against the split" in _titles(page)
    assert "Stored model calibrations" in page and "<td>GPU Alpha</td>" in page
    # A --kernel report leaves the device's calibrations out; a --device one keeps them.
    narrow = write_report(small_store, tmp_path / "k", kernel="vector_add")
    assert "model calibrations" not in narrow.sections
    other = write_report(small_store, tmp_path / "d", device="GPU Beta")
    assert "model calibrations" not in other.sections


def test_a_split_file_the_store_holds_is_drawn_once(tmp_path: Path):
    run = json.loads((FILES / "split.json").read_text())
    db = small_store_at(tmp_path)
    add_capabilities(db)  # stores plan 2 with this run
    run["plan_id"] = 2
    (tmp_path / "again.json").write_text(json.dumps(run))
    written = write_report(db, tmp_path / "out", attach=[tmp_path / "again.json"])
    assert written.sections == ("split plans", "model calibrations")


def test_older_files_without_the_added_keys_still_draw(small_store: Path, tmp_path: Path):
    wg = json.loads((FILES / "wg.json").read_text())
    for r in wg["results"]:
        del r["per_device"], r["per_kernel"]  # wg evaluate without --by-device
    sel = json.loads((FILES / "select.json").read_text())
    for r in sel["results"]:
        del r["worst"]  # written before 'worst' was added
    (tmp_path / "wg.json").write_text(json.dumps(wg))
    (tmp_path / "sel.json").write_text(json.dumps(sel))
    written = write_report(small_store, tmp_path / "out",
                           attach=[tmp_path / "wg.json", tmp_path / "sel.json"])  # fmt: skip
    page = Path(written.files[0]).read_text()
    assert "fraction of the oracle reached" in _titles(page) and "--by-device" in page
    assert not any(t.startswith("worst fraction") for t in _titles(page))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON"),
        ('{"results": [{"a": 1}]}', "not a file the report reads"),
        ('{"results": [{"variant": "v", "device": "d", "points": [{"sizes": {}}]}]}',
         "point without"),
    ],
)  # fmt: skip
def test_a_file_of_no_known_kind_is_refused(small_store, tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(PerfportError, match=message):
        write_report(small_store, tmp_path / "out", attach=[FILES / "wg.json", bad])
    assert not (tmp_path / "out").exists()  # nothing written


def test_cli_with_files_and_a_bad_one(small_store: Path, tmp_path: Path):
    base = [sys.executable, "-m", "perfport", "report", "--db", str(small_store)]
    argv = [*base, "-o", str(tmp_path / "o"), "--json"]
    for path in ALL:
        argv += ["--with", str(path)]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sections"][-4:] == [k.value for k in Kind]
    bad = subprocess.run([*base, "-o", str(tmp_path / "b"), "--with", str(small_store)],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "'perfport wg evaluate --json'" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("kind", "edit", "message"),
    [
        ("select", lambda d: d["results"][0].update(performance="abc"),
         r"results\[0\]\.performance is \"abc\", not a finite number"),
        ("select", lambda d: d["results"][0].update(performance=None),
         r"results\[0\]\.performance is null"),
        ("select", lambda d: d["results"][1].update(k="two"), r"results\[1\]\.k is \"two\""),
        ("select", lambda d: d["results"][0].update(worst=float("inf")), r"\.worst is Infinity"),
        ("wg", lambda d: d["results"][0].update(performance="abc"),
         r"results\[0\]\.performance is \"abc\""),
        ("wg", lambda d: d["results"][0]["per_device"].popitem(), None),  # still fine
        ("wg", lambda d: next(iter(d["results"][0]["per_device"].values())).update(
            performance="x"), r"results\[0\]\.per_device is"),
        ("model", lambda d: d["results"][0]["points"][0].update(measured_ms="1"),
         r"results\[0\]\.points\[0\]\.measured_ms is \"1\""),
        ("split", lambda d: d.update(measured_ms=None), r"file measured_ms is null"),
        ("split", lambda d: d["sweep"][0].update(share="0"), r"sweep\[0\]\.share is \"0\""),
    ],
)  # fmt: skip
def test_a_wrong_typed_value_is_one_line_naming_the_field(tmp_path, kind, edit, message):
    # Each of these was a traceback (ValueError, TypeError) from the middle of drawing.
    data = json.loads((FILES / f"{kind}.json").read_text())
    edit(data)
    bad = tmp_path / f"{kind}.json"
    bad.write_text(json.dumps(data))
    if message is None:
        read_attached(bad)
        return
    with pytest.raises(PerfportError, match=message) as e:
        read_attached(bad)
    assert str(bad) in str(e.value) and "give the command's output unchanged" in str(e.value)
    assert "\n" not in str(e.value)


def test_cli_wrong_typed_with_file_exits_2_in_one_line(small_store: Path, tmp_path: Path):
    data = json.loads((FILES / "wg.json").read_text())
    data["results"][0]["performance"] = "abc"
    bad = tmp_path / "wg.json"
    bad.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "perfport", "report", "--db", str(small_store),
                           "-o", str(tmp_path / "o"), "--with", str(bad)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "results[0].performance" in done.stderr and not (tmp_path / "o").exists()


def _model_file(tmp_path: Path, edit) -> Path:
    data = json.loads((FILES / "model.json").read_text())
    edit(data)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data))
    return path


def _point(d):
    return d["results"][0]["points"][0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(model="x"), r"file model is \"x\", not an object"),
        (lambda d: d.update(calibrations="x"), r"file calibrations is \"x\", not a list"),
        (lambda d: d.update(calibrations=["x"]), r"file calibrations\[0\] is not an object"),
        (lambda d: d["model"].update(expression=3), r"file model\.expression is 3, not a string"),
        (lambda d: d["calibrations"][0].update(device=7), r"calibrations\[0\]\.device is 7"),
        (lambda d: d["calibrations"][0].update(parameters=[1]), r"\.parameters is \[1\], not an"),
        (lambda d: d["calibrations"][0]["parameters"].update(p_gload="1"), r"\.parameters is"),
        (lambda d: d["calibrations"][0].update(residual="x"), r"\.residual is \"x\""),
        (lambda d: d.update(misranked=[1]), r"file misranked is \[1\], not a list of strings"),
        (lambda d: _point(d).update(terms={"p_gload * f": "x"}), r"points\[0\]\.terms is"),
    ],
)  # fmt: skip
def test_a_wrong_typed_model_or_calibration_is_one_line(small_store, tmp_path, edit, message):
    # A 'model' or 'calibrations' that was a string was an AttributeError ('str' object has
    # no attribute 'get') from the model section; the file's top level, model, calibrations
    # and terms were not checked as its results were.
    bad = _model_file(tmp_path, edit)
    with pytest.raises(PerfportError, match=message) as e:
        write_report(small_store, tmp_path / "out", attach=[bad])
    assert str(bad) in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()


def test_nulls_the_model_command_writes_still_draw(small_store, tmp_path):
    # --json writes a non-finite value as null: a model, a device, parameters, a parameter
    # or a term share of null is drawn as nothing, not refused.
    def nulls(d):
        d.update(model=None, misranked=None)
        d["calibrations"][0].update(device=None, residual=None)
        d["calibrations"][0]["parameters"]["p_gload"] = None
        for p in d["results"][0]["points"]:
            p["terms"] = dict.fromkeys(p["terms"])

    written = write_report(small_store, tmp_path / "out", attach=[_model_file(tmp_path, nulls)])
    assert "Calibrated parameters" in Path(written.files[0]).read_text()
