"""`extend`: new merges on top of an existing tokenizer; every base id stays as it was."""

from __future__ import annotations

import argparse
import sys

from ..extend import extend
from ..formats import name_of_file
from ..loading import load_any
from ..streaming import expand_inputs
from ..train import DEFAULT_MIN_FREQUENCY, DEFAULT_TIE_BREAK, TIE_BREAKS
from .common import STDIO, check_output, integer, read_utf8, ready, tokenizer_files
from .progress import progress_bars
from .stdin_corpus import stdin_as_file


def cmd_extend(args: argparse.Namespace) -> int:
    """As train: '-' among the FILEs is the corpus from stdin (it said "corpus file not found: -")."""
    if args.held_out == STDIO and STDIO in args.files:
        raise ValueError("'-' (stdin) is given twice, as a FILE and as --held-out; stdin can be read once")
    with stdin_as_file(args.files) as files:
        args.files = files
        return _extend(args)


def _extend(args: argparse.Namespace) -> int:
    inputs = [*tokenizer_files(args.base), *args.files, *([args.held_out] if args.held_out else [])]
    out = check_output(args.output, stem=True, inputs=inputs)
    base = load_any(args.base)
    files = expand_inputs(args.files)  # quoted globs too, as count takes them
    held_out = read_utf8(args.held_out) if args.held_out else None
    with progress_bars(args.quiet) as progress:
        tok = extend(
            base,
            files,
            args.add,
            tie_break=args.tie_break,
            min_frequency=args.min_frequency,
            workers=args.workers,
            progress=progress,
        )
    ext = tok.metadata["extension"]
    if held_out is not None:
        ext["held_out"] = {
            "file": name_of_file(args.held_out),
            "tokens_before": len(base.encode_ordinary(held_out)),
            "tokens_after": len(tok.encode_ordinary(held_out)),
        }
    tok.name = out.name
    tok.save(ready(out))
    print(report(tok), file=sys.stderr)
    return 0


def report(tok) -> str:
    """What the extension bought, in a few lines."""
    meta = tok.metadata
    ext = meta["extension"]
    first, added = ext["first_new_id"], ext["added"]
    new = f"{added} new tokens (ids {first}..{first + added - 1})" if added else "no new tokens"
    lines = [
        f"{new} on {ext['base']} in {meta['statistics']['seconds']['total']:.1f} s"
        + (f"; stopped early: {meta['stop_reason']}" if meta["stopped_early"] else "")
    ]
    rows = [("corpus", ext["corpus_tokens_before"], ext["corpus_tokens_after"])]
    if "held_out" in ext:
        held = ext["held_out"]
        rows.append((f"held-out {held['file']}", held["tokens_before"], held["tokens_after"]))
    for what, before, after in rows:
        change = f"{100 * (after - before) / before:+.2f} %" if before else "n/a"
        lines.append(f"  {what}: {before} -> {after} tokens ({change})")
    return "\n".join(lines)


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "extend", help="add merges learned from files to a tokenizer, keeping every existing id"
    )
    p.add_argument("base", metavar="BASE", help="a reference encoding (cl100k_base, ...) or a tokenizer file")
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="UTF-8 text files to learn from, quoted globs (streamed), or - for stdin",
    )
    p.add_argument(
        "--add", "-n", type=integer, required=True, metavar="N", help="new tokens to add (at most)"
    )
    p.add_argument(
        "--tie-break",
        choices=TIE_BREAKS,
        default=DEFAULT_TIE_BREAK,
        help="first (minbpe) or lexical (rustbpe)",
    )
    p.add_argument(
        "--min-frequency",
        type=integer,
        default=DEFAULT_MIN_FREQUENCY,
        help=f"stop when the best pair is rarer (default {DEFAULT_MIN_FREQUENCY})",
    )
    p.add_argument("--held-out", metavar="FILE", help="also report the token counts of this file")
    p.add_argument(
        "--workers", "-j", type=integer, help="counting processes (default: all cores for big inputs)"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT_STEM", help="writes OUT_STEM.tiktoken + .json"
    )
    p.set_defaults(func=cmd_extend)
