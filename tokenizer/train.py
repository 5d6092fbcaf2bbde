"""Training: a byte-level BPE tokenizer from a corpus or a count table, exact against minbpe.

train() counts the chunks of the corpus (counting.py) and learns merges from the distinct
chunks with their counts (learn_merges): ids 0..255 are the bytes, merge n makes id 256 + n,
special tokens follow. The merge engine is _heap.py; its docstring argues why it is exact.
Two tie-break rules decide between pairs with the same count: `first` (minbpe: the pair
that occurs first in the current text) and `lexical` (rustbpe: the smallest pair of ids).

The split is chosen by name (`pattern="gpt4"`: a closed set, see split_pattern) or given as
a custom regex (`regex=r"..."`), which is checked before any work (tokenizer.regex_check):
it compiles, captures nothing, cannot match "", and a warning says how much of the text it
would drop. A typo such as pattern="gpt5" is an error, never a literal regex.
"""

from __future__ import annotations

import os
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any

from . import _heap
from ._heap import MergeResult, Trace
from ._wordstore import load_numpy
from .core import Tokenizer
from .counting import count_chunks, load_counts, pattern_key
from .encodings import ENCODING_PATTERN_NAMES
from .patterns import (
    DEFAULT_PATTERN,
    NO_SPLIT,
    PATTERN_NAMES,
    PATTERNS,
    compile_pattern,
    compile_split,
    is_named,
    looks_like_a_name,
)
from .progress import Progress
from .regex_check import MAX_SAMPLE_CHARS, check_split_regex
from .validate import MAX_FILE_SPECIAL_TOKENS, has_utf8, plain_int

TIE_BREAKS = ("first", "lexical")  # minbpe's rule, rustbpe's rule
DEFAULT_TIE_BREAK = "first"  # minbpe's, the reference trainer's
MIN_VOCAB = 256  # the 256 bytes and no merge, as minbpe and rustbpe allow
DEFAULT_MIN_FREQUENCY = 2  # a pair seen once is not merged (rustbpe and HF: 1, minbpe: no limit)
MAX_VOCAB = 0x10FFFF  # the merge engine holds one character per token id


def learn_merges(
    chunk_counts: Mapping[str, int] | Iterable[tuple[str, int]],
    num_merges: int,
    *,
    tie_break: str = DEFAULT_TIE_BREAK,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    progress: Progress | None = None,
    trace: Trace | None = None,
) -> MergeResult:
    """Learn up to `num_merges` merges from distinct chunks with counts, in first-occurrence order."""
    num_merges, min_frequency = plain_int(num_merges), plain_int(min_frequency)
    _check_rule(tie_break, min_frequency)
    if not isinstance(num_merges, int) or not 0 <= num_merges <= MAX_VOCAB - 256:
        raise ValueError(f"num_merges must be an integer from 0 to {MAX_VOCAB - 256}, got {num_merges!r}")
    items = chunk_counts.items() if isinstance(chunk_counts, Mapping) else chunk_counts
    return _heap.learn(
        items,
        num_merges,
        first=tie_break == "first",
        min_frequency=min_frequency,
        progress=progress,
        trace=trace,
    )


def _check_rule(tie_break: str, min_frequency: int) -> None:
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 1:
        raise ValueError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")


def split_pattern(pattern: str | None = None, regex: str | None = None) -> str:
    """The split a training uses: a pattern name, or a custom regex that passed regex_check.

    Names are a closed set: gpt2, gpt4, o200k, none, their aliases (r50k, p50k, cl100k,
    gpt4o) and the reference encodings' names (cl100k_base, ...). For old callers, `pattern`
    may still be a regex (tiktoken's exact pattern strings, or anything that is not a bare
    word): a bare word that is not a name ("gpt5", "GPT4") is a typo and an error.
    """
    if regex is not None:
        if pattern not in (None, DEFAULT_PATTERN):  # the default is no choice
            raise ValueError("give a pattern name (pattern=) or a custom regex (regex=), not both")
        _check_regex(regex)
        return regex
    if pattern is None:
        return DEFAULT_PATTERN
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a pattern name (str), not {type(pattern).__name__}")
    if pattern in PATTERNS or pattern == NO_SPLIT or is_named(pattern):
        return pattern
    if pattern in ENCODING_PATTERN_NAMES:
        return ENCODING_PATTERN_NAMES[pattern]
    if not pattern or looks_like_a_name(pattern):
        raise ValueError(
            f"unknown pattern name {pattern!r}; choose one of {', '.join(PATTERN_NAMES)} (aliases: "
            f"{', '.join(n for n in dict.fromkeys([*PATTERNS, *ENCODING_PATTERN_NAMES]) if n not in PATTERN_NAMES)}), "
            "or give a custom split regex with regex= (CLI: --regex)"
        )
    _check_regex(pattern)
    return pattern


