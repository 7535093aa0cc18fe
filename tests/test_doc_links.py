"""Every relative link in the repository's markdown points at a file or folder that exists.

Pages move between docs/results/ and experiments/; a link left behind would fail silently on
the rendered page, so it fails here instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).parents[1]
SKIPPED_DIRS = {".git", ".venv", "build", "dist", "node_modules", ".pytest_cache", ".ruff_cache"}
# [text](target) and ![alt](target "title"); the target is the first token in the parentheses.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, file: ...


def markdown_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.md")
        if not SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts)
    )


def relative_links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of each relative link outside fenced code and inline code."""
    links = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        prose = re.sub(r"`[^`]*`", "", line)
        for match in LINK.finditer(prose):
            target = match.group(1)
            if target.startswith("#") or EXTERNAL.match(target):
                continue
            links.append((number, target))
    return links


def broken_links() -> list[str]:
    broken = []
    for page in markdown_files():
        for number, target in relative_links(page.read_text(encoding="utf-8")):
            path = unquote(target.split("#", 1)[0].split("?", 1)[0])
            resolved = (ROOT / path.lstrip("/")) if path.startswith("/") else page.parent / path
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}:{number}: {target}")
    return broken


def test_the_checker_sees_links_and_skips_code():
    text = "see [a](x.md#y) and ![f](img/p.png)\n`[n](no.md)`\n```\n[c](code.md)\n```\n[w](https://e.org)"
    assert relative_links(text) == [(1, "x.md#y"), (1, "img/p.png")]


def test_every_relative_markdown_link_resolves():
    assert markdown_files(), "no markdown found"
    assert broken_links() == []
