"""Counting phase: split a corpus into regex chunks and count them.

The merge phase only needs each distinct chunk with its count, in order of first
occurrence (the `first` tie-break rule depends on that order): a count table (tables.py).
Files are streamed (streaming.py), so memory grows with the number of distinct chunks, not
with the corpus; big inputs are cut into byte ranges counted by worker processes and merged
in range order. The peak is about the final table (filled in place, never copied) plus a
few small partial tables: ranges are at most RANGE_MAX_BYTES and only workers + 1 are in
flight. count_files(engine="dask") counts on a Dask cluster instead (distributed.py).

Each document (a file, or one string of an iterable) is split on its own: chunks never
span two documents. Pattern "none" makes every document a single chunk.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections import _count_elements as _tally  # Counter.update's C loop, on a plain dict
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .patterns import DEFAULT_PATTERN, NO_SPLIT
from .progress import Progress, Ticker
from .streaming import (
    BLOCK_SIZE,
    HOLD_BACK,
    RANGE_MIN_BYTES,
    CutMismatch,
    check_corpus_file,
    check_workers,
    chunk_spans,
    compile_splitter,
    count_range,
    decoded_blocks,
    default_workers,
    expand_inputs,
    find_cut,
    range_cuts,
    streams_exactly,
)
from .tables import (
    COUNTS_FORMAT,
    COUNTS_VERSION,
    TableCap,
    load_counts,
    merge_counts,
    pattern_key,
    prune_counts,
    save_counts,
)
from .validate import plain_int

__all__ = [  # this module's own API, and the pieces it is built from, importable from here
    "BLOCK_SIZE",
    "COUNTS_FORMAT",
    "COUNTS_VERSION",
    "COUNT_ENGINES",
    "HOLD_BACK",
    "PARALLEL_MIN_BYTES",
    "RANGE_MAX_BYTES",
    "RANGE_MIN_BYTES",
    "CutMismatch",
    "Progress",
    "TableCap",
    "Ticker",
    "chunk_spans",
    "compile_splitter",
    "corpus_documents",
    "count_chunks",
    "count_files",
    "count_range",
    "decoded_blocks",
    "default_workers",
    "expand_inputs",
    "find_cut",
    "load_counts",
    "merge_counts",
    "pattern_key",
    "prune_counts",
    "range_cuts",
    "save_counts",
]

COUNT_ENGINES = ("local", "dask")  # where count_files counts: here, or on a Dask cluster
PARALLEL_MIN_BYTES = 1 << 23  # below this, worker start-up costs more than it saves
RANGE_MAX_BYTES = 1 << 22  # a range's table is held by a worker, then by main: keep it small


# ----- corpus forms ------------------------------------------------------------------------


def corpus_documents(corpus: Any) -> tuple[list[Path], Iterable[str] | None]:
    """Classify a corpus: (files, None) or ([], strings).

    A `str` is text, never a path: pass `pathlib.Path` (or a list of them) for files. When
    the strs all name files, a warning says so (file_name_warning).
    """
    warning = file_name_warning(corpus)
    if warning:
        _warn_caller(warning)
    if isinstance(corpus, str):
        return [], [corpus]
    if isinstance(corpus, os.PathLike):
        return [_existing_file(corpus)], None
    if isinstance(corpus, (bytes, bytearray)):
        raise ValueError("corpus is bytes; decode it to str, or pass a pathlib.Path to a file")
    if isinstance(corpus, (set, frozenset)):  # first occurrences (and so `first` merges) need an order
        raise ValueError(
            "corpus is a set, whose order is arbitrary: the count table and minbpe's "
            "tie rule follow the order of the texts; pass a list"
        )
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, os.PathLike) for c in corpus):
        return [_existing_file(c) for c in corpus], None
    if isinstance(corpus, Iterable):
        return [], corpus
    raise ValueError(
        f"corpus must be a str, a pathlib.Path, a list of paths or an iterable of str, not {type(corpus).__name__}"
    )


FILE_NAME_MAX_CHARS = 4096  # PATH_MAX on Linux: a longer str cannot name a file
FILE_NAMES_CHECKED = 16  # items of a list looked at (a stat each): a long list costs no more


def file_name_warning(corpus: Any) -> str | None:
    """A warning when a text corpus looks like file names: `train("corpus.txt", ...)` reads
    the str as the text itself and would learn the characters of the name, which is never what
    was meant when a file of that name exists. A str, or a list or tuple of them, whose every
    item checked (the first FILE_NAMES_CHECKED) is one line naming an existing file."""
    if isinstance(corpus, str):
        names = [corpus]
    elif isinstance(corpus, (list, tuple)) and corpus:
        names = list(corpus[:FILE_NAMES_CHECKED])
    else:
        return None
    if not all(isinstance(name, str) and _names_file(name) for name in names):
        return None
    if isinstance(corpus, str):
        return (
            f"the corpus str {corpus!r} names a file, but a str is read as the text itself: this "
            f"learns the characters of the name, not the file. To read the file, pass "
            f"pathlib.Path({corpus!r})."
        )
    return (
        f"the corpus's strs name files ({names[0]!r}, ...), but each str is read as a text itself: "
        f"this learns the characters of the names, not the files. To read the files, pass "
        f"pathlib.Path objects (e.g. [Path(name) for name in names])."
    )


def _names_file(name: str) -> bool:
    if not 0 < len(name) <= FILE_NAME_MAX_CHARS or "\n" in name:
        return False
    return os.path.isfile(name)  # False for a name with NUL, or one the system refuses


def _warn_caller(message: str) -> None:
    """warnings.warn pointing at the first caller outside this package (what Python 3.12's
    skip_file_prefixes does), so train() and count_chunks() both name the user's line."""
    package = os.path.dirname(__file__) + os.sep
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(package):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, stacklevel=level)


