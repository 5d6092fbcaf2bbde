"""`classic learn|apply`: classic BPE (Sennrich et al. 2016), merge for merge subword-nmt's."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ..classic import (
    apply,
    check_dropout,
    compile_glossaries,
    count_units,
    count_words,
    format_codes,
    format_vocabulary,
    learn_steps,
    merges_budget,
    parse_codes,
    parse_vocabulary,
    parse_word_counts,
)
from ..formats import atomic_write_text
from .common import STDIO, check_output, integer, read_utf8, ready, real


def cmd_learn(args: argparse.Namespace) -> int:
    if args.merges < 0:  # the library's "num_merges must ..." names a keyword the user never typed
        raise ValueError(
            f"--merges must be an integer >= 0 (the number of merges to learn), got {args.merges}"
        )
    args.inputs = [*args.inputs, *args.more_inputs] or [STDIO]
    if args.output != STDIO:
        check_output(args.output, inputs=args.inputs)
    counts: Counter[str] = Counter()
    for path in args.inputs:
        text = read_utf8(path)
        counts.update(parse_word_counts(text, str(path)) if args.dict_input else count_words(text))
    merges = []
    for step in learn_steps(counts, args.merges, args.min_frequency, total_symbols=args.total_symbols, top=1):
        left, right = step["pair"]
        if args.verbose:  # learn-bpe -v's line, on stderr as there
            print(
                f"pair {step['step']}: {left} {right} -> {left}{right} (frequency {step['count']})",
                file=sys.stderr,
            )
        merges.append((left, right))
    codes = format_codes(merges)
    if args.output == STDIO:
        sys.stdout.write(codes)
    else:
        atomic_write_text(ready(Path(args.output)), codes)
    if len(merges) < merges_budget(counts, args.merges, args.total_symbols):
        print(
            f"stopped after {len(merges)} merges: no pair occurs >= {args.min_frequency} times",
            file=sys.stderr,
        )
    return 0


ALL_MERGES = -1  # apply's --merges default, as subword-nmt's apply-bpe -m: every merge of the codes


def check_apply_options(args: argparse.Namespace) -> None:
    """apply-bpe's options, checked before any file is read (a bad glossary surfaced only
    after the whole text had been read, or, in subword-nmt, as re.error's traceback)."""
    if args.input_option is not None:
        if args.input != STDIO:
            raise ValueError("give the text file once: as INPUT or as --input, not both")
        args.input = args.input_option
    from_stdin = [
        name
        for name, path in (
            ("--codes -", args.codes),
            ("INPUT", args.input),
            ("--vocabulary -", args.vocabulary),
        )
        if path == STDIO
    ]
    if len(from_stdin) > 1:  # the second would read nothing: an empty output, exit 0
        fix = "name the codes file or the text file"
        if args.vocabulary is not None:
            fix = "name all but one of the codes, vocabulary and text files"
        both = "both" if len(from_stdin) == 2 else "all"
        raise ValueError(f"{' and '.join(from_stdin)} {both} read stdin; {fix}")
    if args.vocabulary_threshold is not None and args.vocabulary is None:
        raise ValueError(
            f"--vocabulary-threshold {args.vocabulary_threshold} needs --vocabulary FILE, the counts it "
            "applies to (subword-nmt ignores it silently); give the file, or drop the threshold"
        )
    check_dropout(args.dropout)  # "dropout must ..." reaches the user as "--dropout must ..."
    try:
        compile_glossaries(args.glossaries)
    except ValueError as e:
        raise ValueError(f"--glossaries: {e}") from None


def read_apply_vocabulary(args: argparse.Namespace) -> set[str] | None:
    """--vocabulary's units at --vocabulary-threshold, warning where none is left (then,
    as in subword-nmt, no unit is checked)."""
    if args.vocabulary is None:
        return None
    units = parse_vocabulary(read_utf8(args.vocabulary), args.vocabulary_threshold, str(args.vocabulary))
    if not units:
        at = "" if args.vocabulary_threshold is None else f" with a count >= {args.vocabulary_threshold}"
        print(
            f"warning: {args.vocabulary}: no unit{at}; as in subword-nmt, an empty vocabulary checks "
            "nothing: every unit is kept",
            file=sys.stderr,
        )
    return units


def cmd_apply(args: argparse.Namespace) -> int:
    check_apply_options(args)
    to_stdout = args.output in (None, STDIO)
    if not to_stdout:
        check_output(
            args.output, inputs=[args.input, args.codes, *([args.vocabulary] if args.vocabulary else [])]
        )
    limit = None if args.merges == ALL_MERGES else args.merges  # -m: the first N (below -1: none)
    merges = parse_codes(read_utf8(args.codes), str(args.codes), limit=limit)
    vocabulary = read_apply_vocabulary(args)
    text = read_utf8(args.input)
    options = {
        "glossaries": args.glossaries,
        "vocabulary": vocabulary,
        "dropout": args.dropout,
        "seed": args.seed,
    }
    result = apply(text, merges, args.separator, **options)
    if to_stdout:
        sys.stdout.write(result)
    else:
        atomic_write_text(ready(Path(args.output)), result)
    return 0


