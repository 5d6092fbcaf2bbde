"""Count tables: distinct chunks with their counts, in order of first occurrence.

A table is a dict chunk -> count whose order is the order in which each chunk first
occurs in the text (the `first` tie-break of the merge phase reads that order). Tables
of consecutive texts merge in text order (merge_counts), shrink in place (prune_counts,
TableCap), and are saved as gzip'd JSON lines (save_counts, load_counts) so the merge
phase can run later, or on another machine (`train --counts`).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
import zlib
from itertools import islice
from typing import Any

from ._wordstore import MAX_COUNT
from .formats import atomic_writer, named_os_error
from .patterns import NO_SPLIT, PATTERNS, resolve_pattern
from .validate import has_utf8

COUNTS_FORMAT = "bpe-playground-counts"
COUNTS_VERSION = 2  # 2: named patterns split with Unicode 16.0 tables (as tiktoken)


def pattern_key(pattern: str) -> str:
    """What count tables record about their pattern: the regex, or "none"."""
    return NO_SPLIT if pattern == NO_SPLIT else resolve_pattern(pattern)


class TableCap:
    """Keeps a count table at most `max_chunks` long while it is filled: past that, drops the
    chunks seen once so far, then twice, ... until it is half full (half, so the work is
    spread thin: a table is scanned once per max_chunks / 2 new chunks). Chunks that matter
    for BPE are frequent and come back: their counts lose at most `floor` each time they are
    dropped. No cap (None) does nothing."""

    def __init__(self, max_chunks: int | None) -> None:
        if max_chunks is not None and (
            not isinstance(max_chunks, int) or isinstance(max_chunks, bool) or max_chunks < 2
        ):
            raise ValueError(f"max_chunks must be an integer >= 2, got {max_chunks!r}")
        self.max_chunks = max_chunks
        self.reset()

    def reset(self) -> None:
        """For a table counted again from empty."""
        self.dropped = 0  # chunks dropped, all events together
        self.floor = 0  # the highest count dropped

    def __call__(self, counts: dict[str, int]) -> None:
        if self.max_chunks is None or len(counts) <= self.max_chunks:
            return
        t = 0
        while len(counts) > self.max_chunks // 2:
            t += 1
            self.dropped += prune_counts(counts, t + 1)
        self.floor = max(self.floor, t)


def merge_counts(counts: dict[str, int], part: dict[str, int]) -> None:
    """Add the table of the text that follows `counts`' text: its new chunks go last, in its order."""
    if not counts:
        counts.update(part)
        return
    get = counts.get
    for chunk, n in part.items():
        counts[chunk] = get(chunk, 0) + n


def prune_counts(counts: dict[str, int], min_count: int) -> int:
    """Drop chunks seen fewer than `min_count` times, in place (a filtered copy would add a
    second table at the peak); returns how many were dropped. The rest keep their order."""
    rare = [chunk for chunk, n in counts.items() if n < min_count]
    for chunk in rare:
        del counts[chunk]
    return len(rare)


def save_counts(path: str | os.PathLike, counts: dict[str, int], meta: dict[str, Any]) -> None:
    """Write a count table: gzip'd JSON lines, a header object then one [chunk, count] per line.

    Streamed to a temp file beside `path` and renamed: memory stays at one line, not a copy
    of the table."""
    if "pattern" not in meta:
        raise ValueError("count table metadata must name its 'pattern'")
    header = {"format": COUNTS_FORMAT, "version": COUNTS_VERSION, **meta}
    with atomic_writer(path) as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
            text = io.TextIOWrapper(gz, encoding="utf-8", newline="\n")
            text.write(json.dumps(header, ensure_ascii=False) + "\n")
            for chunk, n in counts.items():
                try:
                    text.write(json.dumps([chunk, n], ensure_ascii=False) + "\n")
                except UnicodeEncodeError:  # the temp file is dropped: nothing half-written stays
                    raise ValueError(_surrogate_chunk(chunk)) from None
            text.flush()
            text.detach()


def _surrogate_chunk(chunk: str) -> str:
    lone = next(c for c in chunk if "\ud800" <= c <= "\udfff")
    return (
        f"the chunk {chunk[:40]!r} holds a lone surrogate, U+{ord(lone):04X}, which is not text: no "
        "count table can hold it (and training refuses it); remove or replace such characters in "
        "the corpus and count again"
    )


# characters of a table's header line (a dict of a few statistics, well under 1 KB): read no
# further, so a file whose first line never ends (a gzip bomb) is refused, not held in memory.
MAX_HEADER_CHARS = 1 << 20
# A table is decompressed no further than MAX_EXPANSION times its gzip size (at least
# MIN_EXPANDED_BYTES): real tables expand 3-4x (413 MB of text: 15 MB -> 52 MB), a gzip bomb of
# zeros 1000x, which would fill the memory before a line ended.
MAX_EXPANSION, MIN_EXPANDED_BYTES = 200, 1 << 28
READ_BYTES = 1 << 20  # decompressed at a time


class _TooExpanded(Exception):
    pass


class _Bounded(io.RawIOBase):
    """A stream that raises _TooExpanded once more than `limit` bytes have been read from it."""

    def __init__(self, raw: Any, limit: int) -> None:
        self.raw, self.left = raw, limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer)
        self.left -= n
        if self.left < 0:
            raise _TooExpanded
        return n


