"""Names a user gave print as written: rich read ``[red]`` in a kernel or device name as
markup, hid it, and a ``[/]`` with nothing to close ended every ``results`` in a traceback."""

import json
import subprocess
import sys

KERNEL, DEVICE = "[/] [bold]k[/bold", "[red]dev[/red]"


def perfport(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfport", *args], capture_output=True, text=True, timeout=120,
        env={**__import__("os").environ, "COLUMNS": "200"},
    )  # fmt: skip


def test_brackets_in_names_are_printed_not_read_as_markup(tmp_path):
    cache = {"device_name": "GPU", "kernel_name": "k", "problem_size": 64,
             "tune_params_keys": ["x"], "tune_params": {"x": [1, 2]},
             "cache": {"1": {"x": 1, "time": 1.0, "times": [1.0]},
                       "2": {"x": 2, "time": 2.0, "times": [2.0]}}}  # fmt: skip
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cache))
    db = str(tmp_path / "r.db")
    done = perfport(
        "import", str(path), "--db", db, "--kernel-name", KERNEL, "--device-name", DEVICE
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert KERNEL in done.stdout and DEVICE in done.stdout
    shown = perfport("results", "--db", db)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert DEVICE in shown.stdout and "[bold]k" in shown.stdout
