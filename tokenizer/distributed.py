"""Counting phase on a Dask cluster: the same count table as local counting, from many machines.

Counting is embarrassingly parallel and its result (distinct chunks with counts) is small
next to the corpus, so it is the part worth distributing; the merge phase then runs on one
machine from the table (`train --counts`). Files are cut into byte ranges exactly as local
parallel counting cuts them (streaming.py's `range_cuts` / `count_range`); each range is
counted by a task on a worker, and the partial tables are merged on the workers in a tree
of runs of consecutive ranges (4 at a time, in text order), so no task holds more than its
own subtree's table and the root is exactly the table of the whole text:

    merge(A, B) = A's chunks in A's order, then B's new chunks in B's order

which is the first-occurrence order of the text A|B, and merge is associative. So the
result equals serial counting: same chunks, same counts, same dict order (the `first`
tie-break depends on it).

Never silently wrong: every task checks that its worker sees the same file (size and a
fingerprint of its first and last bytes) and the same split pattern as the client; every
partial table carries the byte spans it covers and the bytes it actually decoded, and the
client checks that the spans tile every file exactly once, in order. A worker that dies
mid-task is retried by Dask (`distributed.scheduler.allowed-failures`); past that the call
fails with a clear error and no table.

Workers read the files themselves: every worker must see every input at the same path
(a shared file system), and have this package installed. See docs/CLUSTER.md.

Dask is an optional extra (`pip install .[dask]`): it is imported only inside the calls
that need it, and nothing in the core or the browser imports this module.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import socket
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .patterns import DEFAULT_PATTERN, NO_SPLIT
from .progress import Progress, Ticker
from .streaming import (
    BLOCK_SIZE,
    RANGE_MIN_BYTES,
    CutMismatch,
    check_workers,
    compile_splitter,
    count_range,
    decoded_blocks,
    default_workers,
    expand_inputs,
    range_cuts,
    streams_exactly,
)
from .tables import TableCap, merge_counts, pattern_key, prune_counts
from .validate import is_integer, plain_int

REDUCE_FAN_IN = 4  # partial tables merged per reduction task
RANGE_MAX_BYTES = 64 << 20  # a bigger range only makes a bigger partial table on one worker
RANGES_PER_WORKER = 4  # enough ranges that a slow worker does not hold everyone up
FINGERPRINT_BYTES = 1 << 16  # hashed at each end of a file to tell two files at one path apart
CONNECT_TIMEOUT_S = 30  # to reach a scheduler; its handshake must come within twice that in all
WORKER_WAIT_S = 60  # for a first worker to join it


class DistributedCountError(ValueError):
    """The cluster could not produce a complete, checked count table (a ValueError, so the CLI
    prints it as an error message rather than a traceback)."""


def import_distributed():
    """Dask's distributed scheduler, or an ImportError that names the extra to install. The
    command line calls it before any work, so a missing extra is its one-line error."""
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "counting with --engine dask needs Dask's distributed scheduler: pip install 'bpe-playground[dask]' "
            "(or pip install 'dask[distributed]')"
        ) from None
    return distributed


# ----- inputs --------------------------------------------------------------------------------


def _fingerprint(path: str | os.PathLike, size: int) -> str:
    """A cheap identity for a file: hash of its first and last FINGERPRINT_BYTES."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        h.update(f.read(FINGERPRINT_BYTES))
        if size > FINGERPRINT_BYTES:
            f.seek(max(size - FINGERPRINT_BYTES, FINGERPRINT_BYTES))
            h.update(f.read(FINGERPRINT_BYTES))
    return h.hexdigest()


@dataclass(frozen=True)
class _Input:
    """What the client saw of one input file; every task checks its worker sees the same."""

    index: int  # position in the input order
    path: str  # absolute, as the workers must see it
    size: int
    fingerprint: str


@dataclass(frozen=True)
class _Job:
    file: _Input
    start: int
    end: int
    pattern: str
    pattern_key: str
    max_chunks: int | None = None  # TableCap of the range's table


# ----- tasks (run on the workers) --------------------------------------------------------------


@dataclass
class _Part:
    """A partial count table and the exact bytes it stands for."""

    counts: dict[str, int]
    chunks: int
    spans: list[tuple[int, int, int]]  # (file index, start, end), ascending, adjacent ones joined
    bytes_read: int
    cut_failed: set[int] = field(default_factory=set)  # files whose cut was not a chunk boundary
    hosts: set[str] = field(default_factory=set)
    pruned: int = 0  # chunks dropped by min_chunk_count
    capped: int = 0  # chunks dropped by max_chunks (TableCap), all tasks together
    cap_floor: int = 0  # the highest count they dropped


