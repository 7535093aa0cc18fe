"""perfport._core.interrupts: signals held inside guards, raised only where stopping is safe."""

from __future__ import annotations

import os
import signal

import pytest

from perfport._core.interrupts import checkpoint, guarded, interruptible, take_held


@pytest.fixture
def cli_sigterm():
    """SIGTERM handled as the CLI handles it (as Ctrl-C), so that a test process survives it:
    with the default handler, leaving the outermost guard ends the process."""

    def as_ctrl_c(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, as_ctrl_c)
    yield
    signal.signal(signal.SIGTERM, before)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_held_inside_a_guard_and_raised_inside_interruptible(sig, cli_sigterm):
    steps = []
    with pytest.raises(KeyboardInterrupt), guarded():
        os.kill(os.getpid(), sig)
        steps.append("after the signal")  # still running: the signal is held
        with interruptible():
            steps.append("never")
    assert steps == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handlers restored


def test_a_nested_guard_delivers_after_its_transaction():
    done = []
    with guarded():
        try:
            with interruptible():
                with guarded():  # a transaction: the interrupt waits for its end
                    os.kill(os.getpid(), signal.SIGINT)
                    done.append("commit")
                done.append("never")
        except KeyboardInterrupt:
            done.append("stopped")
    assert done == ["commit", "stopped"]


def test_the_outermost_guard_delivers_what_it_held(cli_sigterm):
    with pytest.raises(KeyboardInterrupt), guarded():
        os.kill(os.getpid(), signal.SIGINT)
    with guarded():
        os.kill(os.getpid(), signal.SIGINT)
        assert take_held()  # recorded by the caller instead: nothing left to deliver
    with guarded():
        checkpoint()  # nothing held: no interrupt
        os.kill(os.getpid(), signal.SIGTERM)
        with pytest.raises(KeyboardInterrupt):
            checkpoint()


def test_outside_a_guard_nothing_changes():
    with pytest.raises(KeyboardInterrupt), interruptible():
        os.kill(os.getpid(), signal.SIGINT)
        signal.getsignal(signal.SIGINT)  # any bytecode: Python raises here already
        pytest.fail("not interrupted")


def test_a_sigterm_ends_a_library_caller_once_its_guard_is_left(tmp_path):
    """perfport.tune took a SIGTERM as a Ctrl-C and returned 'interrupted', so a script that
    tuned in a loop ran on and a scheduler could not stop it. Now the bookkeeping finishes
    (the campaign's status is stored), then the default SIGTERM ends the process."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "caller.py"
    script.write_text(
        textwrap.dedent("""
        import os, signal
        from perfport._core.interrupts import guarded, interruptible
        for campaign in range(3):
            with guarded():
                try:
                    with interruptible():
                        os.kill(os.getpid(), signal.SIGTERM)
                        print("never", flush=True)
                except KeyboardInterrupt:
                    print("stored as interrupted", flush=True)
            print("next campaign", flush=True)
    """)
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGTERM
    assert done.stdout.splitlines() == ["stored as interrupted"]
