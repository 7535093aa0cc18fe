"""The user's cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``), where perfport's kernel
statistics and loopy's (pytools') caches live, and the one-line error for a folder there that
cannot be made or written: read-only homes are common on HPC nodes. pytools meets such a
folder half-way through making a cache, and that cache's destructor then prints a traceback of
its own when it is collected: ``dropped`` collects it quietly (as after a Ctrl-C that stopped
pyopencl's cache half-way)."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").absolute()


def cache_error(exc: BaseException) -> str | None:
    """The one-line error for ``exc`` if it is an OSError on the cache folder (the folder, a
    folder in it, or one above it that could not be made); None otherwise."""
    if not isinstance(exc, OSError) or isinstance(exc, IsADirectoryError) or not exc.filename:
        return None  # "Is a directory" is a path the user gave (--out ~), not a cache's
    home = cache_home()
    path = Path(os.fsdecode(exc.filename)).absolute()
    if path != home and home not in path.parents and path not in home.parents:
        return None
    if path in home.parents and path.exists():  # a folder above that exists: the user's path
        return None
    return (
        f"the cache folder {home} cannot be written ({exc.strerror or exc}: {path}); perfport and "
        "loopy keep their caches there: set XDG_CACHE_HOME to a writable folder, e.g. "
        "XDG_CACHE_HOME=/tmp/$USER-cache"
    )


def dropped(exc: BaseException) -> None:
    """Let go of the frames of ``exc`` and of the exceptions it arose from (and what they
    made half-way) with the destructors' errors unprinted."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _: None
    try:
        seen: set[int] = set()
        link: BaseException | None = exc
        while link is not None and id(link) not in seen:
            seen.add(id(link))
            link.__traceback__ = None
            link = link.__cause__ or link.__context__
        gc.collect()
    finally:
        sys.unraisablehook = hook
