"""`train`: a byte-level BPE tokenizer from files, or from a count table made by `count`."""

from __future__ import annotations

import argparse
import sys

from ..counting import load_counts
from ..encodings import ENCODING_PATTERN_NAMES
from ..patterns import DEFAULT_PATTERN, NO_SPLIT, is_named
from ..regex_check import check_split_regex
from ..streaming import expand_inputs
from ..train import DEFAULT_MIN_FREQUENCY, DEFAULT_TIE_BREAK, TIE_BREAKS, split_pattern, train
from .common import check_output, corpus_sample, integer, ready
from .progress import progress_bars
from .stdin_corpus import stdin_as_file


def counts_pattern(path: str) -> str:
    """The pattern a count table was made with (its name when it has one)."""
    _, meta = load_counts(path)
    return meta.get("pattern_name") or meta["pattern"]


def names_a_pattern(pattern: str) -> bool:
    """`--pattern` names a split (gpt4, cl100k_base, none, or tiktoken's exact string of one), as
    opposed to a custom regex that old command lines still pass there. The library's
    split_pattern takes both, but only the `--regex` path sampled the corpus for the share the
    regex drops and warned that the page cannot run it: `-p '\\p{L}+'` dropped every space in
    silence. So a regex in --pattern is treated as --regex."""
    return is_named(pattern) or pattern == NO_SPLIT or pattern in ENCODING_PATTERN_NAMES


def cmd_train(args: argparse.Namespace) -> int:
    with stdin_as_file(args.files) as files:  # '-': the corpus from stdin
        args.files = files
        return _train(args)


def _train(args: argparse.Namespace) -> int:
    if not args.files and not args.counts:
        raise ValueError("give FILEs to train on, or --counts")
    if args.files and args.counts:
        raise ValueError("give FILEs or --counts, not both")
    if (
        args.counts and args.max_chunks is not None
    ):  # the library's "max_chunks bounds counting" named no flag
        raise ValueError(
            "--max-chunks bounds the count table while counting, and --counts was counted already: "
            "give it to `count` (count --max-chunks N ...), or leave it out here"
        )
    files = expand_inputs(args.files) if args.files else []  # quoted globs too, as count takes them
    out = check_output(args.output, stem=True, inputs=[*files, *([args.counts] if args.counts else [])])
    pattern, regex = args.pattern, args.regex
    if pattern is not None and regex is not None:
        raise ValueError("give --pattern NAME or --regex REGEX, not both")
    if pattern is not None:
        split_pattern(pattern)  # a name, or an error listing the names
        if not names_a_pattern(pattern):
            pattern, regex = None, pattern  # -p REGEX of old command lines: checked and warned as --regex
    if args.counts and pattern is None and regex is None:
        counted = counts_pattern(args.counts)
        pattern, regex = (counted, None) if is_named(counted) or counted == "none" else (None, counted)
    corpus = files or None
    if regex is not None and corpus:
        for warning in check_split_regex(regex, sample=corpus_sample(corpus)):
            print(f"warning: {warning}", file=sys.stderr)
    with progress_bars(args.quiet) as progress:
        tok = train(
            corpus,
            args.vocab_size,
            pattern=None if regex is not None else (pattern or DEFAULT_PATTERN),
            regex=regex,
            special_tokens=args.special,
            tie_break=args.tie_break,
            min_frequency=args.min_frequency,
            workers=args.workers,
            progress=progress,
            min_chunk_count=args.min_chunk_count,
            max_chunks=args.max_chunks,
            counts=args.counts,
            name=out.name,
        )
    tok.save(ready(out))
    meta = tok.metadata
    stats = meta["statistics"]
    print(
        f"{stats['merges']} merges ({stats['ties']} decided by a tie) in {stats['seconds']['total']:.1f} s"
        + (f"; stopped early: {meta['stop_reason']}" if meta["stopped_early"] else "")
        + f" -> {out}.tiktoken, {out}.json",
        file=sys.stderr,
    )
    return 0


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("train", help="train a byte-level BPE tokenizer on files")
    p.add_argument(
        "files", nargs="*", metavar="FILE", help="UTF-8 text files, quoted globs (streamed), or - for stdin"
    )
    p.add_argument("--vocab-size", "-v", type=integer, required=True, help="256 bytes + merges")
    p.add_argument(
        "--pattern", "-p", metavar="NAME", help="split pattern: gpt2, gpt4 (default), o200k or none"
    )
    p.add_argument(
        "--regex",
        metavar="REGEX",
        help="a custom split regex instead of --pattern (checked: compiles, no capturing groups, "
        "no empty match; warns with the share of the text it would drop)",
    )
    p.add_argument(
        "--tie-break",
        choices=TIE_BREAKS,
        default=DEFAULT_TIE_BREAK,
        help="first (minbpe) or lexical (rustbpe)",
    )
    p.add_argument("--special", action="append", metavar="TOKEN", help="a special token (repeatable)")
    p.add_argument(
        "--workers", "-j", type=integer, help="counting processes (default: all cores for big inputs)"
    )
    p.add_argument(
        "--min-frequency",
        type=integer,
        default=DEFAULT_MIN_FREQUENCY,
        help=f"stop when the best pair is rarer (default {DEFAULT_MIN_FREQUENCY})",
    )
    p.add_argument("--min-chunk-count", type=integer, default=1, help="drop chunks seen fewer times")
    p.add_argument(
        "--max-chunks",
        type=integer,
        metavar="N",
        help="bound the count table to N chunks (approximate counts)",
    )
    p.add_argument("--counts", metavar="FILE", help="train on a count table from `count` instead of FILEs")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT_STEM", help="writes OUT_STEM.tiktoken + .json"
    )
    p.set_defaults(func=cmd_train)
