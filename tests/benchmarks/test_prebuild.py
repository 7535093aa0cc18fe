"""benchmarks/prebuild.py: every distinct build of a space, compiled in worker processes."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import load_benchmark

module = load_benchmark("prebuild")
EXAMPLES = Path(__file__).parents[2] / "examples"


def test_one_build_per_distinct_define_set(cpu):
    # saxpy: wg is a launch parameter, ITEMS a compile-time one with 4 values.
    builds = module.builds(str(EXAMPLES / "saxpy.toml"), cpu.id, {})
    assert sorted(int(b["ITEMS"]) for b in builds) == [1, 2, 4, 8]


def test_builds_compile_and_failures_are_counted(cpu, tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(module.__file__).parent))  # spawned workers import it
    spec = tmp_path / "s.toml"
    text = (EXAMPLES / "saxpy.toml").read_text().replace('source_file = "saxpy.cl"', "")
    # ITEMS = 8 breaks the build: the run counts it and goes on.
    source = (
        (EXAMPLES / "saxpy.cl").read_text().replace("{", "{\n#if ITEMS == 8\nbroken\n#endif", 1)
    )
    spec.write_text(
        f'source = """{source}"""\n' + text.replace('reference = "saxpy.py:reference"', "")
    )
    argv = [str(spec), "--device", cpu.id, "--jobs", "2"]
    assert module.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["builds"] == 4 and report["failed"] == 1 and report["jobs"] == 2


def test_configurations_a_database_holds_are_skipped(cpu, tmp_path):
    from perfport import tune

    db = tmp_path / "r.db"
    spec = str(EXAMPLES / "saxpy.toml")
    tune(spec, device=cpu.id, strategy="brute_force", budget=5, db=db, problem={"n": 4096})
    assert (
        len(module.builds(spec, cpu.id, {"n": 4096}, str(db))) == 4
    )  # each ITEMS still has some wg
    tune(spec, device=cpu.id, strategy="brute_force", db=db, problem={"n": 4096})
    assert module.builds(spec, cpu.id, {"n": 4096}, str(db)) == []
    assert len(module.builds(spec, cpu.id, {"n": 1024}, str(db))) == 4  # another problem's builds