def _existing_file(path: os.PathLike) -> Path:
    return check_corpus_file(Path(path))


def _check_text(text: Any, where: str) -> str:
    if isinstance(text, os.PathLike):  # in a list with something else: read as documents
        raise ValueError(
            f"{where} is a path among items that are not: give a list of pathlib.Path (files, "
            "each item a Path) or of str (the texts themselves), not a mix"
        )
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


def _worker_count(args: tuple[str, int, int, str, str | None]) -> tuple[dict[str, int], int, int] | None:
    path, start, end, pattern, unicode = args
    try:
        counts, n = count_range(Path(path), start, end, pattern, unicode=unicode)
    except CutMismatch:
        return None
    return counts, n, end - start


# ----- the counting phase --------------------------------------------------------------------


def count_chunks(
    corpus: Any,
    pattern: str = DEFAULT_PATTERN,
    *,
    workers: int | None = None,
    progress: Progress | None = None,
    min_chunk_count: int = 1,
    max_chunks: int | None = None,
    while_waiting: Callable[[], None] | None = None,
    unicode: str | None = None,
) -> tuple[dict[str, int], dict[str, Any]]:
    """Count the chunks of a corpus: (chunk -> count in first-occurrence order, statistics).

    `corpus`: a str (the text), a pathlib.Path or list of paths (files, streamed), or an
    iterable of str (each one a document). `workers`: processes for files (default: all
    cores for inputs over 8 MB; 1 = serial). `min_chunk_count` drops rarer chunks once all
    are counted (exact). `max_chunks` bounds the table while counting: whenever it holds more,
    the rarest chunks so far are dropped (see TableCap), so memory stops growing with the
    corpus, but counts of chunks dropped and seen again are low: an approximation.
    `while_waiting()` runs once in this process while worker processes count, if any do
    (the trainer imports numpy then). `unicode`: the pattern's Unicode tables, as
    `patterns.compile_pattern` takes them (a tokenizer's own: `Tokenizer.unicode`).
    """
    min_chunk_count, max_chunks, workers = map(plain_int, (min_chunk_count, max_chunks, workers))
    if not isinstance(min_chunk_count, int) or isinstance(min_chunk_count, bool) or min_chunk_count < 1:
        raise ValueError(f"min_chunk_count must be an integer >= 1, got {min_chunk_count!r}")
    cap = TableCap(max_chunks)
    check_workers(workers)
    regex = None if pattern == NO_SPLIT else compile_splitter(pattern, unicode)
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
        _count_files(files, pattern, regex, counts, stats, workers, progress, cap, while_waiting, unicode)
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


