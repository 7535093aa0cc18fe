"""Rejected input leaves the store as it was, byte for byte: every check runs before the
first write."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from perfport.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples"
TUNE = ["--budget", "3", "--repeats", "2"]


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, str]:
    """A database holding one stencil campaign, and that campaign's key."""
    db = tmp_path_factory.mktemp("db") / "stored.db"
    assert (
        main(["tune", "stencil", "--problem", "width=64", "height=64", *TUNE, "--db", str(db)]) == 0
    )
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        key = conn.execute("SELECT key FROM campaigns").fetchone()[0]
    conn.close()
    return db, key


def _refused_unchanged(
    stored_db: Path, tmp_path: Path, capsys, argv: list[str], *words: str
) -> None:
    db = tmp_path / "copy.db"
    shutil.copy(stored_db, db)
    before = db.read_bytes()
    code = main([*argv, "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("perfport: error:"), err
    for word in words:
        assert word in err, err
    assert db.read_bytes() == before
    wal = Path(f"{db}-wal")
    assert not wal.exists() or wal.stat().st_size == 0


@pytest.mark.parametrize(
    ("value", "words"),
    [("-5", ["at least 1"]), ("0", ["at least 1"]), ("99999999999", ["GiB", "smaller problem"])],
)
def test_problem_values_no_launch_can_use(stored, tmp_path, capsys, value, words):
    argv = ["tune", "stencil", "--problem", f"width={value}", "height=64", *TUNE]
    _refused_unchanged(stored[0], tmp_path, capsys, argv, *words)


def test_an_unusable_array_shape(stored, tmp_path, capsys):
    spec = tmp_path / "unusable.toml"
    shutil.copy(EXAMPLES / "saxpy.cl", tmp_path / "saxpy.cl")
    text = (EXAMPLES / "saxpy.toml").read_text().replace('reference = "saxpy.py:reference"', "")
    spec.write_text(text.replace('shape = ["n"]', 'shape = ["n - 10**9"]', 1))
    assert '"n - 10**9"' in spec.read_text()
    _refused_unchanged(stored[0], tmp_path, capsys, ["tune", str(spec), *TUNE], "would have shape")


@pytest.mark.parametrize(
    ("reference", "words"),
    [("os:system", ["not allowed", "PERFPORT_REFERENCE_MODULES"]),
     ("subprocess:run", ["not allowed"]),
     ("../evil.py:reference", ["outside the spec's folder"]),
     ("/etc/evil.py:reference", ["outside the spec's folder"])],
)  # fmt: skip
def test_a_reference_to_any_function(stored, tmp_path, capsys, reference, words):
    folder = tmp_path / "spec"
    folder.mkdir()
    (tmp_path / "evil.py").write_text("def reference(problem, inputs):\n    raise SystemExit(9)\n")
    shutil.copy(EXAMPLES / "saxpy.py", folder / "saxpy.py")
    shutil.copy(EXAMPLES / "saxpy.cl", folder / "saxpy.cl")
    text = (EXAMPLES / "saxpy.toml").read_text()
    (folder / "s.toml").write_text(text.replace("saxpy.py:reference", reference))
    _refused_unchanged(stored[0], tmp_path, capsys, ["tune", str(folder / "s.toml"), *TUNE], *words)


def test_an_allowed_reference_module(tmp_path, monkeypatch):
    from perfport.kernels import loader

    monkeypatch.setattr(loader, "_REFERENCE_MODULES", set())
    text = (EXAMPLES / "saxpy.toml").read_text()
    (tmp_path / "s.toml").write_text(text.replace("saxpy.py:reference", "numpy.linalg:norm"))
    shutil.copy(EXAMPLES / "saxpy.cl", tmp_path / "saxpy.cl")
    with pytest.raises(loader.SpecError, match="not allowed"):
        loader.load_kernel(tmp_path / "s.toml")
    loader.allow_reference_modules("numpy")
    assert loader.load_kernel(tmp_path / "s.toml").reference is not None


def test_a_campaign_key_of_another_kernel(stored, tmp_path, capsys):
    db, key = stored
    argv = ["tune", "vector_add", "--problem", "n=4096", "--campaign", key, *TUNE]
    _refused_unchanged(db, tmp_path, capsys, argv, "another kernel", "another problem")


def test_a_campaign_key_after_the_source_was_edited(tmp_path, capsys):
    folder = tmp_path / "spec"
    folder.mkdir()
    for name in ("saxpy.toml", "saxpy.cl", "saxpy.py"):
        shutil.copy(EXAMPLES / name, folder / name)
    db = tmp_path / "stored.db"
    argv = ["tune", str(folder / "saxpy.toml"), "--campaign", "mine", *TUNE]
    assert main([*argv, "--db", str(db)]) == 0
    capsys.readouterr()
    (folder / "saxpy.cl").write_text((folder / "saxpy.cl").read_text() + "\n// edited\n")
    words = ("kernel 'saxpy' whose source changed", "--campaign", "restore the kernel's source")
    _refused_unchanged(db, tmp_path, capsys, argv, *words)


def test_a_refused_import_leaves_no_database_behind(stored, tmp_path, capsys):
    bad = tmp_path / "cache.json"
    bad.write_text('{"cache": {}, "tune_params_keys": 3}')
    _refused_unchanged(*stored[:1], tmp_path, capsys, ["import", str(bad)], str(bad))
    db = tmp_path / "new.db"
    assert main(["import", str(bad), "--db", str(db)]) == 2
    assert not db.exists()
