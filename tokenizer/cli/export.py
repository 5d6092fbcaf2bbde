"""`export`: a saved tokenizer or a reference encoding in another library's format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core import Tokenizer
from ..encodings import get_encoding, list_encodings
from ..formats import atomic_write_text, minbpe_text
from ..hf_export import export_hf
from ..loading import load_file
from ..patterns import DEFAULT_PATTERN
from ..train import split_pattern
from .common import check_output, ready, tokenizer_files


def export_minbpe(tok: Tokenizer, path: str | Path) -> None:
    atomic_write_text(path, minbpe_text(tok))


EXPORTERS = {"hf": export_hf, "minbpe": export_minbpe}  # format name -> writer(tokenizer, path)


def is_reference(source: str) -> bool:
    """A reference encoding's name, unless a file of that name exists."""
    return source in list_encodings() and not Path(source).exists()


def load_source(source: str, pattern: str) -> Tokenizer:
    """A reference encoding by name, else any tokenizer file."""
    return get_encoding(source) if is_reference(source) else load_file(source, pattern=pattern)


def cmd_export(args: argparse.Namespace) -> int:
    # `export gpt2 -o gpt2.json` run twice reads the reference encoding both times
    check_output(args.output, inputs=[] if is_reference(args.source) else tokenizer_files(args.source))
    pattern = split_pattern(args.pattern)  # a name, as train's --pattern: a typo is not a regex
    tok = load_source(args.source, pattern)
    EXPORTERS[args.format](tok, ready(Path(args.output)))
    if args.format == "hf" and tok.duplicate_ids:
        print(f"warning: {duplicates_lost(tok.duplicate_ids)}", file=sys.stderr)
    return 0


def duplicates_lost(duplicates: dict[int, int]) -> str:
    """What a tokenizer.json cannot hold: ids whose bytes repeat an earlier token's."""
    later, earlier = min(duplicates.items())
    return (
        f"{len(duplicates):,} {'ids repeat' if len(duplicates) > 1 else 'id repeats'} an earlier token's bytes "
        f"(e.g. {later} = {earlier}); a tokenizer.json holds one id per token, so Hugging Face "
        "never gives or decodes those ids (encoding is the same: it uses the earlier ones too)"
    )


def add_commands(subparsers) -> None:
    """`export --format hf STEM_OR_FILE -o tokenizer.json`."""
    p = subparsers.add_parser("export", help="write a tokenizer in another library's format")
    p.add_argument(
        "source",
        metavar="STEM_OR_FILE",
        help="saved tokenizer (STEM, .json, .tiktoken), minbpe .model, tokenizer.json or encoding name",
    )
    p.add_argument(
        "--format",
        "-f",
        choices=list(EXPORTERS),
        default="hf",
        help="hf: Hugging Face tokenizer.json; minbpe: karpathy/minbpe's .model",
    )
    p.add_argument("--output", "-o", required=True, help="file to write, e.g. tokenizer.json")
    p.add_argument(
        "--pattern",
        default=DEFAULT_PATTERN,
        help=f"split pattern for a bare .tiktoken file (default {DEFAULT_PATTERN})",
    )
    p.set_defaults(func=cmd_export)
