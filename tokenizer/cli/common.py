"""Argument helpers shared by the command groups: which tokenizer, which text."""

from __future__ import annotations

import argparse
import stat
import sys
from pathlib import Path

from ..core import Tokenizer
from ..encodings import get_encoding, list_encodings
from ..loading import load_file

DEFAULT_ENCODING = "cl100k_base"
DEFAULT_PATTERN = "gpt4"  # as train() and count_chunks()


def add_tokenizer_choice(parser: argparse.ArgumentParser) -> None:
    """--encoding NAME or --tokenizer PATH (one of them; default cl100k_base)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--encoding", "-e", choices=list_encodings(), help=f"reference encoding (default {DEFAULT_ENCODING})"
    )
    group.add_argument(
        "--tokenizer",
        "-t",
        metavar="PATH",
        help="a tokenizer file: STEM (.json + .tiktoken), STEM.json, STEM.tiktoken, a minbpe .model "
        "or a Hugging Face tokenizer.json",
    )


def load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    if args.tokenizer:
        return load_file(args.tokenizer)
    return get_encoding(args.encoding or DEFAULT_ENCODING)


def read_utf8(path: str | Path) -> str:
    """A file's text ('-' for stdin), or ValueError naming the first byte that is not UTF-8."""
    if str(path) != "-" and Path(path).is_dir():
        raise ValueError(f"{path}: is a directory, not a text file")
    if str(path) != "-" and _is_device(Path(path)):
        # /dev/zero or /dev/urandom never end: reading one filled the memory. A pipe (a FIFO,
        # bash's <(...)) is read: it ends when its writer does.
        raise ValueError(f"{path}: is a device, not a text file; give a file, or '-' for stdin")
    data = sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        where = "stdin" if str(path) == "-" else path
        raise ValueError(f"{where}: not valid UTF-8 at byte offset {e.start}") from None


def _is_device(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # read_bytes says what is wrong (missing, unreadable)
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def read_text(args: argparse.Namespace) -> str:
    """The text of a command: the TEXT argument, --file (a path or '-'), or stdin."""
    if args.file is not None and args.text is not None:
        raise ValueError("give TEXT or --file, not both")
    if args.file is not None:
        return read_utf8(args.file)
    if args.text is not None:
        return args.text
    return read_utf8("-")
