"""Command line: `python -m tokenizer {list,encode,decode,split,train,count,export,classic} ...`.

Results go to stdout (ids and chunks as JSON arrays); errors go to stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from .core import Tokenizer
from .encodings import get_encoding, list_encodings

# Modules that add their own subcommands through `add_subcommands(subparsers)`.
SUBCOMMAND_MODULES = ["tokenizer.train", "tokenizer.counting", "tokenizer.hf_export", "tokenizer.classic"]


def _load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    if args.tokenizer:
        return Tokenizer.load(args.tokenizer)
    return get_encoding(args.encoding or "cl100k_base")


def _read_text(args: argparse.Namespace) -> str:
    if args.file is not None and args.text is not None:
        raise ValueError("give TEXT or --file, not both")
    if args.file is not None:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{args.file}: not valid UTF-8 at byte offset {e.start}") from None
    if args.text is not None:
        return args.text
    return sys.stdin.read()


def cmd_list(args: argparse.Namespace) -> int:
    for name in list_encodings():
        print(name)
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    tok = _load_tokenizer(args)
    text = _read_text(args)
    allowed = "all" if args.allow_special else frozenset()
    print(json.dumps(tok.encode(text, allowed_special=allowed)))
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    tok = _load_tokenizer(args)
    raw = " ".join(args.ids) if args.ids else sys.stdin.read()
    raw = raw.strip()
    try:
        ids = json.loads(raw) if raw.startswith("[") else [int(x) for x in raw.replace(",", " ").split()]
    except ValueError:
        raise ValueError("ids must be integers, as a JSON array or separated by spaces/commas") from None
    if not all(isinstance(i, int) for i in ids):
        raise ValueError("ids must be integers")
    sys.stdout.write(tok.decode(ids))
    sys.stdout.write("\n")
    return 0


def cmd_split(args: argparse.Namespace) -> int:
    tok = _load_tokenizer(args)
    print(json.dumps(tok.split(_read_text(args)), ensure_ascii=False))
    return 0


def _add_tokenizer_choice(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--encoding", "-e", choices=list_encodings(), help="reference encoding (default cl100k_base)"
    )
    group.add_argument(
        "--tokenizer", "-t", metavar="PATH", help="a saved tokenizer: STEM, STEM.json or STEM.tiktoken"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tokenizer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list the reference encodings")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("encode", help="print token ids as a JSON array")
    _add_tokenizer_choice(p)
    p.add_argument("text", nargs="?", help="text to encode (default: stdin)")
    p.add_argument("--file", "-f", help="read the text from a file ('-' for stdin)")
    p.add_argument("--allow-special", action="store_true", help="encode special tokens in the text as such")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="print the text for token ids")
    _add_tokenizer_choice(p)
    p.add_argument("ids", nargs="*", help="ids (default: stdin), e.g. 9906 11 1917 or [9906, 11]")
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser("split", help="print the pre-tokenization chunks as a JSON array")
    _add_tokenizer_choice(p)
    p.add_argument("text", nargs="?")
    p.add_argument("--file", "-f")
    p.set_defaults(func=cmd_split)

    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name != module_name:
                raise
            continue
        add = getattr(module, "add_subcommands", None)
        if add is not None:
            add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
