"""`audit`, `stats`, `diff`: know a tokenizer (tokenizer.audit, tokenizer.stats, tokenizer.vocab_diff).

Each prints readable tables, or with --json exactly the library's dict. Everything is read,
checked and computed before the first line is printed, so bad input writes nothing.
TOKENIZER is anything tokenizer.loading.load_any accepts.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from ..audit import audit
from ..core import Tokenizer
from ..loading import load_any
from ..stats import check_languages, check_sweep_sizes, language_rows, sweep, text_stats, udhr_sections
from ..streaming import default_workers
from ..vocab_diff import diff
from .common import STDIO, integer, read_utf8

SHOWN = 10  # ids listed per audit list in the table (the JSON has all of them)


# ----- output -------------------------------------------------------------------------------


def show_token(token: bytes) -> str:
    """A token for a terminal: its text quoted with escapes, or its bytes as <E4 BD>."""
    try:
        return repr(token.decode("utf-8"))
    except UnicodeDecodeError:
        return "<" + token.hex(" ").upper() + ">"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text left-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[k]) for r in cells)) if cells else len(h) for k, h in enumerate(headers)]
    numeric = [bool(rows) and all(isinstance(r[k], (int, float)) for r in rows) for k in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric, strict=True)
        )

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, cells)]).rstrip()


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)


def print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=1))


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def read_texts(paths: Sequence[str]) -> list[str]:
    """Each file's text, in order. '-' (stdin) may come once: a second reading of stdin is empty,
    and `stats - -` printed 0 tokens and 0 bytes for it, the second reading replacing the first."""
    if list(paths).count(STDIO) > 1:
        raise ValueError("'-' (stdin) is given twice; stdin can be read once")  # as train's
    return [read_utf8(path) for path in paths]


# ----- audit --------------------------------------------------------------------------------


def cmd_audit(args: argparse.Namespace) -> int:
    tok = load_any(args.tokenizer)
    texts = read_texts(args.corpus) if args.corpus else None
    result = audit(tok, corpus_texts=texts)
    if args.json:
        print_json(result)
        return 0
    mergeable = sum(result["by_script"].values())
    print(
        f"{args.tokenizer}: n_vocab {result['n_vocab']}, {mergeable} mergeable ids, {len(tok.special_tokens)} special"
    )
    lists = [
        ("partial UTF-8", "partial_utf8"),
        ("unreachable", "unreachable"),
        ("unused in the corpus", "unused"),
    ]
    rows = [[label, len(result[key]), _first_ids(tok, result[key])] for label, key in lists if key in result]
    rows.append(
        [
            "duplicates",
            len(result["duplicates"]),
            " ".join(f"{a}={b}" for a, b in result["duplicates"][:SHOWN]),
        ]
    )
    print(table(["list", "ids", f"first {SHOWN}"], rows))
    print()
    longest = [
        [i, len(tok.decode_single_token_bytes(i)), show_token(tok.decode_single_token_bytes(i))]
        for i in result["longest"]
    ]
    print(table(["longest id", "bytes", "token"], longest))
    print()
    scripts = [[name, n, n / mergeable] for name, n in result["by_script"].items()]
    print(table(["script", "ids", "share"], scripts))
    return 0


def _first_ids(tok: Tokenizer, ids: list[int]) -> str:
    return " ".join(f"{i}:{show_token(tok.decode_single_token_bytes(i))}" for i in ids[:SHOWN])


# ----- stats --------------------------------------------------------------------------------


def parse_sizes(value: str) -> list[int]:
    """--sweep 1000,2000,4000 -> [1000, 2000, 4000] (order and range are checked per tokenizer)."""
    sizes = []
    for part in value.split(","):
        try:
            sizes.append(integer(part))
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"{e} (give e.g. 1000,2000,4000)") from None
    return sizes


def cmd_stats(args: argparse.Namespace) -> int:
    tokenizers = {spec: load_any(spec) for spec in dict.fromkeys(args.tokenizer)}
    if args.sweep:  # a bad size is an error before the texts are read and counted
        for spec, tok in tokenizers.items():
            check_sweep_sizes(tok, args.sweep, name=spec)
    texts = dict(zip(args.files, read_texts(args.files), strict=True))
    sections = []
    if args.by_language:
        for path, text in texts.items():
            sections.extend(udhr_sections(text, source=path))
        check_languages(sections, source=", ".join(texts))
    # One memo of chunk -> tokens per tokenizer: the sections are the files' text again.
    memos: dict[str, dict[str, int]] = {spec: {} for spec in tokenizers}
    workers = default_workers() if args.workers is None else args.workers
    out: dict[str, Any] = {
        "results": [
            {"tokenizer": spec, "file": path, **text_stats(tok, text, workers=workers, memo=memos[spec])}
            for path, text in texts.items()
            for spec, tok in tokenizers.items()
        ]
    }
    if args.by_language:
        out["languages"] = [
            row
            for spec, tok in tokenizers.items()
            for row in language_rows(tok, sections, name=spec, workers=workers, memo=memos[spec])
        ]
    if args.sweep:
        out["sweep"] = [
            row
            for spec, tok in tokenizers.items()
            for row in sweep(tok, texts.values(), args.sweep, name=spec)
        ]
    if args.json:
        print_json(out)
    else:
        print_stats_tables(out, sum(len(t.encode("utf-8")) for t in texts.values()))
    return 0


def print_stats_tables(out: dict[str, Any], total_bytes: int) -> None:
    first = {}
    rows = []
    for r in out["results"]:
        base = first.setdefault(r["file"], r["tokens"])
        rows.append(
            [r["tokenizer"], r["file"], r["tokens"], r["bytes"], r["chars"], r["words"],
             _ratio(r["bytes"], r["tokens"]), _ratio(r["chars"], r["tokens"]), _ratio(r["tokens"], r["words"]),
             _ratio(r["tokens"], base)]
        )  # fmt: skip
    headers = ["tokenizer", "file", "tokens", "bytes", "chars", "words", "bytes/token", "chars/token"]
    print(table([*headers, "tokens/word", "vs first -t"], rows))
    if "languages" in out:
        print()
        rows = [
            [r["tokenizer"], r["code"], r["name"], r["tokens"], r["bytes"], r["parity"]]
            for r in out["languages"]
        ]
        print(table(["tokenizer", "code", "language", "tokens", "bytes", "parity (eng = 1)"], rows))
    if "sweep" in out:
        print()
        rows = [
            [r["tokenizer"], r["vocab_size"], r["tokens"], _ratio(total_bytes, r["tokens"])]
            for r in out["sweep"]
        ]
        print(table(["tokenizer", "vocab size", "tokens", "bytes/token"], rows))


# ----- diff ---------------------------------------------------------------------------------


def cmd_diff(args: argparse.Namespace) -> int:
    a, b = load_any(args.a), load_any(args.b)
    corpus = read_texts(args.corpus) if args.corpus else None
    result = diff(a, b, corpus=corpus)
    if args.json:
        print_json(result)
        return 0
    first = result["first_difference"]
    print(f"a = {args.a}, b = {args.b}")
    print(table(["common", "only in a", "only in b", "first difference (rank)"],
                [[result["common"], result["only_a"], result["only_b"], "none" if first is None else first]]))  # fmt: skip
    for side in ("a", "b"):
        examples = result[f"examples_only_{side}"]
        if examples:
            print(
                f"\nonly in {side}: "
                + " ".join(f"{e['id']}:{show_token(bytes.fromhex(e['hex']))}" for e in examples)
            )
    div = result.get("divergence")
    if div:
        print(f"\nat rank {div['rank']}: {div['reason']}")
        if "candidates" in div:
            rows = [
                [str(c["pair"]), show_token(bytes.fromhex(c["hex"])), c["count"]] for c in div["candidates"]
            ]
            print(table(["candidate pair", "token", "count"], rows))
    return 0


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "audit", help="partial-UTF-8, unreachable, unused, duplicate and longest tokens; scripts"
    )
    p.add_argument(
        "tokenizer",
        metavar="TOKENIZER",
        help="encoding name, saved STEM, .tiktoken, .json, minbpe .model or tokenizer.json",
    )
    # action="extend": `--corpus a --corpus b` reads both files (argparse's default kept only b)
    p.add_argument("--corpus", nargs="+", action="extend", metavar="FILE",
                   help="UTF-8 files: list the ids their encoding never uses")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the audit as JSON")
    p.set_defaults(func=cmd_audit)

    p = subparsers.add_parser(
        "stats", help="compression per tokenizer and file; language parity; vocabulary sweep"
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files")
    p.add_argument("-t", "--tokenizer", action="append", required=True, metavar="TOKENIZER",
                   help="encoding name, saved STEM, .tiktoken, .json, minbpe .model or tokenizer.json (repeatable)")  # fmt: skip
    p.add_argument("--by-language", action="store_true",
                   help="FILEs are UDHR-style ('##### UDHR code=... name=...' headers): tokens and parity per language")  # fmt: skip
    p.add_argument("--sweep", type=parse_sizes, metavar="V,V,...",
                   help="tokens at these vocabulary sizes (each tokenizer cut to ranks < V), increasing")  # fmt: skip
    p.add_argument("--workers", "-j", type=integer, metavar="N",
                   help="processes encoding the distinct chunks (default: all cores; 1 for one process)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=cmd_stats)

    p = subparsers.add_parser("diff", help="compare two vocabularies; why two trainings diverged")
    p.add_argument("a", metavar="A", help="a TOKENIZER")
    p.add_argument("b", metavar="B", help="another TOKENIZER")
    p.add_argument("--corpus", nargs="+", action="extend", metavar="FILE",
                   help="the training corpus of A and B (trained here): exact counts where they diverged")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=cmd_diff)