def count_files(
    files: Iterable[str | os.PathLike] | str | os.PathLike,
    pattern: str = DEFAULT_PATTERN,
    *,
    engine: str = "local",
    scheduler: Any = None,
    workers: int | None = None,
    max_chunks: int | None = None,
    min_chunk_count: int = 1,
    progress: Progress | None = None,
) -> tuple[dict[str, int], dict[str, Any]]:
    """Count the chunks of files named by paths or glob patterns: (chunk -> count, statistics).

    engine "local": processes on this machine (count_chunks); "dask": tasks on a Dask cluster
    at `scheduler` (an address such as tcp://HOST:8786, a `distributed.Client`, or None for a
    local Dask cluster), see distributed.count_chunks_dask. Both give the same table, except
    with max_chunks (each caps its own tables)."""
    if engine not in COUNT_ENGINES:
        raise ValueError(f"engine must be one of {', '.join(COUNT_ENGINES)}, got {engine!r}")
    if engine == "local":
        if scheduler is not None:
            raise ValueError("a scheduler is for engine='dask'; local counting takes workers")
        return count_chunks(
            expand_inputs(files),
            pattern,
            workers=workers,
            progress=progress,
            min_chunk_count=min_chunk_count,
            max_chunks=max_chunks,
        )
    from .distributed import count_chunks_dask  # imports Dask only when asked for

    return count_chunks_dask(
        files,
        pattern,
        scheduler,
        min_chunk_count=min_chunk_count,
        progress=progress,
        workers=workers,
        max_chunks=max_chunks,
    )


def _count_files(
    files, pattern, regex, counts, stats, workers, progress, cap, while_waiting=None, unicode=None
) -> None:
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
            _count_files_parallel(files, pattern, counts, stats, workers, tick, cap, while_waiting, unicode)
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
            path,
            0,
            path.stat().st_size,
            pattern,
            report=tick.add,
            counts=counts,
            after_block=cap,
            unicode=unicode,
        )
        stats["chunks"] += n
    tick.done()


def _count_files_parallel(
    files, pattern, counts, stats, workers, tick, cap, while_waiting=None, unicode=None
) -> None:
    from concurrent.futures import ProcessPoolExecutor

    total = max(stats["bytes"], 1)
    jobs = []
    for path in files:
        size = path.stat().st_size
        parts = max(round(size * workers * 4 / total), -(-size // RANGE_MAX_BYTES))
        parts = max(1, min(parts, size // RANGE_MIN_BYTES)) if streams_exactly(pattern) else 1
        cuts = range_cuts(path, parts) if size else [0, 0]
        jobs.extend((str(path), a, b, pattern, unicode) for a, b in zip(cuts, cuts[1:], strict=False))
    failed: set[str] = set()
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:  # no idle processes
        # merged in range order, which keeps first occurrences
        results = _in_order(pool, _worker_count, jobs, workers + 1, while_waiting)
        for job, result in zip(jobs, results, strict=True):
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
            _, n = count_range(
                path, 0, path.stat().st_size, pattern, counts=counts, after_block=cap, unicode=unicode
            )
            stats["chunks"] += n


def _in_order(pool, fn: Callable, jobs: list, ahead: int, while_waiting: Callable | None = None) -> Iterator:
    """pool.map with at most `ahead` jobs submitted and not yet taken: finished partial
    tables wait here only behind a slower earlier range, never the whole input's worth.
    while_waiting() runs once, when the first jobs are submitted (the workers are busy)."""
    pending: deque = deque()
    for job in jobs:
        pending.append(pool.submit(fn, job))
        if while_waiting is not None and len(pending) == min(ahead, len(jobs)):
            while_waiting()
            while_waiting = None
        if len(pending) >= ahead:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()
