"""Which file the daemon's database path names, and whether anyone wrote it: what tells the
daemon's connections to open the file again (a backup restored in its place, another writer)."""

from __future__ import annotations

from pathlib import Path


def file_identity(db: str | Path) -> tuple[int, int] | None:
    """Which file ``db`` names now (device, inode), or None where it names none."""
    try:
        st = Path(db).stat()
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def file_state(db: str | Path) -> tuple[int, ...]:
    """What changes when anyone writes the database: its file's and its WAL's identity, size
    and modification time (the WAL's alone, between checkpoints)."""
    state: list[int] = []
    for path in (Path(db), Path(f"{db}-wal")):
        try:
            st = path.stat()
        except FileNotFoundError:
            state += [-1, -1, -1]
        else:
            state += [st.st_ino, st.st_size, st.st_mtime_ns]
    return tuple(state)
