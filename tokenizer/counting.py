"""Counting phase: split a corpus into regex chunks and count them.

The merge phase only needs each distinct chunk with its count, in order of first
occurrence (the `first` tie-break rule depends on that order). Files are streamed in
blocks, so memory grows with the number of distinct chunks, not with the corpus; big
inputs are cut into byte ranges counted by worker processes and merged in range order.
The peak is about the final table (filled in place, never copied) plus a few small
partial tables: ranges are at most RANGE_MAX_BYTES and only workers + 1 are in flight.

Each document (a file, or one string of an iterable) is split on its own: chunks never
span two documents. Pattern "none" makes every document a single chunk.

Streaming is exact: a window of text is split, and only chunks followed by at least
HOLD_BACK more chunks are kept; the rest is split again with the next block appended.
A split pattern decides a chunk by looking at most a couple of chunks ahead (true of
gpt2, gpt4, o200k: their lookaheads and `$` see one character past a run), so those
kept chunks are what splitting the whole document gives. Worker ranges start at a
newline that lies between two ASCII non-space characters, and the worker before
checks that its own chunking has a boundary exactly there; if not, that file is
recounted serially.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import sys
import time
from collections import _count_elements as _tally  # Counter.update's C loop, on a plain dict
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

from .patterns import compile_pattern, resolve_pattern

Progress = Callable[[str, int, int, float, "float | None"], None]

BLOCK_SIZE = 1 << 18  # bytes read per block (its list of chunks takes ~15x that in memory)
HOLD_BACK = 3  # chunks at a window's end that may still change when more text follows
PARALLEL_MIN_BYTES = 1 << 23  # below this, worker start-up costs more than it saves
RANGE_MIN_BYTES = 1 << 20  # worker ranges are at least this big
RANGE_MAX_BYTES = 1 << 22  # and at most this: a range's table is held by a worker, then by main
COUNTS_FORMAT = "bpe-playground-counts"
COUNTS_VERSION = 2  # 2: named patterns split with Unicode 16.0 tables (as tiktoken)
NO_SPLIT = "none"


def pattern_key(pattern: str) -> str:
    """What count tables record about their pattern: the regex, or "none"."""
    return NO_SPLIT if pattern == NO_SPLIT else resolve_pattern(pattern)


def compile_splitter(pattern: str):
    """Compile a split pattern for counting: ValueError (not regex.error) if it is unusable."""
    try:
        regex = compile_pattern(pattern)
    except Exception as e:  # regex.error / re.error are not ValueErrors
        if isinstance(e, ValueError) and "pattern" in str(e):
            raise
        raise ValueError(f"invalid split pattern {pattern!r}: {e}") from None
    if getattr(regex, "groups", 0) or getattr(regex, "_groups", 0):
        raise ValueError(f"split pattern {pattern!r} has capturing groups; use non-capturing (?:...) groups")
    return regex


# ----- corpus forms ------------------------------------------------------------------------


def corpus_documents(corpus: Any) -> tuple[list[Path], Iterable[str] | None]:
    """Classify a corpus: (files, None) or ([], strings).

    A `str` is text, never a path: pass `pathlib.Path` (or a list of them) for files.
    """
    if isinstance(corpus, str):
        return [], [corpus]
    if isinstance(corpus, os.PathLike):
        return [_existing_file(corpus)], None
    if isinstance(corpus, (bytes, bytearray)):
        raise ValueError("corpus is bytes; decode it to str, or pass a pathlib.Path to a file")
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, os.PathLike) for c in corpus):
        return [_existing_file(c) for c in corpus], None
    if isinstance(corpus, Iterable):
        return [], corpus
    raise ValueError(
        f"corpus must be a str, a pathlib.Path, a list of paths or an iterable of str, not {type(corpus).__name__}"
    )


def _existing_file(path: os.PathLike) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"corpus file not found: {path}")
    return path


# ----- splitting text ----------------------------------------------------------------------


def _check_text(text: Any, where: str) -> str:
    if not isinstance(text, str):
        raise ValueError(f"{where}: expected str, got {type(text).__name__}")
    return text


def _count_text(text: str, regex, counts: dict[str, int]) -> int:
    """Count the chunks of one whole document; returns the number of chunks."""
    if regex is None:
        if text:
            counts[text] = counts.get(text, 0) + 1
            return 1
        return 0
    chunks = regex.findall(text)
    _tally(counts, chunks)
    return len(chunks)


def _split_window(regex, window: str, final: bool) -> tuple[list[str], int]:
    """Chunks of `window` that more text cannot change, and where the unsettled rest begins."""
    chunks = regex.findall(window)
    if final:
        return chunks, len(window)
    if len(chunks) <= HOLD_BACK:
        return [], 0  # wait for more text
    if sum(map(len, chunks)) == len(window):  # the chunks tile the window: the common case
        rest = len(window) - sum(map(len, chunks[-HOLD_BACK:]))
        del chunks[-HOLD_BACK:]
        return chunks, rest
    spans = chunk_spans(regex, window)
    if spans is None:
        return [], 0  # cannot locate the chunks: wait for the end of the document
    del spans[-HOLD_BACK:]
    return [window[a:b] for a, b in spans], spans[-1][1]


def chunk_spans(regex, text: str) -> list[tuple[int, int]] | None:
    """(start, end) of each chunk; None when the pattern skips text and cannot say where."""
    chunks = regex.findall(text)
    if sum(map(len, chunks)) == len(text):  # the chunks tile the text
        ends = list(accumulate(map(len, chunks)))
        return list(zip([0, *ends[:-1]], ends, strict=True))
    if hasattr(regex, "finditer"):
        return [m.span() for m in regex.finditer(text)]
    return None


def _utf8_cut(data: bytes) -> int:
    """Largest prefix length of `data` that does not end inside a UTF-8 sequence."""
    j = len(data) - 1
    while j >= 0 and len(data) - j <= 3 and data[j] & 0xC0 == 0x80:
        j -= 1
    if j >= 0 and data[j] >= 0xC0:
        need = 2 if data[j] < 0xE0 else 3 if data[j] < 0xF0 else 4
        if j + need > len(data):
            return j
    return len(data)


def decoded_blocks(
    path: Path, start: int, end: int, block_size: int, trim: bool = False
) -> Iterator[tuple[str, int]]:
    """Decode bytes [start, end) of a file block by block: yields (text, bytes consumed).

    trim: `end` may fall inside a character (a look-ahead read); stop before it.
    """
    with open(path, "rb") as f:
        f.seek(start)
        pos, pending = start, b""
        while pos < end:
            want = min(block_size, end - pos - len(pending))
            data = f.read(want) if want > 0 else b""
            at_end = len(data) < want or pos + len(pending) + len(data) >= end
            data = pending + data
            cut = len(data) if at_end and not trim else _utf8_cut(data)
            try:
                text = data[:cut].decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}: not valid UTF-8 at byte offset {pos + e.start}") from None
            pending = data[cut:]
            pos += cut
            yield text, cut
            if at_end:
                return


class CutMismatch(Exception):
    """A worker range did not start at a chunk boundary (pattern looks too far ahead)."""


def count_range(
    path: Path,
    start: int,
    end: int,
    pattern: str,
    block_size: int = BLOCK_SIZE,
    report: Callable[[int], None] | None = None,
    counts: dict[str, int] | None = None,
    after_block: Callable[[dict[str, int]], None] | None = None,
) -> tuple[dict[str, int], int]:
    """Count chunks of bytes [start, end) of a file whose chunking restarts at `start`.

    When `end` is not the end of the file, the chunking must have a boundary at `end`;
    text after it is read only to settle the last chunks. Counts are added to `counts`
    (new chunks after its keys) when given, so a serial caller needs no second table;
    after_block(counts) runs after each block (the serial caller's table cap).
    """
    regex = compile_splitter(pattern)
    size = path.stat().st_size
    counts = {} if counts is None else counts
    n_chunks = 0
    window = ""
    for text, consumed in decoded_blocks(path, start, end, block_size):
        window += text
        if report is not None:
            report(consumed)
        chunks, rest = _split_window(regex, window, final=False)
        _tally(counts, chunks)
        n_chunks += len(chunks)
        window = window[rest:]
        if after_block is not None:
            after_block(counts)
    if end >= size:
        chunks = regex.findall(window)
        _tally(counts, chunks)
        return counts, n_chunks + len(chunks)
    # Settle the tail: read past `end` until the chunks up to `end` are decided.
    boundary, extra = len(window), 1 << 16
    while True:
        stop = min(size, end + extra)
        text = window + "".join(t for t, _ in decoded_blocks(path, end, stop, block_size, trim=stop < size))
        spans = chunk_spans(regex, text)
        if spans is None:
            raise CutMismatch(f"{path}: cannot locate chunks of this pattern; count serially")
        if stop < size:
            del spans[-HOLD_BACK:]
        if stop >= size or (spans and spans[-1][1] >= boundary):
            break
        extra *= 4
    for a, b in spans:
        if a >= boundary:
            break
        if b > boundary:
            raise CutMismatch(f"{path}: a chunk spans byte {end}")
        chunk = text[a:b]
        counts[chunk] = counts.get(chunk, 0) + 1
        n_chunks += 1
    return counts, n_chunks


def range_cuts(path: Path, parts: int) -> list[int]:
    """Byte offsets that split a file into about `parts` ranges at newline cut points."""
    size = path.stat().st_size
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, parts):
            target = max(size * k // parts, cuts[-1] + 1)
            cut = _next_cut(f, max(target - 1, 0), size * (k + 1) // parts)
            if cuts[-1] < cut < size:
                cuts.append(cut)
    cuts.append(size)
    return cuts


def _next_cut(f, pos: int, stop: int, probe: int = 1 << 20) -> int:
    """The first cut point after `pos` in one probe, or in more up to about `stop`; -1 if none.

    Scanning on past one probe matters for text with few cut points (CJK, verse): a skipped
    cut makes a range, and so a worker's partial table, several times the planned size."""
    while True:
        f.seek(pos)
        data = f.read(probe)
        at = find_cut(data)
        if at >= 0:
            return pos + at
        pos += probe - 2  # find_cut needs a byte either side of a newline: overlap by two
        if len(data) < probe or pos >= stop:
            return -1


def find_cut(data: bytes) -> int:
    """Index just after a newline preceded by a visible ASCII character and followed by a letter."""
    i = data.find(b"\n", 1)
    while 0 < i < len(data) - 1:
        before, after = data[i - 1], data[i + 1]
        if 0x21 <= before <= 0x7E and (0x41 <= after <= 0x5A or 0x61 <= after <= 0x7A):
            return i + 1
        i = data.find(b"\n", i + 1)
    return -1


def _worker_count(args: tuple[str, int, int, str]) -> tuple[dict[str, int], int, int] | None:
    path, start, end, pattern = args
    try:
        counts, n = count_range(Path(path), start, end, pattern)
    except CutMismatch:
        return None
    return counts, n, end - start


# ----- the counting phase --------------------------------------------------------------------


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def count_chunks(
    corpus: Any,
    pattern: str = "gpt4",
    *,
    workers: int | None = None,
    progress: Progress | None = None,
    min_chunk_count: int = 1,
    max_chunks: int | None = None,
) -> tuple[dict[str, int], dict[str, Any]]:
    """Count the chunks of a corpus: (chunk -> count in first-occurrence order, statistics).

    `corpus`: a str (the text), a pathlib.Path or list of paths (files, streamed), or an
    iterable of str (each one a document). `workers`: processes for files (default: all
    cores for inputs over 8 MB; 1 = serial). `min_chunk_count` drops rarer chunks once all
    are counted (exact). `max_chunks` bounds the table while counting: whenever it holds more,
    the rarest chunks so far are dropped (see TableCap), so memory stops growing with the
    corpus, but counts of chunks dropped and seen again are low: an approximation.
    """
    if not isinstance(min_chunk_count, int) or min_chunk_count < 1:
        raise ValueError(f"min_chunk_count must be an integer >= 1, got {min_chunk_count!r}")
    cap = TableCap(max_chunks)
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    regex = None if pattern == NO_SPLIT else compile_splitter(pattern)
    t0 = time.perf_counter()
    files, texts = corpus_documents(corpus)
    counts: dict[str, int] = {}  # the table returned: filled in text order, never copied
    stats: dict[str, Any] = {"documents": 0, "bytes": 0, "chunks": 0}
    if texts is not None:  # strings are in memory already: counted here, in order
        stats["workers"] = 1
        tick = Ticker("count", None, progress)
        for i, text in enumerate(texts):
            text = _check_text(text, f"corpus document {i}")
            stats["documents"] += 1
            stats["chunks"] += _count_text(text, regex, counts)
            stats["bytes"] += len(text.encode("utf-8", "surrogatepass"))
            cap(counts)
            tick.add(1)
        tick.done()
    else:
        _count_files(files, pattern, regex, counts, stats, workers, progress, cap)
    counts.pop("", None)  # a pattern that matches the empty string adds nothing to train on
    if min_chunk_count > 1:
        stats["pruned_chunks"] = prune_counts(counts, min_chunk_count)
    stats["unique_chunks"] = len(counts)
    stats["pattern"] = pattern_key(pattern)
    stats["min_chunk_count"] = min_chunk_count
    if max_chunks is not None:
        stats.update(max_chunks=max_chunks, capped_chunks=cap.dropped, cap_floor=cap.floor)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    return counts, stats


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


def _count_files(files, pattern, regex, counts, stats, workers, progress, cap) -> None:
    total = sum(p.stat().st_size for p in files)
    stats["documents"] = len(files)
    stats["bytes"] = total
    tick = Ticker("count", total, progress)
    if regex is None:  # one chunk per file: it has to be read whole
        for path in files:
            text = "".join(t for t, _ in decoded_blocks(path, 0, path.stat().st_size, BLOCK_SIZE))
            stats["chunks"] += _count_text(text, None, counts)
            cap(counts)
            tick.add(path.stat().st_size)
        tick.done()
        return
    if workers is None:
        workers = default_workers() if total >= PARALLEL_MIN_BYTES else 1
    stats["workers"] = workers
    if workers > 1:
        try:
            _count_files_parallel(files, pattern, counts, stats, workers, tick, cap)
            tick.done()
            return
        except (ImportError, NotImplementedError, OSError):
            counts.clear()  # no processes here (Pyodide): count serially
            cap.reset()
            stats["chunks"] = 0
            stats["workers"] = 1
            tick.reset()
    for path in files:
        _, n = count_range(
            path, 0, path.stat().st_size, pattern, report=tick.add, counts=counts, after_block=cap
        )
        stats["chunks"] += n
    tick.done()


def _count_files_parallel(files, pattern, counts, stats, workers, tick, cap) -> None:
    from concurrent.futures import ProcessPoolExecutor

    total = max(stats["bytes"], 1)
    jobs = []
    for path in files:
        size = path.stat().st_size
        parts = max(round(size * workers * 4 / total), -(-size // RANGE_MAX_BYTES))
        parts = max(1, min(parts, size // RANGE_MIN_BYTES))
        cuts = range_cuts(path, parts) if size else [0, 0]
        jobs.extend((str(path), a, b, pattern) for a, b in zip(cuts, cuts[1:], strict=False))
    failed: set[str] = set()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # merged in range order, which keeps first occurrences
        for job, result in zip(jobs, _in_order(pool, _worker_count, jobs, workers + 1), strict=True):
            if result is None:
                failed.add(job[0])
            if job[0] in failed:
                continue
            part, n, nbytes = result
            merge_counts(counts, part)
            part.clear()  # frees its table now, not after the next range arrives
            cap(counts)
            stats["chunks"] += n
            tick.add(nbytes)
    if failed:  # a cut was not a chunk boundary: recount all files serially (keeps the order)
        stats["serial_fallback"] = sorted(failed)
        counts.clear()
        cap.reset()
        stats["chunks"] = 0
        for path in files:
            _, n = count_range(path, 0, path.stat().st_size, pattern, counts=counts, after_block=cap)
            stats["chunks"] += n


def _in_order(pool, fn: Callable, jobs: list, ahead: int) -> Iterator:
    """pool.map with at most `ahead` jobs submitted and not yet taken: finished partial
    tables wait here only behind a slower earlier range, never the whole input's worth."""
    pending: deque = deque()
    for job in jobs:
        pending.append(pool.submit(fn, job))
        if len(pending) >= ahead:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


class Ticker:
    """Calls progress(phase, done, total, rate, eta) at most ~10 times a second."""

    def __init__(self, phase: str, total: int | None, progress: Progress | None) -> None:
        self.phase, self.total, self.progress = phase, total, progress
        self.reset()

    def reset(self) -> None:
        self.done_units = 0
        self.start = self.last = time.perf_counter()

    def add(self, n: int) -> None:
        self.done_units += n
        if self.progress is not None:
            now = time.perf_counter()
            if now - self.last >= 0.1:
                self.last = now
                self._emit(now)

    def done(self) -> None:
        if self.progress is not None:
            if self.total is None:
                self.total = self.done_units
            self._emit(time.perf_counter())

    def _emit(self, now: float) -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done_units / elapsed
        total = self.total if self.total is not None else self.done_units
        eta = (total - self.done_units) / rate if self.total is not None and rate > 0 else None
        self.progress(self.phase, self.done_units, total, rate, eta)


# ----- count tables on disk ------------------------------------------------------------------


def save_counts(path: str | os.PathLike, counts: dict[str, int], meta: dict[str, Any]) -> None:
    """Write a count table: gzip'd JSON lines, a header object then one [chunk, count] per line.

    Streamed to a temp file beside `path` and renamed: memory stays at one line, not a copy
    of the table (a 1M-chunk table took +126 MB built in memory)."""
    import tempfile

    from .formats import _UMASK

    if "pattern" not in meta:
        raise ValueError("count table metadata must name its 'pattern'")
    header = {"format": COUNTS_FORMAT, "version": COUNTS_VERSION, **meta}
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                text = io.TextIOWrapper(gz, encoding="utf-8", errors="surrogatepass", newline="\n")
                text.write(json.dumps(header, ensure_ascii=False) + "\n")
                for chunk, n in counts.items():
                    text.write(json.dumps([chunk, n], ensure_ascii=False) + "\n")
                text.flush()
                text.detach()
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def load_counts(path: str | os.PathLike) -> tuple[dict[str, int], dict[str, Any]]:
    """Read a count table written by save_counts: (chunk -> count, metadata)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="surrogatepass") as f:
            header = json.loads(f.readline())
            if not isinstance(header, dict) or header.get("format") != COUNTS_FORMAT:
                raise ValueError(f"{path}: not a count table (no {COUNTS_FORMAT!r} header)")
            if header.get("version") != COUNTS_VERSION:
                raise ValueError(
                    f"{path}: count table version {header.get('version')!r} is not supported "
                    f"(this version reads {COUNTS_VERSION}); count the corpus again"
                )
            counts: dict[str, int] = {}
            for lineno, line in enumerate(f, start=2):
                item = json.loads(line)
                if (
                    not isinstance(item, list)
                    or len(item) != 2
                    or not isinstance(item[0], str)
                    or not isinstance(item[1], int)
                    or item[1] < 1
                ):
                    raise ValueError(f"{path}: line {lineno} is not a [chunk, count] pair")
                counts[item[0]] = counts.get(item[0], 0) + item[1]
    except (gzip.BadGzipFile, EOFError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: corrupt count table ({e})") from None
    meta = {k: v for k, v in header.items() if k not in ("format", "version")}
    return counts, meta


# ----- command line --------------------------------------------------------------------------


def cmd_count(args: argparse.Namespace) -> int:
    from .distributed import count_with_engine  # imports Dask only for --engine dask
    from .train import cli_progress

    pattern = args.pattern or "gpt4"
    with cli_progress(args.quiet) as progress:
        counts, stats = count_with_engine(args, args.files, pattern, progress=progress)
    stats["pattern_name"] = pattern if pattern in ("none", *_pattern_names()) else None
    save_counts(args.output, counts, stats)
    print(
        f"{stats['bytes']:,} bytes, {stats['chunks']:,} chunks, {stats['unique_chunks']:,} unique "
        f"-> {args.output} ({stats['seconds']:.1f} s)",
        file=sys.stderr,
    )
    return 0


def _pattern_names() -> tuple[str, ...]:
    from .patterns import PATTERNS

    return tuple(PATTERNS)


def add_subcommands(subparsers) -> None:
    from .distributed import add_count_engine_arguments

    p = subparsers.add_parser("count", help="count the regex chunks of files into a count table")
    p.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files, or quoted globs")
    p.add_argument("--pattern", "-p", help="gpt2, gpt4 (default), o200k, none, or a regex")
    p.add_argument("--workers", "-j", type=int, help="processes (default: all cores for big inputs)")
    p.add_argument("--min-chunk-count", type=int, default=1, help="drop chunks seen fewer times")
    p.add_argument(
        "--max-chunks", type=int, metavar="N", help="bound the table to N chunks (approximate counts)"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("-o", "--output", required=True, help="count table to write (gzip'd JSON lines)")
    add_count_engine_arguments(p)
    p.set_defaults(func=cmd_count)
