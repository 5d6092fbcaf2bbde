"""Compression, language parity and the vocabulary-size sweep.

* `text_stats(tok, text)`: tokens, bytes (UTF-8), chars (code points) and words: maximal
  runs of non-whitespace characters, whitespace as `str.split()` sees it (str.isspace).
  Special tokens' text is ordinary text (tiktoken's disallowed_special=()); HF's non-special
  added tokens are matched, one token each, as encode_ordinary does. A lone surrogate
  (a str from JSON or JavaScript may hold one) is read as U+FFFD, as the encoder reads it.
* `udhr_sections(text)`: the sections of a UDHR-style file, each introduced by a header
  line `##### UDHR code=eng lang=en ... name=English`; a section's text is everything
  after its header line up to the next header line or the end of the file.
  `language_rows` gives each section's tokens and its parity: tokens divided by the tokens
  of the English section (code=eng) of the same declaration (Petrov et al. 2023), worst first.
* `sweep(tok, texts, sizes)`: tokens at each vocabulary size V, where V means the tokenizer
  cut to ranks < V (the 256 bytes and the first V - 256 merges). BPE applies merges in
  rank order and a merge only joins tokens that exist before it, so every such prefix is a
  tokenizer of its own, exactly the one training would have stopped at: one training run
  answers "what would vocabulary V have given?".

Counting does not build the id list: the text's chunks are counted (C speed), each
distinct chunk is encoded once, and tokens = sum(count x ids in chunk). Encoding is
chunk by chunk, so this equals len(tok.encode_ordinary(text)). Multilingual text is nearly
all new chunks, which `Tokenizer.chunk_token_counts` merges together (numpy, `_batch`), and
`workers` > 1 lets forked processes do slices of them (the CLI uses every core); a `memo`
(chunk -> tokens) lets the per-language rows reuse what the whole-file count encoded.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._arguments import check_text
from .core import Tokenizer
from .streaming import MAX_WORKERS, check_workers

ENGLISH = "eng"  # the UDHR code parity is measured against
UDHR_HEADER = re.compile(r"^##### UDHR (.*?)\r?$", re.MULTILINE)  # a CRLF file's \r is no field's
PARALLEL_MIN_CHUNKS = 20_000  # new distinct chunks below which forking helpers costs more than it saves
# sections of one UDHR-style text: the UDHR has about 500 translations; each section is a row per
# tokenizer and a bar in the page's plot (100,000 one-line sections took minutes there)
MAX_LANGUAGES = 1_000
# key=value; a value runs up to the blanks before the next key= or the end of the line (a blank
# an editor left at the end, or a tab between fields, is no value's: "eng " was not English)
_FIELD = re.compile(r"(\w+)=(.*?)(?=\s+\w+=|\s*$)")


def well_formed(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD: what Tokenizer.encode_ordinary encodes. Not a
    str (bytes, None): encode_ordinary's TypeError, where `.encode` raised AttributeError."""
    check_text(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def as_texts(texts: str | Iterable[str]) -> Iterable[str]:
    """`texts`, where one str is one text (as in train()): iterated, a str gives its characters,
    each encoded alone, and the figures were those of the characters, not of the text."""
    return [texts] if isinstance(texts, str) else texts


def chunk_counts(tok: Tokenizer, texts: str | Iterable[str]) -> Counter[str]:
    """How often each pre-tokenization chunk occurs in `texts`. An added token HF matches in any
    text (`tok.always_matched`) is counted as the 1-tuple (token,): one token wherever it is."""
    chunks: Counter[str] = Counter()
    for text in as_texts(texts):
        if not tok.always_matched:
            chunks.update(tok.split(well_formed(text)))
            continue
        for before, token in tok.segments(well_formed(text), tok.always_matched):  # as encode_ordinary
            chunks.update(tok.split(before))
            if token is not None:
                chunks[(token,)] += 1
    return chunks


def chunk_lengths(
    tok: Tokenizer, chunks: Iterable[str], *, workers: int = 1, memo: dict[str, int] | None = None
) -> dict[str, int]:
    """Tokens in each distinct chunk (added to `memo`, which is returned; chunks already in it
    are not encoded again). With workers > 1 and at least PARALLEL_MIN_CHUNKS new chunks, forked
    processes encode interleaved slices of them: the same encoder on the same chunks, so the
    same lengths; where fork is missing (Windows, the browser) one process does it all."""
    if workers is None:
        raise ValueError(f"workers must be an integer from 1 to {MAX_WORKERS}, got None")
    check_workers(workers)
    lengths = {} if memo is None else memo
    new = [chunk for chunk in dict.fromkeys(chunks) if chunk not in lengths]
    if tok.always_matched:  # an added token matched in the text (chunk_counts) is one token
        lengths.update((chunk, 1) for chunk in new if type(chunk) is tuple)
        new = [chunk for chunk in new if type(chunk) is not tuple]
    # Each child gets at least half of PARALLEL_MIN_CHUNKS: no more processes than the work pays for.
    workers = min(workers, len(new) * 2 // PARALLEL_MIN_CHUNKS)
    if workers > 1 and _can_fork():
        lengths.update(zip(new, _forked_lengths(tok, new, workers), strict=True))
    else:
        lengths.update(zip(new, tok.chunk_token_counts(new), strict=True))
    return lengths


def tokens_in(
    tok: Tokenizer, chunks: Counter[str], *, workers: int = 1, memo: dict[str, int] | None = None
) -> int:
    """Tokens of text with these chunk counts: each distinct chunk encoded once."""
    return _total(chunks, chunk_lengths(tok, chunks, workers=workers, memo=memo))


def _total(chunks: Counter[str], lengths: dict[str, int]) -> int:
    """sum(count x tokens) over the chunks, in C."""
    return sum(map(operator.mul, chunks.values(), map(lengths.__getitem__, chunks)))


def count_tokens(tok: Tokenizer, text: str, *, workers: int = 1, memo: dict[str, int] | None = None) -> int:
    """len(tok.encode_ordinary(text)), computed chunk by chunk."""
    return tokens_in(tok, chunk_counts(tok, [text]), workers=workers, memo=memo)


def _can_fork() -> bool:
    try:
        import multiprocessing

        return "fork" in multiprocessing.get_all_start_methods()
    except (ImportError, OSError):  # pragma: no cover - Pyodide has no processes
        return False


_FORK_JOB: tuple[Tokenizer, list[str], int] | None = None  # what forked children read (inherited)


def _slice_lengths(k: int) -> list[int]:
    tok, chunks, step = _FORK_JOB  # type: ignore[misc]
    return tok.chunk_token_counts(chunks[k::step])


def _forked_lengths(tok: Tokenizer, chunks: list[str], workers: int) -> list[int]:
    """Lengths of `chunks` in order, slice k = chunks[k::workers] done by child k. The children
    inherit the tokenizer and the list through fork: nothing large is pickled but the lengths."""
    global _FORK_JOB
    import multiprocessing

    _FORK_JOB = (tok, chunks, workers)
    if tok.batch_pays(len(chunks), sum(map(len, chunks))):
        tok.pair_table()  # built once here, shared by the children (copy-on-write)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_slice_lengths, range(workers))
    finally:
        _FORK_JOB = None
    out = [0] * len(chunks)
    for k, part in enumerate(parts):
        out[k::workers] = part
    return out


def text_stats(
    tok: Tokenizer, text: str, *, workers: int = 1, memo: dict[str, int] | None = None
) -> dict[str, int]:
    text = well_formed(text)
    return {
        "tokens": count_tokens(tok, text, workers=workers, memo=memo),
        "bytes": len(text.encode("utf-8")),
        "chars": len(text),
        "words": len(text.split()),
    }


# ----- languages ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    code: str
    name: str
    fields: dict[str, str]  # every key=value of the header line
    text: str
    line: int  # the header's line number (1-based)
    source: str = "<text>"  # the file it came from, for messages

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def udhr_sections(text: str, *, source: str = "<text>") -> list[Section]:
    """The sections of a UDHR-style text; ValueError when it has no header or a bad one, or
    text before its first header (no language's: it was left out of every row, and a file that
    starts with a byte-order mark hid its first header that way, a language missing silently;
    the mark itself is dropped)."""
    text = well_formed(text).removeprefix("\ufeff")
    headers = list(UDHR_HEADER.finditer(text))
    if not headers:
        raise ValueError(
            f"{source}: no '##### UDHR code=... name=...' header lines; --by-language needs "
            "UDHR-style files such as ../shared/corpora/udhr_sample.txt"
        )
    if len(headers) > MAX_LANGUAGES:
        raise ValueError(
            f"{source}: {len(headers):,} '##### UDHR' sections; at most {MAX_LANGUAGES:,} are compared "
            "(the UDHR has about 500 translations): keep the languages you want to compare"
        )
    sections = []
    line, counted = 1, 0  # the header's line number, counted up to `counted` (not from 0 each time)
    for k, match in enumerate(headers):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        fields = dict(_FIELD.findall(match.group(1)))
        if not fields.get("code", "").strip():
            raise ValueError(
                f"{source}:{line}: UDHR header without code=: {match.group()[:80]!r}; give it one, e.g. "
                "'##### UDHR code=eng name=English'"
            )
        start = match.end() + 1  # past the header's newline
        end = headers[k + 1].start() if k + 1 < len(headers) else len(text)
        body = text[start:end] if start <= end else ""
        if not body.strip():  # else a row of 0 tokens with parity 0, the "best" language
            raise ValueError(
                f"{source}:{line}: the section code={fields['code']} has no text; add its text or "
                "remove its header"
            )
        sections.append(
            Section(fields["code"], fields.get("name", fields["code"]), fields, body, line, source)
        )
    if text[: headers[0].start()].strip():
        raise ValueError(
            f"{source}:1: text before the first '##### UDHR' header belongs to no language and would be "
            "left out of every row; remove it, or give it a header line"
        )
    return sections


def check_languages(sections: Sequence[Section], *, source: str = "<text>") -> None:
    """Codes must be unique and English must be there: parity is relative to it. `source`
    names all the files; each section names its own place (file:line)."""
    seen: dict[str, Section] = {}
    for s in sections:
        if s.code in seen:
            raise ValueError(
                f"{s.where}: language code={s.code} appears twice (first at {seen[s.code].where}); "
                "keep one section per language"
            )
        seen[s.code] = s
    if ENGLISH not in seen:
        raise ValueError(
            f"{source}: no English section (code={ENGLISH}); parity is relative to English; add the "
            f"English text under a '##### UDHR code={ENGLISH} name=English' line"
        )


def language_rows(
    tok: Tokenizer,
    sections: Sequence[Section],
    *,
    name: str,
    workers: int = 1,
    memo: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Per section: tokens, bytes and parity (tokens / English tokens), worst parity first."""
    check_languages(sections)
    counts = [chunk_counts(tok, [s.text]) for s in sections]
    lengths = chunk_lengths(tok, (c for section in counts for c in section), workers=workers, memo=memo)
    rows = []
    for s, section in zip(sections, counts, strict=True):
        rows.append({"tokenizer": name, "code": s.code, "name": s.name, "tokens": _total(section, lengths)})
        rows[-1]["bytes"] = len(s.text.encode("utf-8"))
    english = next(r["tokens"] for r in rows if r["code"] == ENGLISH)
    if english == 0:
        raise ValueError(f"the English section (code={ENGLISH}) is empty; parity is relative to it")
    for row in rows:
        row["parity"] = row["tokens"] / english
    rows.sort(key=lambda r: (-r["parity"], r["code"]))
    return rows


# ----- vocabulary-size sweep ----------------------------------------------------------------


# sizes in one sweep: a plot has a few dozen points (the page's default, powers of two, at most
# 24), and each costs a cut of the vocabulary and a pass over the distinct chunks (~20 ms on
# o200k and 20 KB of text), so a list of every size, 200,000 of them, took over an hour
MAX_SWEEP_SIZES = 100


def check_sweep_sizes(tok: Tokenizer, sizes: Sequence[int], *, name: str) -> None:
    """Sizes must be integers, strictly increasing, from 256 to the tokenizer's rank count."""
    if len(sizes) > MAX_SWEEP_SIZES:
        raise ValueError(
            f"{len(sizes):,} sweep sizes; give at most {MAX_SWEEP_SIZES} (a plot needs a few dozen)"
        )
    top = max(tok.mergeable_ranks.values()) + 1
    for k, v in enumerate(sizes):
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"sweep sizes must be integers, got {v!r}")
        if k and v <= sizes[k - 1]:
            raise ValueError(f"sweep sizes must be strictly increasing: {sizes[k - 1]} then {v}")
        if not 256 <= v <= top:
            raise ValueError(f"sweep size {v} is out of range for {name}: its ranks allow 256 to {top}")
    byte_ranks = [tok.mergeable_ranks[bytes([b])] for b in range(256)]
    if sizes and max(byte_ranks) >= sizes[0]:
        raise ValueError(
            f"sweep size {sizes[0]} would cut a single byte out of {name} (a byte has rank "
            f"{max(byte_ranks)}); use sizes above {max(byte_ranks)}"
        )


def prefix_tokenizer(tok: Tokenizer, vocab_size: int) -> Tokenizer:
    """`tok` cut to its ranks < vocab_size, same split pattern, no special tokens but HF's
    non-special added ones (matched in any text, one token each at every size)."""
    ranks = {token: rank for token, rank in tok.mergeable_ranks.items() if rank < vocab_size}
    return Tokenizer(
        ranks,
        tok.pattern,
        {token: tok.special_tokens[token] for token in tok.always_matched},
        name=f"{tok.name}[:{vocab_size}]",
        preparation=tok.preparation,
        chunk_lookup=tok.chunk_lookup,
        unicode=tok.unicode,
    )


def sweep(
    tok: Tokenizer, texts: str | Iterable[str], sizes: Sequence[int], *, name: str
) -> list[dict[str, Any]]:
    """Total tokens of `texts` at each vocabulary size (see the module docstring)."""
    check_sweep_sizes(tok, sizes, name=name)
    chunks = chunk_counts(tok, texts)  # a prefix splits with the same pattern
    return [
        {"tokenizer": name, "vocab_size": v, "tokens": tokens_in(prefix_tokenizer(tok, v), chunks)}
        for v in sizes
    ]
