"""The command line: `python -m tokenizer ...` or `bpe-playground ...`.

One module per command group; each has add_commands(subparsers), which registers its
subcommands with set_defaults(func=cmd_xxx), and cmd_xxx(args) -> exit code. Adding a group
is a new module and one entry in COMMAND_MODULES. Only this package parses arguments and
draws progress bars; the library below it takes plain keyword arguments.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

PROG = "python -m tokenizer"
DESCRIPTION = """Command line: `python -m tokenizer COMMAND ...`, one of the commands below.

Results go to stdout (ids and chunks as JSON arrays); errors go to stderr with exit code 2.
"""
# in the order --help lists them
COMMAND_MODULES = ("encode", "train", "extend", "count", "export", "classic", "analyze")
EXIT_USER_ERROR = 2  # as argparse's own usage errors
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what `yes | head` reports for yes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f".{name}", __name__).add_commands(subparsers)
    return parser


def _message(error: Exception) -> str:
    """One line for the user: an OS error names its file and the reason, without errno noise."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        full = error.errno in (errno.ENOSPC, errno.EDQUOT)  # a write: the path itself is fine
        fix = "free some space, or write elsewhere" if full else "check the path and its permissions"
        return f"{error.filename}: {error.strerror} ({fix})"
    return str(error).rstrip()  # tiktoken's messages end in a newline


def _as_flag(message: str, args: argparse.Namespace) -> str:
    """The library names its keyword ("max_chunks must be an integer >= 2"); on the command line
    the user typed the flag, so "KEYWORD must ..." of an option's keyword names the flag."""
    name, _, rest = message.partition(" must ")
    if rest and name in vars(args) and name not in POSITIONAL:
        return f"--{name.replace('_', '-')} must {rest}"
    return message


# arguments that only name files to read: any name the file system allows works there. Every
# other string (text, special tokens, regexes, output names, which end up in a .json) must be
# UTF-8: Python hands undecodable argv bytes over as lone surrogates, which encode() turned
# into U+FFFD without a word and a .json write refused with a codec error.
INPUT_PATHS = {"file", "files", "inputs", "input", "codes", "counts", "held_out", "corpus", "tokenizer"}
INPUT_PATHS |= {"a", "b", "base", "source", "vocabulary"}
POSITIONAL = {"text", "ids", "files", "inputs", "input", "a", "b", "base", "source"}
# never empty: '' as a file was "'' is a directory" (the current folder), and an empty
# --counts, --held-out or --scheduler was taken as not given
NOT_EMPTY = INPUT_PATHS | {"scheduler"}


def check_arguments(args: argparse.Namespace) -> None:
    """Strings must be UTF-8 (but input paths) and names of files or addresses not empty."""
    for dest, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str):
                continue
            name = dest.upper() if dest in POSITIONAL else "--" + dest.replace("_", "-")
            if dest in NOT_EMPTY and not item.strip():
                what = "an address such as tcp://HOST:8786" if dest == "scheduler" else "a file name"
                raise ValueError(f"{name}: {item!r} is empty; give {what}")
            if dest in INPUT_PATHS:
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as e:
                fix = (
                    "choose a UTF-8 file name"
                    if dest == "output"
                    else "give UTF-8 text, or put it in a UTF-8 file"
                )
                raise ValueError(
                    f"{name}: not valid UTF-8 (character {e.start + 1} is an undecodable byte); {fix}"
                ) from None


# options (arguments starting with '-') in one command line: argparse finds each next option by
# scanning all of them, so its time grows with their square: 8,000 `--special` took 2 s, the
# 65,536 train allows about two minutes, before any check ran. File lists are not options.
MAX_OPTIONS = 5_000


def check_option_count(argv: list[str]) -> None:
    """Refuse more options than argparse reads in about a second."""
    options = sum(1 for arg in argv if arg.startswith("-") and arg != "-")
    if options > MAX_OPTIONS:
        raise ValueError(
            f"{options:,} options on one command line; at most {MAX_OPTIONS:,} are read (a --special "
            "for each of thousands of tokens?): give fewer"
        )


def check_no_disguised_help(argv: list[str]) -> None:
    """`encode -e cl100k_base "-hello"` printed the help and exited 0, without a word about the
    text: argparse reads "-hello" as -h followed by more short options. A word after -h is never
    an option here (-h takes no value), so it is text, and `--` is the way to pass it."""
    for arg in argv:
        if arg == "--":
            return
        if arg.startswith("-h") and len(arg) > 2:
            raise ValueError(
                f"{arg[:40]!r} reads as -h (help) followed by other options; to give text that "
                f"starts with '-', put -- before it: ... -- {arg[:40]}"
            )


def main(argv: list[str] | None = None) -> int:
    """Run one command; ValueError and OSError become `error: ...` on stderr and exit code 2."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        check_option_count(argv)
        check_no_disguised_help(argv)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    args = build_parser().parse_args(argv)
    try:
        check_arguments(args)
        return args.func(args)
    except BrokenPipeError:  # `... | head`: the reader has all it wants; that is no error
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except (ValueError, OSError) as e:
        print(f"error: {_as_flag(_message(e), args)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what is still buffered
    does not fail again ("Exception ignored ... BrokenPipeError")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
