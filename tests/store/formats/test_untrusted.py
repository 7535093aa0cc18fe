"""Files of other tools are read under a cap on the decompressed size, and a gzip bomb stops
at the cap instead of being inflated whole."""

from __future__ import annotations

import gzip
import json

import pytest

from perfport._core import StoreError
from perfport.store.formats import untrusted


def _bomb(path, megabytes: int) -> None:
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b'{"cache": "')
        for _ in range(megabytes):
            f.write(b" " * (1 << 20))
        f.write(b'"}')


def test_a_gzip_bomb_is_refused_after_decompressing_only_the_cap(tmp_path, monkeypatch):
    path = tmp_path / "bomb.json.gz"
    _bomb(path, 64)
    monkeypatch.setattr(untrusted, "MAX_JSON_BYTES", 2 << 20)
    inflated = []
    real_open = gzip.open

    class Counting:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def read(self, n=-1):
            chunk = self.f.read(n)
            inflated.append(len(chunk))
            return chunk

    monkeypatch.setattr(untrusted.gzip, "open", lambda *a, **k: Counting(real_open(*a, **k)))
    with pytest.raises(StoreError, match="more than 2 MiB of JSON"):
        untrusted.read_json(path, "a Kernel Tuner cache")
    assert sum(inflated) <= (2 << 20) + untrusted._CHUNK  # not the 64 MiB the file holds


def test_files_under_the_cap_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(untrusted, "MAX_JSON_BYTES", 2 << 20)
    path = tmp_path / "ok.json.gz"
    document = {"cache": {str(i): i for i in range(50_000)}}  # about 1 MB across many chunks
    with gzip.open(path, "wt") as f:
        json.dump(document, f)
    assert untrusted.read_json(path, "a cache") == document
    plain = tmp_path / "ok.json"
    plain.write_text(json.dumps(document))
    assert untrusted.read_json(plain, "a cache") == document


def test_the_cap_fits_real_caches_and_bounds_a_bomb():
    # The largest cache of the benchmark hub decompresses to 16.5 MB; a 1 MB bomb expands to
    # 1 GiB, which took 15.6 s and 1.1 GB to refuse under the old 1 GiB cap.
    assert 64 << 20 <= untrusted.MAX_JSON_BYTES <= 256 << 20


@pytest.mark.parametrize(
    ("text", "says", "not_says"),
    [
        (b'{"cache": {"1": ', "the file may be truncated", "at all"),
        (b"\xef\xbb\xbf [1, 2", "the file may be truncated", "at all"),
        (b"a,b\n1,2\n", "not JSON at all", "truncated"),
        (b" \n", "empty, not JSON", "truncated"),
    ],
)
def test_only_json_cut_short_may_be_truncated(tmp_path, text, says, not_says):
    path = tmp_path / "f.json"
    path.write_bytes(text)
    with pytest.raises(StoreError) as info:
        untrusted.read_json(path, "a cache")
    assert says in str(info.value) and not_says not in str(info.value)
    assert str(info.value).endswith("; give a cache")
