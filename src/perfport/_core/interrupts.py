"""Ctrl-C and SIGTERM delivered only where stopping is safe.

Python raises KeyboardInterrupt between any two bytecodes, so an interrupt can land between a
transaction's BEGIN and its ``try``, or after its COMMIT and before the code that notes it.
Inside ``guarded()`` both signals are held instead; they surface as KeyboardInterrupt only
inside ``interruptible()`` (at once, or on entering it when one is held), at ``checkpoint()``,
or when the outermost guard is left. SIGTERM is handled as Ctrl-C while a guard is active;
where its handler was the default one, leaving the outermost guard then ends the process.

    with guarded():                 # nothing can interrupt the bookkeeping here
        open_the_campaign()
        try:
            with interruptible():   # the long work stops at once on Ctrl-C
                measure()
        except KeyboardInterrupt:
            status = "interrupted"
        finally:
            store(status)

Signals go to the main thread only, so outside it the guards do nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _State:
    """The one guard state of this process (signal handlers are per process)."""

    def __init__(self) -> None:
        self.depth = 0  # nested guarded() blocks
        self.raising = False  # inside interruptible(): raise at once
        self.held: int | None = None  # a signal that arrived while not raising
        self.terminated = False  # a SIGTERM arrived in the outermost guard, held or raised
        self.previous: dict[int, Any] = {}


_state = _State()


def _handler(signum: int, frame: FrameType | None) -> None:
    _state.terminated |= signum == signal.SIGTERM
    if _state.raising:
        _state.held = None
        raise KeyboardInterrupt
    _state.held = signum


def _active() -> bool:
    return _state.depth > 0 and threading.current_thread() is threading.main_thread()


@contextmanager
def guarded() -> Iterator[None]:
    """Hold SIGINT and SIGTERM inside. Leaving the outermost guard delivers a held signal to
    the handlers from before (a SIGTERM, held or taken as Ctrl-C inside, ends the process
    where its handler was the default); leaving a nested one inside ``interruptible()``
    raises KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    outer = _state.depth == 0
    was_raising = _state.raising
    _state.raising = False
    _state.depth += 1
    try:
        if outer:
            _state.previous = {s: signal.signal(s, _handler) for s in SIGNALS}
        yield
    finally:
        _state.depth -= 1
        _state.raising = was_raising
        if outer:
            _leave()
        elif was_raising and _state.held is not None:
            _state.held = None
            raise KeyboardInterrupt


def _leave() -> None:
    """Restore the handlers from before the outermost guard and deliver a held signal."""
    previous, _state.previous = _state.previous, {}
    for s, handler in previous.items():
        signal.signal(s, handler)
    held, _state.held = _state.held, None
    terminated, _state.terminated = _state.terminated, False
    if terminated and previous.get(signal.SIGTERM) in (signal.SIG_DFL, None):
        # Held until the bookkeeping was safe, a SIGTERM now does what it would have done
        # without perfport: end the process. A library caller's loop (or a scheduler's job)
        # must not outlive it because a campaign took it as a Ctrl-C.
        signal.raise_signal(signal.SIGTERM)
    if held is None:
        return
    before = previous.get(held)
    if before is signal.SIG_IGN:
        return
    signal.raise_signal(held)  # the earlier handler runs now (Python's raises KeyboardInterrupt)


@contextmanager
def interruptible() -> Iterator[None]:
    """Let a held or arriving signal raise KeyboardInterrupt inside (outside a guard, Python's
    own handling applies anyway)."""
    if not _active():
        yield
        return
    was_raising = _state.raising
    _state.raising = True
    try:
        if _state.held is not None:
            _state.held = None
            raise KeyboardInterrupt
        yield
    finally:
        _state.raising = was_raising


def checkpoint() -> None:
    """Raise KeyboardInterrupt if a signal is held."""
    if _active() and _state.held is not None:
        _state.held = None
        raise KeyboardInterrupt


def take_held() -> bool:
    """Whether a signal is held, forgetting it: for a caller that records the interrupt
    itself (a campaign's status) instead of raising."""
    held, _state.held = _state.held, None
    return held is not None
