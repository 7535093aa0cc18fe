"""The argparse types and arguments that several command groups share."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from perfport._core import PerfportError

if TYPE_CHECKING:
    from perfport._core import Value

# What each command group's add_parser receives: the sub-commands of `perfport` (or of a group).
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def parse_assignment(text: str) -> tuple[str, Value]:
    """``name=value`` with value read as bool (true/false), int, float or else string."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise PerfportError(f"--problem expects name=value, got {text!r}")
    raw = raw.strip()
    value: Value
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                value = raw
    return name.strip(), value


def problem_values(assignments: Sequence[str]) -> dict[str, Value]:
    """``--problem``'s ``name=value`` items as a dict; a name given twice is refused (the last
    one silently won, so ``n=1024 ... n=2048`` measured a problem the user may not have meant)."""
    values: dict[str, Value] = {}
    for text in assignments:
        name, value = parse_assignment(text)
        if name in values:
            raise PerfportError(
                f"--problem {name} is given twice ({name}={values[name]}, {name}={value}); "
                "give each name once"
            )
        values[name] = value
    return values


# Counts, seeds and sizes are stored as SQLite integers (and handed to numpy as int64).
MAX_INTEGER = (1 << 63) - 1


def integer_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low`` that fits 64 bits."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: must be at least {low}")
        if value > MAX_INTEGER:
            raise argparse.ArgumentTypeError(
                f"{text[:40]}: must be at most {MAX_INTEGER} (it is stored as a 64-bit integer)"
            )
        return value

    return parse


count, natural = integer_at_least(1), integer_at_least(0)


def confirm_count(text: str) -> int:
    """An argparse type: how many to re-time side by side, 0 (off) or at least 2 (one alone
    has nothing to be compared with)."""
    value = natural(text)
    if value == 1:
        raise argparse.ArgumentTypeError(
            "1: --confirm N re-times the N best side by side: give 0 (off) or at least 2"
        )
    return value


def integer_up_to(high: int, what: str, low: int = 0, fewer: str = "") -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high`` (``what``: why no more is
    useful; ``fewer``: what the count counts and why no fewer, for a value below ``low``)."""

    def parse(text: str) -> int:
        value = natural(text) if low <= 0 else integer_at_least(-MAX_INTEGER)(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: give at least {low} {fewer}".rstrip())
        if value > high:
            raise argparse.ArgumentTypeError(f"{value}: at most {high} ({what})")
        return value

    return parse


# Every timed launch's time is kept in memory and stored with its result: a fixed count past
# this ran for days and filled memory (the adaptive default stops at 200).
MAX_REPEATS = 10_000


def repeats(text: str) -> int:
    """An argparse type: a fixed number of timed launches, 1 to MAX_REPEATS."""
    value = count(text)
    if value > MAX_REPEATS:
        raise argparse.ArgumentTypeError(
            f"{value}: at most {MAX_REPEATS} (each launch's time is kept and stored)"
        )
    return value


def budget(text: str) -> int | float:
    """An argparse type: a count of configurations (>= 1), or a share of the legal space as
    a percentage, ``25%`` (returned as the fraction 0.25)."""
    if not text.strip().endswith("%"):
        return count(text)
    try:
        percent = float(text.strip()[:-1])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r}: give a count of configurations or a percentage such as 25%"
        ) from None
    if not 0 < percent <= 100:
        raise argparse.ArgumentTypeError(
            f"{text[:40]}: a share of the legal space must be above 0% and at most 100%"
        )
    return percent / 100


def seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def sizes(text: str) -> tuple[int, ...]:
    """An argparse type: comma-separated positive integers, e.g. 512,1024."""
    try:
        values = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: give sizes like 512,1024") from None
    if any(not 1 <= n <= MAX_INTEGER for n in values):
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: sizes must be positive 64-bit integers")
    return values


def database(text: str) -> str:
    """An argparse type: a results database's file path. SQLite reads '' and ':memory:' as a
    database that vanishes when the command ends, so every result stored there would be lost."""
    if not text.strip() or text == ":memory:":
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a file path; give the results database's file, e.g. perfport.db"
        )
    return text


def port(text: str) -> int:
    """An argparse type: a TCP port, 0-65535."""
    number = natural(text)
    if number > 65535:
        raise argparse.ArgumentTypeError(f"{number} is not a port (0-65535)")
    return number


def add_problem(p: argparse.ArgumentParser) -> None:
    """``--problem NAME=VALUE ...``, as tune, space and wg predict take it."""
    p.add_argument(
        "--problem", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
        help="problem values, e.g. --problem width=1024 height=1024 dtype=double",
    )  # fmt: skip


SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")  # Dask's network schemes (inproc: one process)


def scheduler_address(text: str, local: bool = False) -> str:
    """An argparse type: a Dask scheduler's address, SCHEME://HOST:PORT (or ``local`` where
    allowed). Checked here, so a malformed one is one line at once, not a wait for a
    connection that cannot be made or a traceback from Dask's parser."""
    if local and text == "local":
        return text
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text  # Dask's default scheme
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")  # an IPv6 host is written [::1]
    usable = (
        scheme in SCHEMES
        and bool(colon)
        and bool(host)
        and host.isprintable()
        and not any(c.isspace() or c in "/?#@" for c in host)
        and port.isdigit()
        and 0 < int(port[:6]) < 65536
    )
    if not usable or len(text) > 300:
        where = " or 'local'" if local else ""
        raise argparse.ArgumentTypeError(
            f"{text[:60]!r}: give the scheduler's address as SCHEME://HOST:PORT with SCHEME one "
            f"of {', '.join(SCHEMES)}, e.g. tcp://10.0.0.1:8786{where}"
        )
    return text


def cluster_address(text: str) -> str:
    """An argparse type: ``perfport tune --cluster``'s address, or ``local``."""
    return scheduler_address(text, local=True)


_SQLITE_HEADER = b"SQLite format 3\x00"


def check_output(path: str | None, option: str) -> None:
    """Refuse to write ``path`` where a results database is (``--db`` itself or another
    store): opening it for writing would truncate every stored result, so this runs before
    anything is written or measured."""
    if not path:
        return
    try:
        with open(path, "rb") as existing:
            head = existing.read(len(_SQLITE_HEADER))
    except OSError:  # missing, a directory, unreadable: the write itself says what is wrong
        return
    if head == _SQLITE_HEADER:
        raise PerfportError(
            f"{option} {path} is a results database (SQLite); writing there would destroy its "
            "results; give another path"
        )


def check_folder(path: str | None, option: str) -> None:
    """Refuse a folder option (--plots, --figures) where a file is: checked before the work
    whose figures it would hold, not after it."""
    if path and os.path.exists(path) and not os.path.isdir(path):
        raise PerfportError(f"{option} {path}: a file is in the way; give a folder")
