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