def load_counts(path: str | os.PathLike) -> tuple[dict[str, int], dict[str, Any]]:
    """Read a count table written by save_counts: (chunk -> count, metadata)."""
    lineno = 1
    try:
        limit = max(MIN_EXPANDED_BYTES, MAX_EXPANSION * _regular_size(path))
        with (
            gzip.open(path, "rb") as raw,
            io.TextIOWrapper(
                io.BufferedReader(_Bounded(raw, limit), READ_BYTES), encoding="utf-8", errors="surrogatepass"
            ) as f,
        ):
            first = f.readline(MAX_HEADER_CHARS + 1)
            if len(first) > MAX_HEADER_CHARS:
                raise ValueError(
                    f"{path}: the header line is over {MAX_HEADER_CHARS:,} characters: not a count "
                    "table written by `count`; count the corpus again"
                )
            header = _checked_header(_json_line(first, path, 1), path)
            counts: dict[str, int] = {}
            for lineno, line in enumerate(f, start=2):  # lineno names the line in errors
                item = _json_line(line, path, lineno)
                if (
                    not isinstance(item, list)
                    or len(item) != 2
                    or not isinstance(item[0], str)
                    or type(item[1]) is not int
                    or item[1] < 1
                ):
                    raise ValueError(f"{path}: line {lineno} is not a [chunk, count] pair")
                n = counts[item[0]] = counts.get(item[0], 0) + item[1]
                if n >= MAX_COUNT:  # the trainer refused it later, naming no file
                    raise _count_too_big(path, lineno, n)
    except _TooExpanded:
        raise ValueError(
            f"{path}: expands to over {MAX_EXPANSION} times its size after line {lineno} (a gzip bomb?): "
            "not a count table written by `count`; count the corpus again"
        ) from None
    except (gzip.BadGzipFile, EOFError, UnicodeDecodeError, zlib.error) as e:
        # zlib.error: a damaged byte inside the deflate stream (a cut-off one is an EOFError)
        raise ValueError(f"{path}: corrupt count table ({e}); count the corpus again") from None
    except OSError as e:
        raise named_os_error(e, path) from None
    _check_text_chunks(counts, path)
    meta = {k: v for k, v in header.items() if k not in ("format", "version")}
    return counts, meta


def _count_too_big(path: str | os.PathLike, lineno: int, n: int) -> ValueError:
    return ValueError(
        f"{path}: line {lineno}: the count {n} is over 2**63 - 1, the most the trainer holds "
        "(int64), more chunks than any corpus holds: not a table `count` wrote; count the corpus again"
    )


def _regular_size(path: str | os.PathLike) -> int:
    """The size of `path`, a regular file (symlinks followed): a named pipe blocked the load for
    ever waiting for a writer, and a device is no table (/dev/zero reads as a gzip stream of
    nothing); a pipe, once read, is empty when `train` reads the table a second time."""
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{path}: is a directory, not a count table; give the file `count -o` wrote")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(
            f"{path}: not a regular file (a device, pipe or socket); give the count table file "
            "`count -o` wrote (a table on a pipe: save it to a file first)"
        )
    return info.st_size


CHECK_BATCH = 1 << 16  # chunks joined and encoded at once by _check_text_chunks


def _check_text_chunks(counts: dict[str, int], path: str | os.PathLike) -> None:
    """ValueError naming the chunk if one holds a lone surrogate (a JSON escape such as \\ud800):
    not text, so no UTF-8 bytes to train on; `count` never writes one. Checked in C, a batch of
    chunks per encode (~50 ms for 2.4 million chunks)."""
    keys = iter(counts)
    while batch := list(islice(keys, CHECK_BATCH)):
        try:
            "".join(batch).encode("utf-8")
        except UnicodeEncodeError:
            bad = next(c for c in batch if not has_utf8(c))
            raise ValueError(
                f"{path}: the chunk {bad[:40]!r} holds a lone surrogate, which is not text: not a count "
                "table written by `count`; count the corpus again"
            ) from None


def _checked_header(header: Any, path: str | os.PathLike) -> dict[str, Any]:
    """The first line: format, version, the pattern's regex and the name it has (when one)."""
    if not isinstance(header, dict) or header.get("format") != COUNTS_FORMAT:
        raise ValueError(f"{path}: not a count table (no {COUNTS_FORMAT!r} header)")
    if header.get("version") != COUNTS_VERSION:
        raise ValueError(
            f"{path}: count table version {header.get('version')!r} is not supported "
            f"(this version reads {COUNTS_VERSION}); count the corpus again"
        )
    pattern, name = header.get("pattern"), header.get("pattern_name")
    if not isinstance(pattern, str) or not isinstance(name, (str, type(None))):
        raise ValueError(
            f"{path}: the header's 'pattern' (and 'pattern_name') must be strings, as "
            "`count` writes them; count the corpus again"
        )
    # a name that is not the pattern's: training took the name, then said "counted with
    # pattern 'gpt2', not 'gpt2'"
    if name is not None and (name != NO_SPLIT and name not in PATTERNS or pattern_key(name) != pattern):
        raise ValueError(
            f"{path}: the header's pattern_name {name[:40]!r} is not the name of its pattern "
            f"{pattern[:60]!r}; count the corpus again"
        )
    return header


def _json_line(line: str, path: str | os.PathLike, lineno: int) -> Any:
    """One line's JSON; too deep (RecursionError) or a number too long for int() is a ValueError
    naming the line."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as e:
        reason = "nested too deeply" if isinstance(e, RecursionError) else str(e).split(":")[0]
        raise ValueError(f"{path}: line {lineno}: corrupt count table ({reason})") from None