def _check_regex(regex: str) -> None:
    compile_pattern(regex)  # its own message first for what does not compile
    try:
        check_split_regex(regex)
    except ValueError as e:
        raise ValueError(f"invalid split pattern {regex[:60]!r}: {e}") from None


def check_corpus(corpus: Any) -> None:
    """Refuse corpus types that would train on something else (a dict's keys, a folder)."""
    if isinstance(corpus, Mapping) or not isinstance(corpus, (str, os.PathLike, Iterable)):
        raise ValueError(
            f"corpus must be a str (the text), a pathlib.Path or a list of paths (files), or an "
            f"iterable of str documents, not {type(corpus).__name__}"
        )
    paths = (
        [corpus] if isinstance(corpus, os.PathLike) else corpus if isinstance(corpus, (list, tuple)) else []
    )
    for path in paths:
        if isinstance(path, os.PathLike) and Path(path).is_dir():
            raise ValueError(f"{path}: is a directory; give the text files inside it (e.g. {path}/*.txt)")


def coverage_warnings(regex: str, corpus: Any) -> list[str]:
    """regex_check's warnings for the start of a text corpus (the CLI checks files itself)."""
    return check_split_regex(regex, sample=corpus[:MAX_SAMPLE_CHARS]) if isinstance(corpus, str) else []


def _check_parameters(vocab_size, tie_break, min_frequency, special_tokens) -> list[str]:
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise ValueError(f"vocab_size must be an integer, got {vocab_size!r}")
    if not MIN_VOCAB <= vocab_size <= MAX_VOCAB:
        raise ValueError(
            f"vocab_size must be between {MIN_VOCAB} (the 256 bytes, no merge) and {MAX_VOCAB}, got {vocab_size}"
        )
    _check_rule(tie_break, min_frequency)
    return [] if special_tokens is None else _check_special(special_tokens)


def _check_special(special_tokens: Any) -> list[str]:
    """A list (or any iterable but a dict) of distinct non-empty strings, at most as many as a file holds."""
    if isinstance(special_tokens, (str, bytes, Mapping)) or not isinstance(special_tokens, Iterable):
        raise ValueError("special_tokens must be a list of strings (their ids follow the vocabulary)")
    special = list(islice(special_tokens, MAX_FILE_SPECIAL_TOKENS + 1))  # a generator may not end
    if len(special) > MAX_FILE_SPECIAL_TOKENS:
        raise ValueError(
            f"special_tokens: more than {MAX_FILE_SPECIAL_TOKENS:,}, the most a tokenizer file may "
            "have (real tokenizers have a few thousand at most)"
        )
    for token in special:
        if not isinstance(token, str) or not token:
            raise ValueError(f"special tokens must be non-empty strings, got {token!r}")
        if (problem := special_token_problem(token)) is not None:
            raise ValueError(problem)
    dupes = sorted(token for token, n in Counter(special).items() if n > 1)  # count() per token was quadratic
    if dupes:
        raise ValueError(f"special tokens must be unique; repeated: {', '.join(map(repr, dupes))}")
    return special