def _check_worker_view(job: _Job) -> None:
    here = socket.gethostname()
    if pattern_key(job.pattern) != job.pattern_key:
        raise DistributedCountError(
            f"worker {here} resolves pattern {job.pattern!r} differently from the client: "
            "install the same version of this package on every worker"
        )
    path = job.file.path
    try:
        size = os.stat(path).st_size
    except OSError as e:
        raise DistributedCountError(
            f"worker {here} cannot read {path} ({e.strerror}): every worker must see the inputs "
            "at the same path (a shared file system)"
        ) from None
    if size != job.file.size or _fingerprint(path, size) != job.file.fingerprint:
        raise DistributedCountError(
            f"worker {here} sees a different {path} ({size:,} bytes; the client saw {job.file.size:,} "
            "or other content): every worker must see the same files, unchanged while counting"
        )


def _count_job(job: _Job) -> _Part:
    """Count one byte range of one file (a leaf of the reduction tree)."""
    _check_worker_view(job)
    path = Path(job.file.path)
    read = [0]

    def report(n: int) -> None:
        read[0] += n

    counts: dict[str, int]
    if job.pattern == NO_SPLIT:  # one chunk per file: the file is read whole, by one task
        pieces = []
        for text, consumed in decoded_blocks(path, 0, job.file.size, BLOCK_SIZE):
            pieces.append(text)
            report(consumed)
        text = "".join(pieces)
        counts, chunks = ({text: 1}, 1) if text else ({}, 0)
    else:
        cap = TableCap(job.max_chunks)
        try:
            counts, chunks = count_range(
                path, job.start, job.end, job.pattern, report=report, after_block=cap
            )
        except CutMismatch:
            return _Part({}, 0, [(job.file.index, job.start, job.end)], job.end - job.start, {job.file.index})
        span = (job.file.index, job.start, job.end)
        host = {socket.gethostname()}
        return _Part(counts, chunks, [span], read[0], hosts=host, capped=cap.dropped, cap_floor=cap.floor)
    span = (job.file.index, job.start, job.end)
    return _Part(counts, chunks, [span], read[0], set(), {socket.gethostname()})


def _merge_parts(*parts: _Part, max_chunks: int | None = None) -> _Part:
    """Merge partial tables of consecutive text, in order (order-preserving, associative
    without max_chunks; with it, the merged table is capped as local counting caps its own).

    The first part's table is extended in place: Dask hands each intermediate result to
    exactly one merge task and recomputes it if that task's worker dies, so nothing else
    ever sees it; copying would double the biggest table at every level.
    """
    out = parts[0]
    cap = TableCap(max_chunks)
    for part in parts[1:]:
        merge_counts(out.counts, part.counts)
        cap(out.counts)
        out.capped += part.capped
        out.cap_floor = max(out.cap_floor, part.cap_floor)
        out.chunks += part.chunks
        out.bytes_read += part.bytes_read
        out.cut_failed |= part.cut_failed
        out.hosts |= part.hosts
        for span in part.spans:
            last = out.spans[-1] if out.spans else None
            if last is not None and last[0] == span[0] and last[2] == span[1]:
                out.spans[-1] = (last[0], last[1], span[2])
            else:
                out.spans.append(span)
        _consume(part)
    out.capped += cap.dropped
    out.cap_floor = max(out.cap_floor, cap.floor)
    return out


def _consume(part: _Part) -> None:
    """Empty a merged input: frees its table now rather than when Dask releases the input, and
    should the input ever be used again it covers no bytes, which _check_coverage reports."""
    part.counts, part.spans, part.chunks, part.bytes_read = {}, [], 0, 0


def _finish(part: _Part, min_chunk_count: int) -> _Part:
    """The root's last step, on its worker: what local counting drops, dropped before transfer."""
    part.counts.pop("", None)
    if min_chunk_count > 1:
        part.pruned = prune_counts(part.counts, min_chunk_count)
    return part


# ----- the client side -------------------------------------------------------------------------


