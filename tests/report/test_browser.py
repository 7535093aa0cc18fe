"""The report in a real browser: headless Chromium (Debian's ``chromium``) renders it, takes
a screenshot, runs its script; every figure must render and the page must log nothing.

CI sets PERFPORT_REQUIRE_BROWSER=1 and installs chromium when missing (.ci/run), so there this
test fails, never skips, without a browser."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_store import FILES, KINDS, add_capabilities, small_store_at

from perfport.report import write_report


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    return small_store_at(tmp_path)


# Clicks the "median ms" header of the first table twice (descending) and writes what the
# rows then say into the page, so --dump-dom shows whether the sort script works.
CLICK = """<script>
var t = document.querySelector('table.sortable'), th = t.querySelectorAll('th')[2];
th.click(); th.click();
document.body.setAttribute('data-first-median', t.tBodies[0].rows[0].cells[2].textContent);
</script></body>"""


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("PERFPORT_REQUIRE_BROWSER") == "1":
        pytest.fail(
            "PERFPORT_REQUIRE_BROWSER=1 but no chromium on PATH: apt-get install -y chromium"
        )
    pytest.skip("no chromium (apt-get install -y chromium); CI requires it")


def _open(page: Path, shot: Path, tmp: Path) -> tuple[str, list[str]]:
    """The DOM after the page's scripts ran, and the console lines it logged."""
    done = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp}",
         "--enable-logging=stderr", "--v=0", "--window-size=1280,1600", "--hide-scrollbars",
         f"--screenshot={shot}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, cwd=tmp,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def _check(dom: str, console: list[str], shot: Path) -> None:
    assert not console, f"the page logged: {console}"
    svgs = re.findall(r"<svg\b.*?</svg>", dom, flags=re.S)
    assert svgs and all(re.search(r"<(path|rect)\b", s) for s in svgs)  # each drew something
    assert int(re.search(r'data-sorted="(\d+)"', dom).group(1)) > 0  # the sort script ran
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:4] == b"\x89PNG"


def test_report_renders_in_chromium(small_store: Path, tmp_path: Path):
    page = Path(write_report(small_store, tmp_path / "out").files[0])
    page.write_text(page.read_text().replace("</body>", CLICK))
    dom, console = _open(page, tmp_path / "report.png", tmp_path)
    _check(dom, console, tmp_path / "report.png")
    assert page.read_text().count("<svg") == dom.count("<svg")
    # Descending by median: the slowest of the top configurations comes first.
    assert re.search(r'data-first-median="2\.52"', dom), re.findall(r"data-first-[^ ]*", dom)


def test_a_console_error_is_caught(small_store: Path, tmp_path: Path):
    page = Path(write_report(small_store, tmp_path / "out").files[0])
    page.write_text(page.read_text().replace("</body>", "<script>notDefined()</script></body>"))
    _, console = _open(page, tmp_path / "bad.png", tmp_path)
    assert any("notDefined" in line for line in console)


def test_every_capability_section_renders_in_chromium(small_store: Path, tmp_path: Path):
    """The store's calibrations and sweep, and one file of each kind given with --with: every
    figure of every section draws, with no console error."""
    add_capabilities(small_store)
    attach = [FILES / f"{k}.json" for k in KINDS]
    written = write_report(small_store, tmp_path / "out", attach=attach)
    assert len(written.sections) == 6  # plans, calibrations and the four files
    page = Path(written.files[0])
    dom, console = _open(page, tmp_path / "all.png", tmp_path)
    _check(dom, console, tmp_path / "all.png")
    assert page.read_text().count("<svg") == dom.count("<svg") > 20
    for heading in ("Stored model calibrations", "Work-group-size prediction",
                    "Kernel subset selection", "Calibrated model", "Split: convolution"):  # fmt: skip
        assert f"<h2>{heading}" in dom, heading
