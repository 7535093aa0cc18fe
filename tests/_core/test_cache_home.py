"""Only an error on the cache folder is blamed on it: a path the user gave that happens to lie
above it (--out ~, --out .) keeps its own error."""

from __future__ import annotations

import errno
import os

from perfport._core.cache_home import cache_error


def test_an_existing_folder_above_the_cache_is_the_users_path(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    given = IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(tmp_path))
    assert cache_error(given) is None  # 'select export --out ~' was "the cache folder ..."
    denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path))
    assert cache_error(denied) is None


def test_the_cache_folder_or_a_missing_one_above_it_is_named(tmp_path, monkeypatch):
    home = tmp_path / "no" / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    for path in (home, home / "pytools", tmp_path / "no"):
        exc = PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        assert f"the cache folder {home} cannot be written" in (cache_error(exc) or "")


def test_dropped_lets_go_of_what_the_exceptions_it_arose_from_hold():
    """A Ctrl-C that stopped a cache half-way: the interrupt raised on (SweepInterrupted)
    kept the first one's frames, whose half-made cache printed a traceback when collected."""
    import weakref

    from perfport._core.cache_home import dropped

    class HalfMade:
        def __del__(self):
            raise AttributeError("half-made")

    refs = []

    def stopped():
        half = HalfMade()
        refs.append(weakref.ref(half))
        raise KeyboardInterrupt

    try:
        try:
            stopped()
        except KeyboardInterrupt as first:
            raise RuntimeError("raised on") from first
    except RuntimeError as exc:
        caught = exc
    assert refs[0]() is not None  # held by the first exception's frames
    dropped(caught)
    assert refs[0]() is None
