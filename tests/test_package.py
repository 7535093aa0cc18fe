"""What the package carries on its own: the license, and a provenance file that describes the
files the wheel ships and says where every other file it names lives."""

import fnmatch
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "src" / "perfport"
PROVENANCE = PACKAGE / "datasets" / "PROVENANCE.md"
# Inline `code` that names a file (commands in fenced blocks name their own outputs).
FILE_NAME = re.compile(r"`([^`\s]+\.(?:npz|csv|csv\.gz|json\.gz|db|sh|py|md))`")


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _shipped() -> set[str]:
    """Package data, as paths relative to src/perfport/datasets/."""
    globs = _project()["tool"]["setuptools"]["package-data"]["perfport"]
    files = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*") if p.is_file()]
    data = {f for f in files if any(fnmatch.fnmatch(f, g) for g in globs)}
    return {f.removeprefix("datasets/") for f in data if f.startswith("datasets/")}


def _named_files(text: str) -> list[str]:
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return [name for name in FILE_NAME.findall(prose) if not name.startswith("-")]


def test_license_is_an_spdx_string_with_its_file():
    project = _project()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the perfport authors\n")
    assert "urls" not in project  # none exist yet; an empty table is worse than none


def test_shipped_provenance_names_shipped_files_or_repository_paths():
    shipped = _shipped()
    assert {"wg/stencils.npz", "lawson-gemm/h100-nvidia-opencl.csv.gz"} <= shipped
    names = _named_files(PROVENANCE.read_text())
    assert len(names) > 10  # the pattern still finds what the file names
    stray = []
    for name in names:
        if name.startswith(("data/", "experiments/")):
            if not list(ROOT.glob(name)):
                stray.append(f"{name} (not in the repository)")
        elif name not in shipped and not any(s.endswith(f"/{name}") for s in shipped):
            stray.append(f"{name} (not shipped: name it data/... or experiments/...)")
    assert not stray, stray


def test_the_serve_extra_installs_what_the_default_daemon_needs():
    # With the web stack and scikit-learn alone the daemon started and answered every question
    # with an error: its default model's features need llvmlite and PoCL's CPU device.
    serve = " ".join(_project()["project"]["optional-dependencies"]["serve"])
    for needed in ("fastapi", "uvicorn", "scikit-learn", "llvmlite", "pyopencl[pocl]"):
        assert needed in serve, needed


def _installing_paragraph() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("**Installing the package alone**")
    return text[start : text.index("\n\n", start)]


def test_readme_names_every_extra_and_every_kind_of_shipped_data():
    # It left out model, cluster, optuna and optuna-gp, and said "the two datasets" of three.
    paragraph = _installing_paragraph()
    extras = _project()["project"]["optional-dependencies"]
    assert not [e for e in extras if f"`{e}`" not in paragraph and f"[{e}]" not in paragraph]
    globs = _project()["tool"]["setuptools"]["package-data"]["perfport"]
    folders = {g.rsplit("/", 1)[0] + "/" for g in globs if "/" in g and not g.endswith(".md")}
    assert not [f for f in sorted(folders) if f not in paragraph]


def test_wg_docs_give_commands_the_installed_dataset_not_a_repository_path():
    # An installed user has no src/perfport/...: `wg train --data` needs the shipped file's path.
    text = (ROOT / "docs" / "wg.md").read_text()
    assert "--data src/perfport" not in text and 'load_dataset("src/' not in text
    assert "dataset_path(None)" in text