def special_token_problem(token: str) -> str | None:
    """Why a new special token would break the tokenizer, or None. A token of whitespace alone
    (" ", "\n") is in nearly every text, so every plain encode would refuse the text as holding
    a special token (the server's form checks the same)."""
    if not has_utf8(token):
        at = next(i for i, c in enumerate(token) if 0xD800 <= ord(c) <= 0xDFFF)
        return (
            f"special token {token!r} holds a lone surrogate (U+{ord(token[at]):04X} at {at}): it has no "
            "UTF-8 bytes to decode to; write the character it stands for, or drop it"
        )
    if token.isspace():
        return (
            f"special token {token!r} is only whitespace: nearly every text holds it, so encode would "
            "refuse it as a special token; choose a marker such as '<|pad|>'"
        )
    return None


def train(
    corpus: Any,
    vocab_size: int,
    *,
    pattern: str = DEFAULT_PATTERN,
    regex: str | None = None,
    special_tokens: list[str] | None = None,
    tie_break: str = DEFAULT_TIE_BREAK,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    workers: int | None = None,
    progress: Progress | None = None,
    min_chunk_count: int = 1,
    max_chunks: int | None = None,
    counts: Any = None,
    trace: Trace | None = None,
    name: str = "custom",
) -> Tokenizer:
    """Train a byte-level BPE tokenizer: ids 0..255 are bytes, merges get 256.., specials follow.

    corpus: a str is the text itself; a pathlib.Path or a list of paths names files
    (streamed, never read whole); any other iterable yields str documents. Chunks never
    span documents. counts: instead of a corpus, a count table (path of a file written by
    `save_counts` / `python -m tokenizer count`, or the (counts, meta) pair that
    `count_chunks` returns); its pattern must be `pattern`. max_chunks bounds the count
    table while counting (approximate counts past it; see counting.TableCap).
    tie_break: "first" (minbpe's merges) or "lexical" (rustbpe's). Training stops early,
    and says so in metadata, when the best pair occurs fewer than min_frequency times.
    progress(phase, done, total, rate, eta) is called for phases "count" and "merge";
    trace(step_info) once per merge (see _heap_trace.TraceView.trace_step).
    pattern: a pattern name (default gpt4; see split_pattern); regex: a custom split regex
    instead (checked; a warning names the share of a text corpus it would drop).
    """
    vocab_size, min_frequency, min_chunk_count, max_chunks, workers = map(
        plain_int, (vocab_size, min_frequency, min_chunk_count, max_chunks, workers)
    )
    special = _check_parameters(vocab_size, tie_break, min_frequency, special_tokens)
    pattern = split_pattern(pattern, regex)
    if corpus is not None:
        check_corpus(corpus)
    if not is_named(pattern) and pattern != NO_SPLIT:
        for warning in coverage_warnings(pattern, corpus):
            warnings.warn(warning, stacklevel=2)
    t0 = time.perf_counter()
    if counts is not None:
        if corpus is not None:
            raise ValueError("give either a corpus or counts, not both")
        if max_chunks is not None:
            raise ValueError("max_chunks bounds counting; given counts were counted already")
        chunk_counts, count_stats = _given_counts(counts, pattern, min_chunk_count)
    else:
        chunk_counts, count_stats = count_chunks(
            corpus,
            pattern,
            workers=workers,
            progress=progress,
            min_chunk_count=min_chunk_count,
            max_chunks=max_chunks,
            while_waiting=load_numpy,  # the merge engine's bulk path: imported while workers count
        )
    t1 = time.perf_counter()
    emptied = min_chunk_count > 1 and not chunk_counts
    result = learn_merges(
        _drained(chunk_counts),  # the table is freed once the words are packed
        vocab_size - 256,
        tie_break=tie_break,
        min_frequency=min_frequency,
        progress=progress,
        trace=trace,
    )
    if count_stats.get("chunks") == 0 and result.stop_reason is not None:  # no pair: there is no text
        result.stop_reason = "the corpus is empty: no text to learn merges from"
    elif emptied and result.stop_reason is not None:  # say why, not just that no pair is left
        result.stop_reason = f"min_chunk_count={min_chunk_count} dropped every chunk: none occurs that often"
    seconds = {"count": round(t1 - t0, 3), **result.seconds}
    metadata = {
        "trainer": "heap",
        "stopped_early": result.stop_reason is not None,
        "stop_reason": result.stop_reason,
        "training": {
            "vocab_size": vocab_size,
            "pattern": pattern,
            "tie_break": tie_break,
            "min_frequency": min_frequency,
            "min_chunk_count": min_chunk_count,
            "max_chunks": count_stats.get("max_chunks"),
            "special_tokens": special,
            "workers": count_stats.get("workers", workers),
        },
        "statistics": {
            "documents": count_stats.get("documents"),
            "bytes": count_stats.get("bytes"),
            "chunks": count_stats.get("chunks"),
            "unique_chunks": count_stats.get("unique_chunks"),
            "capped_chunks": count_stats.get("capped_chunks"),
            "merges": len(result.merges),
            "ties": result.ties,
            "pair_recounts": result.recounts,
            "last_merge_count": result.counts[-1] if result.counts else None,
            # each merge's pair count when it was picked: what `diff` shows where two trainings
            # diverge (a tie is two picks of equal count), without the corpus at hand
            "merge_counts": result.counts,
            "seconds": {**seconds, "total": round(time.perf_counter() - t0, 3)},
        },
        "duplicate_tokens": {str(k): v for k, v in result.duplicates.items()},
    }
    return Tokenizer.from_merges(
        result.merges,
        pattern,
        {token: 256 + len(result.merges) + i for i, token in enumerate(special)},
        name=name,
        metadata=metadata,
    )


