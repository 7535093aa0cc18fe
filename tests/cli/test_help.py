"""Every option and argument of every command says what it does in --help."""

import argparse

from perfport.cli import _parser as build_parser


def _parsers(parser, path=("perfport",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_option_has_help():
    missing = []
    commands = 0
    for path, parser in _parsers(build_parser()):
        commands += 1
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                name = "/".join(action.option_strings) or action.metavar or action.dest
                missing.append(f"{' '.join(path)} {name}")
    assert commands > 20  # the walk reached the nested command groups
    assert not missing, "options without help: " + ", ".join(missing)


def _synopsis() -> list[str]:
    """README's command-line block, one line per command (continuation lines joined)."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "README.md").read_text()
    block = text.split("## Command line\n\n```sh\n", 1)[1].split("```", 1)[0]
    lines: list[str] = []
    for line in block.splitlines():
        if line.startswith("perfport "):
            lines.append(line.split("  # ")[0])
        elif lines:
            lines[-1] += " " + line.strip().split("  # ")[0]
    return lines


def test_the_readme_synopsis_names_only_options_each_command_takes():
    # export listed --problem for every format, where csv and json refuse it, and left out
    # --json.
    import re

    parsers = {path[1:]: p for path, p in _parsers(build_parser())}
    wrong = []
    for line in _synopsis():
        words = line.split()
        path = next(tuple(words[1:n]) for n in range(len(words), 1, -1)
                    if tuple(words[1:n]) in parsers)  # fmt: skip
        known = {o for a in parsers[path]._actions for o in a.option_strings}
        wrong += [f"{line[:40]}: {o}" for o in re.findall(r"--[a-z][a-z0-9-]*", line)
                  if o not in known]  # fmt: skip
    assert not wrong, wrong
    export = [line for line in _synopsis() if line.startswith("perfport export")]
    assert any("--json" in line for line in export)
    assert all(
        "kt-cache|t4" in line and "csv" not in line for line in export if "--problem" in line
    )
