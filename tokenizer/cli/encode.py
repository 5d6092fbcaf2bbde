"""`list`, `encode`, `decode`, `split`: use a reference encoding or a saved tokenizer."""

from __future__ import annotations

import argparse
import json
import sys

from ..core import Tokenizer
from ..encodings import list_encodings
from .common import DECIMAL, add_tokenizer_choice, load_tokenizer, read_text, read_utf8

# What encode does with text that spells a special token, as tiktoken's arguments say it.
SPECIAL_HANDLING = {
    "text": {"disallowed_special": ()},  # ordinary text, split and merged as any other
    "allow": {"allowed_special": "all"},  # the special token's id
    "raise": {"allowed_special": frozenset()},  # an error: tiktoken's default
}


def cmd_list(args: argparse.Namespace) -> int:
    for name in list_encodings():
        print(name)
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args)
    text = read_text(args)
    special = args.special or "raise"  # None: neither flag given (so argparse sees any given one)
    if special == "raise":
        check_no_special(tok, text)
    print(json.dumps(tok.encode(text, **SPECIAL_HANDLING[special])))
    return 0


def check_no_special(tok: Tokenizer, text: str) -> None:
    """One line naming the token and the flags that encode it (the library's message is
    tiktoken's four lines about Python arguments: `allowed_special=...`)."""
    control = tok.control_tokens
    match = tok.special_regex(control).search(text) if control else None
    if match:
        raise ValueError(
            f"the text holds the disallowed special token {match.group()!r} at character "
            f"{match.start() + 1}: --special allow encodes it as its id, --special text as ordinary text"
        )


def parse_ids(raw: str) -> list[int]:
    """Ids as a JSON array of integers or separated by spaces/commas; bools and floats refused,
    and so are digits other than 0-9: int() reads '١٢' (Arabic-Indic), '１２' (fullwidth) and
    '1_2' as 12, and `decode 1_0` printed the token of id 10 without a word."""
    raw = raw.strip()
    try:
        if raw.startswith("["):
            ids = json.loads(raw)
        else:
            items = raw.replace(",", " ").split()
            ids = [int(x) for x in items] if all(map(DECIMAL.fullmatch, items)) else None
    except (ValueError, RecursionError):
        ids = None
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):
        raise ValueError(
            "ids must be integers, as a JSON array (e.g. [9906, 11]) or separated by spaces/commas"
        )
    return ids


def cmd_decode(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args)
    ids = parse_ids(" ".join(args.ids) if args.ids else read_utf8("-"))
    sys.stdout.write(tok.decode(ids))
    sys.stdout.write("\n")
    return 0


def cmd_split(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args)
    print(json.dumps(tok.split(read_text(args)), ensure_ascii=False))
    return 0


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("list", help="list the reference encodings")
    p.set_defaults(func=cmd_list)

    p = subparsers.add_parser("encode", help="print token ids as a JSON array")
    add_tokenizer_choice(p)
    p.add_argument("text", nargs="?", help="text to encode (default: stdin)")
    p.add_argument("--file", "-f", help="read the text from a file ('-' for stdin)")
    special = p.add_mutually_exclusive_group()  # `--special text --allow-special`: say so, not last-wins
    special.add_argument(
        "--special",
        choices=list(SPECIAL_HANDLING),
        default=None,
        help="text that spells a special token: encode it as ordinary text, allow it as the "
        "special token, or raise an error (default)",
    )
    special.add_argument(
        "--allow-special",
        dest="special",
        action="store_const",
        const="allow",
        help="same as --special allow",
    )
    p.set_defaults(func=cmd_encode)

    p = subparsers.add_parser("decode", help="print the text for token ids")
    add_tokenizer_choice(p)
    p.add_argument("ids", nargs="*", help="ids (default: stdin), e.g. 9906 11 1917 or [9906, 11]")
    p.set_defaults(func=cmd_decode)

    p = subparsers.add_parser("split", help="print the pre-tokenization chunks as a JSON array")
    add_tokenizer_choice(p)
    p.add_argument("text", nargs="?", help="text to split (default: stdin)")
    p.add_argument("--file", "-f", help="read the text from a file ('-' for stdin)")
    p.set_defaults(func=cmd_split)