def _drained(counts: dict[str, int]) -> Iterator[tuple[str, int]]:
    """The items of a dict we own, in order; the dict is emptied after the last one (all at
    once: emptying it item by item, popitem, left its memory too fragmented to return)."""
    yield from counts.items()
    counts.clear()


def _given_counts(counts: Any, pattern: str, min_chunk_count: int) -> tuple[dict[str, int], dict[str, Any]]:
    if isinstance(counts, (str, os.PathLike)):
        chunk_counts, meta = load_counts(counts)
        source = str(counts)
    elif isinstance(counts, tuple) and len(counts) == 2 and isinstance(counts[0], Mapping):
        chunk_counts, meta = dict(counts[0]), dict(counts[1])
        source = "the given counts"
    else:
        raise ValueError("counts must be a count table path or the (counts, meta) pair of count_chunks")
    if meta.get("pattern") != pattern_key(pattern):
        theirs = meta.get("pattern_name") or meta.get("pattern")
        raise ValueError(
            f"{source} were counted with pattern {theirs!r}, not {pattern!r}; count again or train with that pattern"
        )
    _check_chunks_of(pattern, chunk_counts, source)
    if min_chunk_count > 1:
        chunk_counts = {k: v for k, v in chunk_counts.items() if v >= min_chunk_count}
        meta["unique_chunks"] = len(chunk_counts)
    return chunk_counts, meta


def _check_chunks_of(pattern: str, chunk_counts: Mapping[str, int], source: str) -> None:
    r"""ValueError unless every chunk of a given table is one chunk of the pattern: a table edited
    by hand, or counted elsewhere, with "ab cd" under gpt4 let merges cross the space, and "" is
    no chunk at all. A chunk of a named pattern splits alone into itself (their matches look
    ahead a few characters or to the end of a whitespace run, and a chunk's end is where its
    match ended; tests check it on random text), so the check is the split; a custom regex may
    look further (`\w+ (?=\w+ \w+)`: "a " is a chunk only before two more words), so its
    chunks are only checked to be non-empty. ~0.5 us a chunk (2.4 million: about a second)."""
    if "" in chunk_counts:
        raise ValueError(
            f"{source}: holds an empty chunk, which no split makes; count the corpus with `count`"
        )
    if not is_named(pattern):
        return
    findall = compile_split(pattern).findall
    chunks = list(chunk_counts)
    for chunk, parts in zip(chunks, map(findall, chunks), strict=True):
        if len(parts) != 1 or parts[0] != chunk:
            shown = " | ".join(map(repr, parts[:4])) if parts else "nothing"
            raise ValueError(
                f"{source}: the chunk {chunk[:60]!r} is not one chunk of the pattern {pattern[:40]!r} "
                f"(it splits into {shown}); count the corpus with `count`, or split such chunks first"
            )
