"""What a compiler says during a build, kept for the result instead of the terminal.

Drivers write diagnostics straight to file descriptor 2 (PoCL's clang prints "1 warning
generated."), and pyopencl turns a non-empty build log into a ``CompilerWarning``; both would
land on the user's terminal, over the progress display. During a build both are captured.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator

MAX_CHARS = 2000  # of compiler output kept with a result


@contextlib.contextmanager
def captured_output() -> Iterator[list[str]]:
    """Within the block, fd 2 goes to a temporary file and Python warnings are recorded; on
    leaving, the list holds what came (the fd's text first, then each warning's)."""
    out: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        os.dup2(sink.fileno(), 2)
        try:
            yield out
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)  # the terminal back, whatever the build raised
            os.close(saved)
            sink.seek(0)
            text = sink.read(MAX_CHARS).decode(errors="replace").strip()
            out += [text] if text else []
            out += [f"{type(w.message).__name__}: {w.message}" for w in caught]


def build_messages(log: str, captured: list[str]) -> str:
    """One text of a build's diagnostics: the program's build log, else what was captured
    (pyopencl's warning only points at the log, so it is left out when the log is there)."""
    parts = [log.strip()] if log.strip() else []
    parts += [c for c in captured if not (parts and c.startswith("CompilerWarning"))]
    return "\n".join(parts)[:MAX_CHARS]