def cmd_get_vocab(args: argparse.Namespace) -> int:
    """subword-nmt get-vocab: the units of a segmented text with their counts."""
    if args.input_option is not None:
        if args.input != STDIO:
            raise ValueError("give the text file once: as INPUT or as --input, not both")
        args.input = args.input_option
    to_stdout = args.output in (None, STDIO)
    if not to_stdout:
        check_output(args.output, inputs=[args.input])
    vocabulary = format_vocabulary(count_units(read_utf8(args.input)))
    if to_stdout:
        sys.stdout.write(vocabulary)
    else:
        atomic_write_text(ready(Path(args.output)), vocabulary)
    return 0


def add_commands(subparsers) -> None:
    """`classic learn|apply|get-vocab ...`."""
    parser = subparsers.add_parser("classic", help="classic BPE (Sennrich et al. 2016), same as subword-nmt")
    sub = parser.add_subparsers(dest="classic_command", required=True)

    # subword-nmt's own spellings work too (`learn-bpe -s N < in > codes`, `-i in -o codes`,
    # `--symbols N`), so its users' commands run unchanged.
    p = sub.add_parser("learn", help="learn merges, write a subword-nmt codes file")
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="UTF-8 text files ('-' for stdin; none: stdin)")
    p.add_argument("--input", "-i", dest="more_inputs", action="append", default=[], help="another INPUT")
    p.add_argument(
        "--merges", "--symbols", "-s", type=integer, required=True, help="number of merges to learn"
    )
    p.add_argument(
        "--min-frequency", type=integer, default=2, help="stop when no pair occurs this often (default 2)"
    )
    p.add_argument(
        "--total-symbols", "-t", action="store_true", help="subtract the character count from --merges"
    )
    p.add_argument("--dict-input", action="store_true", help="inputs are 'word count' lines")
    p.add_argument("--output", "-o", default=STDIO, help="codes file to write ('-' or none: stdout)")
    p.add_argument("--verbose", "-v", action="store_true", help="each merge and its frequency on stderr")
    add_num_workers(p)
    p.set_defaults(func=cmd_learn)

    p = sub.add_parser("apply", help="segment text with a codes file")
    p.add_argument(
        "input", nargs="?", default=STDIO, metavar="INPUT", help="UTF-8 text file (default: stdin)"
    )
    p.add_argument("--input", "-i", dest="input_option", default=None, help="the same as INPUT")
    p.add_argument("--codes", "-c", required=True, help="codes file (subword-nmt format, version 0.2)")
    p.add_argument(
        "--separator",
        "-s",
        default="@@",
        help="marks each non-final unit of a word (default @@, as subword-nmt; '' for none)",
    )
    p.add_argument(
        "--merges",
        "-m",
        type=integer,
        default=ALL_MERGES,
        help="apply only the first N merges (default -1: all)",
    )
    p.add_argument("--output", "-o", default=None, help="output file ('-' or none: stdout)")
    p.add_argument(
        "--glossaries",
        nargs="+",
        default=None,
        metavar="REGEX",
        help="words never split (Python regexes, as subword-nmt); a word containing one is cut around it. "
        "Give INPUT before this flag, or with -i",
    )
    p.add_argument(
        "--vocabulary",
        metavar="FILE",
        default=None,
        help="'unit count' lines (subword-nmt get-vocab of the segmented training text): "
        "units not in it are split back",
    )
    p.add_argument(
        "--vocabulary-threshold",
        type=integer,
        default=None,
        metavar="N",
        help="with --vocabulary: units counted fewer than N times count as not in it",
    )
    p.add_argument(
        "--dropout",
        type=real,
        default=0.0,
        metavar="P",
        help="BPE-dropout: leave out each merge with probability P (for training data only)",
    )
    p.add_argument(
        "--seed",
        type=integer,
        default=None,
        metavar="S",
        help="seed of --dropout's draws: the output of 'python -m subword_nmt.apply_bpe --seed S' "
        "(the subword-nmt command ignores its --seed); none: another output each run",
    )
    add_num_workers(p)
    p.set_defaults(func=cmd_apply)

    p = sub.add_parser(
        "get-vocab", help="units of a segmented text with their counts (subword-nmt get-vocab)"
    )
    p.add_argument(
        "input", nargs="?", default=STDIO, metavar="INPUT", help="UTF-8 text file (default: stdin)"
    )
    p.add_argument("--input", "-i", dest="input_option", default=None, help="the same as INPUT")
    p.add_argument("--output", "-o", default=None, help="output file ('-' or none: stdout)")
    p.set_defaults(func=cmd_get_vocab)


def add_num_workers(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--num-workers",
        type=integer,
        default=1,
        metavar="N",
        help="taken for subword-nmt's command line: the output does not depend on it (one process here)",
    )
