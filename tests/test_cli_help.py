"""The command line's --help: every argument of every command says what it takes."""

from __future__ import annotations

import argparse

from tokenizer.cli import build_parser


def arguments(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, action) for every argument of every (sub)command, --help left out."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from arguments(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_argument_has_a_help_text():
    """`split --help` listed `text` and `--file FILE` with no word about them (encode's same two
    arguments say "default: stdin" and "'-' for stdin")."""
    bare = [
        (" ".join(path), action.option_strings or action.dest)
        for path, action in arguments(build_parser())
        if not action.help
    ]
    assert bare == []


def test_the_analysis_commands_name_every_tokenizer_file_they_read():
    """audit, stats and diff read a minbpe .model (the README's `export --format minbpe` writes
    one), but their TOKENIZER help listed only STEM, .tiktoken, .json and tokenizer.json."""
    helps = {
        " ".join(path): action.help
        for path, action in arguments(build_parser())
        if path and path[0] in ("audit", "stats") and action.dest == "tokenizer"
    }
    assert set(helps) == {"audit", "stats"}
    for command, text in helps.items():
        assert ".model" in text, command
