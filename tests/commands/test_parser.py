"""The command line's grammar (dialogbench/commands/parser.py): ``--version`` prints the installed version, and
every positional argument of every command has help."""

from __future__ import annotations

import argparse
from importlib.metadata import version

import pytest

from dialogbench.cli import main
from dialogbench.commands.parser import build_parser


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"dialogbench {version('dialogbench')}\n"


def _parsers(parser: argparse.ArgumentParser, name: str = "dialogbench"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_positional_argument_has_help():
    parsers = dict(_parsers(build_parser()))
    assert {"dialogbench query", "dialogbench export", "dialogbench labels import"} <= set(parsers)
    positionals = 0
    for name, parser in parsers.items():
        for action in parser._actions:
            if action.option_strings or isinstance(action, argparse._SubParsersAction):
                continue
            positionals += 1
            assert action.help and action.help.strip() and action.help != argparse.SUPPRESS, \
                f"{name}: {action.dest} has no help"
    assert positionals >= 3
    [sql] = [a for a in parsers["dialogbench query"]._actions if a.dest == "sql"]
    assert "select * from botchat_unieval" in sql.help
