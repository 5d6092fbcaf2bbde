"""The command line: `python -m tokenizer ...` or `bpe-playground ...`.

One module per command group; each has add_commands(subparsers), which registers its
subcommands with set_defaults(func=cmd_xxx), and cmd_xxx(args) -> exit code. Adding a group
is a new module and one entry in COMMAND_MODULES. Only this package parses arguments and
draws progress bars; the library below it takes plain keyword arguments.
"""

from __future__ import annotations

import argparse
import importlib
import sys

PROG = "python -m tokenizer"
DESCRIPTION = """Command line: `python -m tokenizer {list,encode,decode,split,train,count,export,classic} ...`.

Results go to stdout (ids and chunks as JSON arrays); errors go to stderr with exit code 2.
"""
# in the order --help lists them
COMMAND_MODULES = ("encode", "train", "extend", "count", "export", "classic", "analyze")
EXIT_USER_ERROR = 2  # as argparse's own usage errors
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f".{name}", __name__).add_commands(subparsers)
    return parser


def _message(error: Exception) -> str:
    """One line for the user: an OS error names its file and the reason, without errno noise."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror} (check the path and its permissions)"
    return str(error).rstrip()  # tiktoken's messages end in a newline


def main(argv: list[str] | None = None) -> int:
    """Run one command; ValueError and OSError become `error: ...` on stderr and exit code 2."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as e:
        print(f"error: {_message(e)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