def _plan(files: list[Path], pattern: str, workers: int, parts_per_file: int | None) -> list[_Job]:
    """Byte-range jobs in text order: files in order, ranges ascending within each file."""
    inputs = []
    for i, path in enumerate(files):
        size = path.stat().st_size
        inputs.append(_Input(i, str(path.resolve()), size, _fingerprint(path, size)))
    total = max(sum(f.size for f in inputs), 1)
    target = min(max(total // (workers * RANGES_PER_WORKER), RANGE_MIN_BYTES), RANGE_MAX_BYTES)
    key = pattern_key(pattern)
    jobs = []
    for f in inputs:
        if not streams_exactly(pattern) or f.size == 0:  # "none" and custom regexes: files whole
            parts = 1
        elif parts_per_file is not None:
            parts = parts_per_file
        else:
            parts = max(1, -(-f.size // target))
        cuts = range_cuts(Path(f.path), parts) if parts > 1 else [0, f.size]
        jobs.extend(_Job(f, a, b, pattern, key) for a, b in zip(cuts, cuts[1:], strict=False))
    return jobs


def _reduce_tree(client, leaves: list, min_chunk_count: int, token: str, max_chunks: int | None = None):
    """Submit merges REDUCE_FAN_IN at a time, level by level, keeping only the root's future.

    Each level merges runs of consecutive parts, so every merge sees text in order. Merges
    outrank every leaf (leaves have priorities 1..len(leaves)): a merge whose inputs are ready
    runs before more ranges are counted, so partial tables are folded as they come instead of
    piling up in worker memory."""
    level = leaves
    depth = 0
    while len(level) > 1:
        depth += 1
        level = [
            client.submit(
                _merge_parts,
                *level[i : i + REDUCE_FAN_IN],
                max_chunks=max_chunks,
                key=f"bpe-merge-{token}-{depth}-{i}",
                priority=len(leaves) + depth,
            )
            for i in range(0, len(level), REDUCE_FAN_IN)
        ]
    return client.submit(
        _finish, level[0], min_chunk_count, key=f"bpe-finish-{token}", priority=len(leaves) + depth + 1
    )


def _check_coverage(part: _Part, jobs: list[_Job]) -> None:
    """The root must stand for every byte of every file exactly once, in order."""
    files = {j.file.index: j.file for j in jobs}
    expected = [(f.index, 0, f.size) for f in sorted(files.values(), key=lambda f: f.index) if f.size]
    got = [s for s in part.spans if s[1] != s[2]]
    if got != expected:
        raise DistributedCountError(
            f"the merged count table covers byte spans {got[:5]}... instead of {expected[:5]}...: "
            "a partial result was lost or counted twice; no table written"
        )
    total = sum(f.size for f in files.values())
    if part.bytes_read != total:
        raise DistributedCountError(
            f"workers decoded {part.bytes_read:,} bytes of {total:,}: a file changed while counting?"
        )


def _hear_handshake(distributed: Any, address: str) -> None:
    """Connect to `address` and read a Dask handshake, within 2 * CONNECT_TIMEOUT_S in all (the
    connect alone gives up after CONNECT_TIMEOUT_S: an OSError, "cannot reach"), then hang
    up. Dask's Client bounds the connect but then waits for the handshake for ever: a port that
    accepts and stays silent (a firewall's tarpit, a stuck process) hung the CLI. Run in a
    thread of its own, so its event loop never meets a caller's (a notebook's)."""

    async def handshake() -> None:
        comm = await distributed.comm.connect(address, timeout=CONNECT_TIMEOUT_S)
        await comm.close()

    def bounded() -> None:
        asyncio.run(asyncio.wait_for(handshake(), 2 * CONNECT_TIMEOUT_S))

    with ThreadPoolExecutor(1) as pool:
        pool.submit(bounded).result()


def _resolve(address: str) -> None:
    """The host of a tcp:// or tls:// address must resolve: Dask retries a name that does not for
    the whole CONNECT_TIMEOUT_S (a typo took 30 s to say "Timed out"); the resolver says at once."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return
        host, port = parse_host_port(location)
    except ValueError as e:
        raise DistributedCountError(
            f"{address} is not a scheduler address ({e}): give one such as tcp://HOST:8786"
        ) from None
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise DistributedCountError(
            f"cannot reach the Dask scheduler at {address}: the host {host!r} does not resolve ({e}); "
            "check its name"
        ) from None
    _refuse_closed_port(address, host, port)


def _refuse_closed_port(address: str, host: str, port: int) -> None:
    """A refused connection is an error at once: Dask retries it for the whole CONNECT_TIMEOUT_S
    (a scheduler not started, or a wrong port, took 30 s to say "Timed out"). No answer within
    that time is an error too (Dask's connect would wait as long again). Other failures (no
    route) are left to Dask's connect, which reports them in its own words."""
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except ConnectionRefusedError:
        raise DistributedCountError(
            f"cannot reach the Dask scheduler at {address}: nothing listens at {host}:{port} (connection "
            f"refused); start one with `dask scheduler`, or give the address it prints"
        ) from None
    except TimeoutError:
        raise DistributedCountError(
            f"cannot reach the Dask scheduler at {address}: no answer from {host}:{port} within "
            f"{CONNECT_TIMEOUT_S} s; check the address, and that no firewall drops the connection"
        ) from None
    except OSError:
        pass


def _connect(scheduler: Any, workers: int | None):
    """(client, cluster to close or None, we own the client)."""
    distributed = import_distributed()
    if isinstance(scheduler, distributed.Client):
        return scheduler, None, False
    if scheduler is None or scheduler == "local":
        cluster = distributed.LocalCluster(
            n_workers=workers or default_workers(),
            threads_per_worker=1,  # counting is CPU-bound Python: one task per process
            processes=True,
            dashboard_address=None,
            # no dashboard, but the scheduler's HTTP server still starts: on any free port, not
            # 8787, which warned in three lines whenever another Dask cluster had it
            scheduler_kwargs={"dashboard_address": ":0"},
            # A task's error reaches the caller as one message; the workers logged it again,
            # with Dask's traceback, on our stderr ("Compute Failed" for a non-UTF-8 file).
            silence_logs=logging.CRITICAL,
        )
        return distributed.Client(cluster), cluster, True
    if not isinstance(scheduler, str):
        raise ValueError(
            f"scheduler must be an address such as tcp://HOST:8786, a Client or None, not {scheduler!r}"
        )
    _resolve(scheduler)
    try:
        _hear_handshake(distributed, scheduler)
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:  # (an OSError too)
        raise DistributedCountError(
            f"{scheduler} accepted the connection but sent no Dask handshake within {2 * CONNECT_TIMEOUT_S} s: "
            "is a Dask scheduler listening there? Give the address `dask scheduler` prints"
        ) from None
    except OSError as e:
        raise DistributedCountError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
    except (MemoryError, ValueError, TypeError, EOFError) as e:
        # Something else answered there: Dask read an HTTP reply's first bytes as a frame
        # length and tried to allocate 3 EiB (a MemoryError traceback).
        raise DistributedCountError(
            f"{scheduler} did not answer as a Dask scheduler ({type(e).__name__}): give the address "
            "`dask scheduler` prints, such as tcp://HOST:8786"
        ) from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (TimeoutError, OSError):
        client.close()
        raise DistributedCountError(
            f"no worker joined the Dask scheduler at {scheduler} within {WORKER_WAIT_S} s: "
            f"start some with `dask worker {scheduler} --nthreads 1`"
        ) from None
    return client, None, True


def count_chunks_dask(
    paths_or_globs: Iterable[str | os.PathLike] | str | os.PathLike,
    pattern: str = DEFAULT_PATTERN,
    scheduler: Any = None,
    *,
    parts_per_file: int | None = None,
    min_chunk_count: int = 1,
    progress: Progress | None = None,
    workers: int | None = None,
    max_chunks: int | None = None,
) -> tuple[dict[str, int], dict[str, Any]]:
    """Count the chunks of files on a Dask cluster: (chunk -> count, statistics), exactly as
    `counting.count_chunks(files, pattern)` would (same chunks, counts and first-occurrence order).

    scheduler: "tcp://HOST:PORT" of a running dask scheduler, a `distributed.Client`, or None
    (a LocalCluster of `workers` processes, default all cores, started and closed here).
    parts_per_file: ranges per file (default: about 4 per worker over the whole input, 1-64 MiB
    each). min_chunk_count drops rarer chunks (after the whole table is known, as locally).
    max_chunks caps every table (each range's, each merge's) as counting.TableCap does: an
    approximation, bounded memory on every worker; not equal to local capped counting.
    progress(phase, done, total, rate, eta) gets phase "count" with bytes counted.
    """
    # Read as counting.count_chunks reads them (count_files gives both engines the same
    # arguments): numpy's integers are integers, True is not a count.
    min_chunk_count, parts_per_file, workers, max_chunks = map(
        plain_int, (min_chunk_count, parts_per_file, workers, max_chunks)
    )
    if not is_integer(min_chunk_count) or min_chunk_count < 1:
        raise ValueError(f"min_chunk_count must be an integer >= 1, got {min_chunk_count!r}")
    if parts_per_file is not None and (not is_integer(parts_per_file) or parts_per_file < 1):
        raise ValueError(f"parts_per_file must be an integer >= 1, got {parts_per_file!r}")
    check_workers(workers)
    if workers is not None and not (scheduler is None or scheduler == "local"):
        raise ValueError(  # it was dropped without a word: the count ran on the scheduler's workers
            "workers must be left out with a scheduler: it sizes the local Dask cluster started "
            "without one, and a scheduler's workers are its own (start more with `dask worker "
            "ADDRESS --nworkers N --nthreads 1`)"
        )
    TableCap(max_chunks)  # checks it
    files = expand_inputs(paths_or_globs)
    key = pattern_key(pattern)  # validates the pattern before any cluster starts
    if pattern != NO_SPLIT:
        compile_splitter(pattern)
    distributed = import_distributed()
    t0 = time.perf_counter()
    client, cluster, owned = _connect(scheduler, workers)
    try:
        n_workers = max(sum(client.nthreads().values()), 1)  # task slots: one range each at a time
        jobs = [replace(j, max_chunks=max_chunks) for j in _plan(files, pattern, n_workers, parts_per_file)]
        part = _run(client, jobs, min_chunk_count, progress, distributed, max_chunks)
        serial_fallback = []
        if part.cut_failed:  # a cut was not a chunk boundary: count those files unsplit, all again
            paths = {j.file.index: j.file.path for j in jobs}
            serial_fallback = [paths[i] for i in sorted(part.cut_failed)]
            jobs = _replan(jobs, part.cut_failed)
            part = _run(client, jobs, min_chunk_count, progress, distributed, max_chunks)
            if part.cut_failed:
                raise DistributedCountError("counting files unsplit still reported a cut mismatch")
    finally:
        if owned:
            client.close()
        if cluster is not None:
            cluster.close()
    _check_coverage(part, jobs)
    stats: dict[str, Any] = {
        "documents": len(files),
        "bytes": sum(f.stat().st_size for f in files),
        "chunks": part.chunks,
        "engine": "dask",
        "workers": n_workers,
        "ranges": len(jobs),
        "hosts": len(part.hosts),
    }
    if serial_fallback:
        stats["serial_fallback"] = serial_fallback
    counts = part.counts
    if min_chunk_count > 1:
        stats["pruned_chunks"] = part.pruned
    stats["unique_chunks"] = len(counts)
    stats["pattern"] = key
    stats["min_chunk_count"] = min_chunk_count
    if max_chunks is not None:
        stats.update(max_chunks=max_chunks, capped_chunks=part.capped, cap_floor=part.cap_floor)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    return counts, stats


def _replan(jobs: list[_Job], whole: set[int]) -> list[_Job]:
    out: list[_Job] = []
    for job in jobs:
        if job.file.index not in whole:
            out.append(job)
        elif job.start == 0:
            out.append(replace(job, start=0, end=job.file.size))
    return out


def _run(
    client, jobs: list[_Job], min_chunk_count: int, progress: Progress | None, distributed, max_chunks=None
) -> _Part:
    token = os.urandom(6).hex()  # unique task keys: two calls never share results
    tick = Ticker("count", sum(j.end - j.start for j in jobs), progress)
    # Leaves first, highest priority to the earliest ranges so the tree's left side finishes
    # (and merges, freeing memory) first.
    leaves = [
        client.submit(_count_job, job, key=f"bpe-count-{token}-{i}", priority=len(jobs) - i)
        for i, job in enumerate(jobs)
    ]
    sizes = {f.key: j.end - j.start for f, j in zip(leaves, jobs, strict=True)}
    root = _reduce_tree(client, leaves, min_chunk_count, token, max_chunks)
    try:
        done = distributed.as_completed(leaves)
        del leaves  # as_completed drops each future as it yields it: leaf data is freed once merged
        for future in done:
            if future.status == "error":
                break  # root.result() below raises the task's own error
            tick.add(sizes[future.key])
        future = None
        part = root.result()
    except distributed.KilledWorker as e:
        raise DistributedCountError(
            f"a counting task was on workers that died too many times ({e}); no table written. "
            "Workers often die of memory: give them more, or pass more parts per file"
        ) from None
    except CutMismatch as e:  # pragma: no cover - caught in the task
        raise DistributedCountError(str(e)) from None
    tick.done()
    return part
