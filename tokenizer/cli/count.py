"""`count`: the regex chunks of files into a count table, here or on a Dask cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..counting import COUNT_ENGINES, count_files, save_counts
from ..patterns import DEFAULT_PATTERN, NO_SPLIT, PATTERN_NAMES, PATTERNS, looks_like_a_name
from ..regex_check import check_split_regex
from ..streaming import expand_inputs
from .common import check_output, corpus_sample, integer, ready
from .progress import progress_bars
from .stdin_corpus import stdin_as_file


def engine_choice(args: argparse.Namespace) -> tuple[str, str | None]:
    """(engine, scheduler): --scheduler alone means dask; local counting takes no scheduler.
    Dask is an optional extra: without it `--engine dask` printed an ImportError traceback
    (exit 1) once the inputs were checked; it is now this command's error, before any work."""
    engine = args.engine or ("dask" if args.scheduler else "local")
    if engine == "local" and args.scheduler:
        raise ValueError("--scheduler is for --engine dask")
    if engine == "dask":
        from ..distributed import import_distributed  # Dask itself only when it counts

        try:
            import_distributed()
        except ImportError as e:
            raise ValueError(str(e)) from None
    return engine, args.scheduler


def cmd_count(args: argparse.Namespace) -> int:
    with stdin_as_file(args.files) as files:  # '-': the corpus from stdin
        args.files = files
        return _count(args)


def _count(args: argparse.Namespace) -> int:
    if args.pattern is not None and args.regex is not None:
        raise ValueError("give --pattern NAME or --regex REGEX, not both")
    if args.regex is not None and (args.regex in PATTERNS or args.regex == NO_SPLIT):
        raise ValueError(f"--regex {args.regex!r} is a pattern name: give it as --pattern {args.regex}")
    pattern = args.regex or (DEFAULT_PATTERN if args.pattern is None else args.pattern)
    if pattern not in PATTERNS and pattern != NO_SPLIT and looks_like_a_name(pattern):
        # 'gpt5', 'GPT4' counted as a regex matching that word only: an empty table, exit 0
        raise ValueError(
            f"-p {pattern!r} is not a pattern name ({', '.join(PATTERN_NAMES)}, or an encoding's "
            f"name); as a regex it would match only that word. Choose a name, or write the regex "
            f"out, e.g. '(?:{pattern})|\\s+|\\S'"
        )
    engine, scheduler = engine_choice(args)
    check_output(args.output, inputs=expand_inputs(args.files))
    if pattern != NO_SPLIT and pattern not in PATTERNS:  # a custom regex: checked as train --regex
        for warning in check_split_regex(pattern, sample=corpus_sample(expand_inputs(args.files))):
            print(f"warning: {warning}", file=sys.stderr)
    with progress_bars(args.quiet) as progress:
        counts, stats = count_files(
            args.files,
            pattern,
            engine=engine,
            scheduler=scheduler,
            workers=args.workers,
            max_chunks=args.max_chunks,
            min_chunk_count=args.min_chunk_count,
            progress=progress,
        )
    stats["pattern_name"] = pattern if pattern == NO_SPLIT or pattern in PATTERNS else None
    save_counts(ready(Path(args.output)), counts, stats)
    print(
        f"{stats['bytes']:,} bytes, {stats['chunks']:,} chunks, {stats['unique_chunks']:,} unique "
        f"-> {args.output} ({stats['seconds']:.1f} s)",
        file=sys.stderr,
    )
    return 0


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("count", help="count the regex chunks of files into a count table")
    p.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files, quoted globs, or - for stdin")
    p.add_argument("--pattern", "-p", help="gpt2, gpt4 (default), o200k, none, or a regex")
    # train's spelling of a custom split (train --counts then takes the same --regex)
    p.add_argument("--regex", help="a custom split regex instead of --pattern, as train --regex")
    p.add_argument(
        "--workers",
        "-j",
        type=integer,
        help="processes here, or of the local Dask cluster (default: all cores for big inputs; not with --scheduler)",
    )
    p.add_argument("--min-chunk-count", type=integer, default=1, help="drop chunks seen fewer times")
    p.add_argument(
        "--max-chunks", type=integer, metavar="N", help="bound the table to N chunks (approximate counts)"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("-o", "--output", required=True, help="count table to write (gzip'd JSON lines)")
    p.add_argument(
        "--engine",
        choices=COUNT_ENGINES,
        help="local processes (default) or a Dask cluster (default with --scheduler; needs the [dask] extra)",
    )
    p.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="Dask scheduler address (with --engine dask; without it a local Dask cluster is started)",
    )
    p.set_defaults(func=cmd_count)
