"""Layer 7: the ``perfport`` command line, a thin layer over the Python API.

Each command group is one module with ``add_parser(subcommands)``, which registers its
parsers with ``set_defaults(run=handler)``; ``main`` parses and calls that handler.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from perfport._core import PerfportError
from perfport._core.cache_home import cache_error, dropped
from perfport._core.version import __version__
from perfport.cli import (
    devices,
    model,
    replay,
    report,
    results,
    roofline,
    select,
    serve,
    space,
    split,
    tune,
    wg,
    worker,
)


class _Parser(argparse.ArgumentParser):
    """Errors on one line, as every other perfport error, with where to look (argparse would
    print the whole usage first). Subcommands' parsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)}; see '{self.prog} --help'\n")


def one_line(text: str) -> str:
    """``text`` with what would break the one-line error escaped: newlines and other control
    characters a hostile input carried into a message, and lone surrogates (from undecodable
    arguments) that stderr could not even encode."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


# In the order `perfport --help` lists them.
_GROUPS = (
    devices,
    tune,
    space,
    replay,
    wg,
    select,
    model,
    split,
    serve,
    results,
    report,
    roofline,
    worker,
)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="perfport",
        description="Find the fastest launch configuration of OpenCL and CUDA kernels.",
    )
    parser.add_argument("--version", action="version", version=f"perfport {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in _GROUPS:
        group.add_parser(sub)
    return parser


def _terminate(signum: int, frame: object) -> NoReturn:
    """SIGTERM stops a command as Ctrl-C does: campaigns end ``interrupted``, exit 130."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminate)  # first: SIGTERM then ends as Ctrl-C does
    try:
        args = _parser().parse_args(argv)
        from rich.console import Console  # after parsing: --help and bad flags need no rich

        console = Console(markup=False)  # names a user gave ([red], [/]) print as written
        _allow_reference_modules(os.environ.get("PERFPORT_REFERENCE_MODULES", ""))
        _check_cache_home(os.environ.get("XDG_CACHE_HOME", ""))
        return int(args.run(args, console))
    except PerfportError as exc:
        print(f"perfport: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        dropped(exc)  # a cache it stopped half-way would print a traceback when collected
        print("perfport: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `perfport export | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a path the user gave cannot be read or written
        cache = cache_error(exc)  # or the cache folder (loopy's, when a command imports it)
        if cache is not None:
            dropped(exc)
            print(f"perfport: error: {one_line(cache)}", file=sys.stderr)
            return 2
        where = f"{exc.filename}: " if exc.filename else ""
        print(
            f"perfport: error: {one_line(f'{where}{exc.strerror or exc}')}; check the path and "
            "its permissions",
            file=sys.stderr,
        )
        return 2
    except sqlite3.Error as exc:  # the database failed under us: damaged, full, locked
        message = database_error(exc, getattr(args, "db", None))
        print(f"perfport: error: {one_line(message)}", file=sys.stderr)
        return 2
    except (MemoryError, RecursionError) as exc:
        # Input whose size or nesting no check caught: say so in one line, not a traceback.
        print(
            f"perfport: error: the input is too large or too deeply nested to handle "
            f"({type(exc).__name__}); give a smaller one",
            file=sys.stderr,
        )
        return 2


def _allow_reference_modules(setting: str) -> None:
    """``PERFPORT_REFERENCE_MODULES=pkg.refs,other``: modules whose functions TOML/YAML specs
    may name as their numpy reference (else only a .py file beside the spec)."""
    modules = [m.strip() for m in setting.split(",") if m.strip()]
    if modules:
        from perfport.kernels.loader import allow_reference_modules

        allow_reference_modules(*modules)


def _check_cache_home(home: str) -> None:
    """perfport and loopy's pytools keep caches under ``$XDG_CACHE_HOME``; pytools meets a
    path under a file with a traceback of its own, so a path that cannot be a folder is
    refused first."""
    if not home:
        return
    path = Path(home).absolute()
    while not path.exists():
        path = path.parent
    if not path.is_dir():
        raise PerfportError(
            f"XDG_CACHE_HOME={home}: {path} is not a folder, so no cache can be kept under it; "
            "point XDG_CACHE_HOME at a folder or unset it"
        )


def database_error(exc: sqlite3.Error, db: str | None) -> str:
    """One line for an SQLite failure: what happened to which database, and what to do. A
    failed write was rolled back by SQLite, so every result committed before it is kept."""
    where = db or "the results database"
    reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    lowered = reason.lower()
    if "full" in lowered:
        return (
            f"{where}: the disk is full ({reason}); every result committed before this one is "
            "kept; free some space and run the same command again to resume"
        )
    if "malformed" in lowered or "not a database" in lowered or "corrupt" in lowered:
        return (
            f"{where} is damaged ({reason}); recover what it holds with 'sqlite3 {where} "
            ".recover | sqlite3 recovered.db' and give --db recovered.db, or restore a backup"
        )
    if "locked" in lowered or "busy" in lowered:
        return f"{where} is locked by another process ({reason}); wait for it and try again"
    return f"{where}: {reason}; check the file, its disk and its permissions"
