"""perfport._core.interrupts: signals held inside guards, raised only where stopping is safe."""

from __future__ import annotations

import os
import signal

import pytest

from perfport._core.interrupts import checkpoint, guarded, interruptible, take_held


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_held_inside_a_guard_and_raised_inside_interruptible(sig):
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


def test_the_outermost_guard_delivers_what_it_held():
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
