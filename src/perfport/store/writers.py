"""Who holds a claim on a configuration (store.claim): a writer id names the host and the
process, so a claim whose process has ended on this host need not wait for its expiry."""

from __future__ import annotations

import os
import secrets
import socket


def writer_id() -> str:
    """Who holds a claim: the host and process, and a nonce for two sessions of one process."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def gone(writer: str) -> bool:
    """Whether ``writer`` (from ``writer_id``) ran on this host in a process that has ended:
    its claims then need not wait for their expiry (after kill -9, say). A writer on another
    host, or one whose process cannot be asked, counts as alive."""
    host, _, rest = writer.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False
