"""`export`: a saved tokenizer or a reference encoding in another library's format."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core import Tokenizer
from ..encodings import get_encoding, list_encodings
from ..formats import atomic_write_text, minbpe_text
from ..hf_export import export_hf
from ..loading import load_file
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
    EXPORTERS[args.format](load_source(args.source, pattern), ready(Path(args.output)))
    return 0


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
    p.add_argument("--pattern", default="gpt4", help="split pattern for a bare .tiktoken file (default gpt4)")
    p.set_defaults(func=cmd_export)
