"""The worker process: ``python -m perfport.measure.worker READ_FD WRITE_FD``.

It runs trials for one Runner (see runner.py for the protocol). It imports no user code: the
spec arrives without its reference function, and the expected outputs arrive as arrays.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import sys
from multiprocessing.connection import Connection

from perfport._core import Measurement, Outcome, SpecError
from perfport.devices import open_session
from perfport.measure.trial import TrialEngine

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the parent dies, so a kill -9'd campaign leaves no worker."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def serve(conn: Connection) -> None:
    try:
        spec, problem, device, settings, expected, label = conn.recv()
        engine = TrialEngine(open_session(device), spec, problem, settings)
        if expected is not None:
            engine.use_expected(expected, label)
    except Exception as exc:
        conn.send(("setup_failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", engine.verification))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] not in ("trial", "expect"):
            return
        if message[0] == "expect":
            engine.use_expected(message[1], message[2])
            continue
        _, config, capture, hand_back = message
        capture = capture or hand_back  # outputs handed back are judged by the parent
        try:
            measurement = engine.run(
                config, alive=lambda: conn.send(("alive",)), capture=capture, verify=not hand_back
            )
        except SpecError as exc:  # the spec's mistake found at run time (the argument count)
            measurement = Measurement(config, Outcome.CRASHED, str(exc))
        except Exception as exc:  # a bug in perfport or the driver: keep the campaign going
            measurement = Measurement(
                config, Outcome.CRASHED, f"unexpected {type(exc).__name__}: {exc}"
            )
        captured = engine.captured if capture and measurement.ok else None
        healthy = engine.session.healthy
        # The parent keeps the reference outputs (and says what they are: use_expected comes
        # from it), so a restarted worker verifies against the same ones.
        conn.send(("result", measurement, healthy, captured))
        if not healthy:
            return  # the context is poisoned: the parent starts a fresh worker


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _die_with_parent()
    read_fd, write_fd = int(sys.argv[1]), int(sys.argv[2])
    # The parent gone mid-message (kill -9 of the driver): nobody to report to, and a
    # traceback would land on the terminal the driver left.
    with (
        contextlib.suppress(EOFError, OSError),
        Connection(read_fd, writable=False) as inbox,
        Connection(write_fd, readable=False) as outbox,
    ):
        serve(_Duplex(inbox, outbox))  # type: ignore[arg-type]


class _Duplex:
    """One object with recv and send over two one-way pipes."""

    def __init__(self, inbox: Connection, outbox: Connection) -> None:
        self.recv = inbox.recv
        self.send = outbox.send


if __name__ == "__main__":
    main()
