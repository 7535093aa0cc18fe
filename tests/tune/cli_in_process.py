"""``perfport ARGS`` run in the test's own process (perfport.cli.main), for tests of what a
command does rather than of its process: a subprocess pays Python's start and perfport's
imports (about a second of CPU) on every call. Signals, a killed process's exit, the
environment and the interpreter's own output stay with real processes.

Output is captured at the file descriptors (capfd), so a measurement worker's stderr counts
as a real command's would; an exception main() does not handle fails the test outright,
where a real command would have printed its traceback."""

from __future__ import annotations

import signal
import subprocess

import pytest

from perfport.cli import main


def run_cli(capfd: pytest.CaptureFixture[str], *args: object) -> subprocess.CompletedProcess[str]:
    """``perfport *args`` as ``subprocess.run(..., capture_output=True, text=True)`` returns
    it: exit status, stdout and stderr."""
    argv = [str(a) for a in args]
    capfd.readouterr()  # what the test printed before is not the command's
    term = signal.getsignal(signal.SIGTERM)  # main() takes SIGTERM over, as a command does
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals and --help
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        signal.signal(signal.SIGTERM, term)
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["perfport", *argv], code, out, err)
