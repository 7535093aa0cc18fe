"""Reading files written by other tools: JSON (plain or gzipped) under a size cap, and values
quoted back in one-line error messages without letting a crafted file make them long."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from perfport._core import StoreError

# Decompressed bytes: 8x the largest real cache (gemm on an RTX 3090, 16.5 MB of JSON), and
# parsed JSON costs several times its text in memory. Read in chunks, so a gzip bomb stops here.
MAX_JSON_BYTES = 128 << 20
_CHUNK = 1 << 20


def read_json(
    path: str | Path, expected: str, repair: Callable[[bytes], bytes | None] | None = None
) -> Any:
    """JSON from a plain or gzipped file. ``expected`` names what the file should be (e.g. "a
    Kernel Tuner cache"), for the error message of a file that is not JSON at all. ``repair``
    gets the text when it does not parse and may return a completed one (a format whose writer
    leaves files open-ended); the error is then the original one if that fails too."""
    p = Path(path)
    try:
        with p.open("rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
    except OSError as exc:
        raise StoreError(f"{p}: cannot be read ({exc.strerror or exc}); check the path") from None
    try:
        with gzip.open(p, "rb") if gzipped else p.open("rb") as f:
            data = _read_capped(f)
    except (OSError, EOFError, zlib.error) as exc:
        # A gzip stream cut short or corrupt; a plain file that vanished since it was opened.
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise StoreError(
            f"{p}: not JSON or gzipped JSON ({reason}); the file may be truncated, "
            f"give {expected} (.json or .json.gz)"
        ) from None
    if len(data) > MAX_JSON_BYTES:
        raise StoreError(
            f"{p}: more than {MAX_JSON_BYTES >> 20} MiB of JSON; refusing to read it, "
            f"give {expected} of a sane size"
        )
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        completed = repair(bytes(data)) if repair is not None else None
        if completed is not None:
            try:
                return json.loads(completed)
            except (ValueError, UnicodeDecodeError, RecursionError):
                pass
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise StoreError(f"{p}: {_not_json(data, reason)}; give {expected}") from None


def _not_json(data: bytearray, reason: str) -> str:
    """What text that does not parse is: empty, JSON cut short, or something else (a CSV)."""
    start = bytes(data[:64]).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if not start:
        return "empty, not JSON"
    if start in (b"{", b"["):
        return f"not JSON ({reason}): the file may be truncated"
    return f"not JSON at all ({reason})"


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def _read_capped(f: _Readable) -> bytearray:
    """At most MAX_JSON_BYTES + chunk bytes, decompressed a chunk at a time: the cap is
    reached after decompressing only that much, whatever the file would expand to."""
    data = bytearray()
    while len(data) <= MAX_JSON_BYTES:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        data += chunk
    return data


def clip(value: Any) -> str:
    """``repr(value)``, cut short: keys, names and values come from the file, and a crafted
    megabyte would make the one-line error a megabyte long."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def kind_of(value: Any) -> str:
    # The value may be a crafted megabyte of nesting: name its kind, keep the message short.
    return json.dumps(value) if isinstance(value, float) else f"a {type(value).__name__}"
