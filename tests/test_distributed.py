"""Distributed counting on a real Dask cluster equals local single-process counting, exactly.

One LocalCluster (2 worker processes, one thread each) serves the module. Exactness means
the same chunks, the same counts and the same dict order (first occurrence, which the
`first` tie-break reads), and so the same merges. Worker deaths are real: a worker plugin
SIGKILLs its own process when a chosen task starts, once (Dask must retry it and the table
must still be exact) or every time (the call must fail with a clear error, no table).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from tests.helpers import CORPORA  # noqa: E402
from tokenizer.counting import count_chunks, count_files, expand_inputs, range_cuts  # noqa: E402
from tokenizer.distributed import (  # noqa: E402
    CONNECT_TIMEOUT_S,
    DistributedCountError,
    _check_coverage,
    _count_job,
    _Job,
    _merge_parts,
    _plan,
    count_chunks_dask,
)
from tokenizer.train import train  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TAYLOR = CORPORA / "taylorswift.txt"
SHAKESPEARE = CORPORA / "tinyshakespeare.txt"
UDHR = CORPORA / "udhr_sample.txt"  # 40 scripts
EMOJI = CORPORA / "emoji_sequences.txt"  # astral characters, ZWJ sequences; no safe cut point
CODE = CORPORA / "code_js.txt"
BOOKS = CORPORA / "pg_en_medium.txt"  # 8 MB
BIBLE = CORPORA / "kjv_bible.txt"  # 4.4 MB


@pytest.fixture(scope="module")
def client():
    import dask

    # One death per task is retried, a second is final: keeps the "always dies" test short.
    # No scheduler-side queuing: every ready task goes to a worker at once, so the order in
    # which workers run them is ours (task priorities), not the scheduler's pacing.
    settings = {"distributed.scheduler.allowed-failures": 1, "distributed.scheduler.worker-saturation": "inf"}
    with dask.config.set(settings):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def local(files, pattern="gpt4", **kw):
    return count_chunks([Path(f) for f in files], pattern, workers=1, **kw)


def assert_same_table(got, want):
    (counts, meta), (want_counts, want_meta) = got, want
    assert list(counts.items()) == list(want_counts.items())  # order, chunks and counts
    for key in ("documents", "bytes", "chunks", "unique_chunks", "pattern", "min_chunk_count"):
        assert meta[key] == want_meta[key], key


@pytest.mark.parametrize("path", [TAYLOR, SHAKESPEARE, UDHR, CODE], ids=lambda p: p.stem)
def test_same_table_as_local_serial_counting(client, path):
    got = count_chunks_dask([path], "gpt4", client, parts_per_file=9)
    assert got[1]["ranges"] == len(range_cuts(path, 9)) - 1 > 4  # really cut into ranges
    assert_same_table(got, local([path]))


def test_several_files_and_globs_in_order(client):
    inputs = [str(CORPORA / "tiny*.txt"), UDHR, str(CORPORA / "taylor?wift.txt"), EMOJI]
    files = [SHAKESPEARE, UDHR, TAYLOR, EMOJI]
    assert expand_inputs(inputs) == files
    got = count_chunks_dask(inputs, "gpt4", client, parts_per_file=4)
    assert_same_table(got, local(files))
    # a different file order is a different first-occurrence order: it must show
    other = count_chunks_dask([EMOJI, TAYLOR], "gpt4", client)
    assert list(other[0]) == list(local([EMOJI, TAYLOR])[0]) != list(local([TAYLOR, EMOJI])[0])


@pytest.mark.parametrize("pattern", ["gpt2", "o200k", "none"])
def test_other_patterns(client, pattern):
    files = [TAYLOR, UDHR]
    assert_same_table(count_chunks_dask(files, pattern, client, parts_per_file=5), local(files, pattern))


def test_min_chunk_count_prunes_like_local(client):
    files = [SHAKESPEARE, TAYLOR]
    counts, meta = count_chunks_dask(files, "gpt4", client, parts_per_file=6, min_chunk_count=2)
    want = local(files, min_chunk_count=2)
    assert_same_table((counts, meta), want)
    assert meta["pruned_chunks"] == want[1]["pruned_chunks"] > 0
    assert min(counts.values()) == 2


def test_max_chunks_caps_every_table_on_the_workers(client):
    """Each range's table and each merge's are capped (TableCap): the result fits the cap,
    no count is above the truth, and the frequent chunks are all there."""
    files = [SHAKESPEARE, UDHR]
    exact, _ = local(files)
    counts, meta = count_chunks_dask(files, "gpt4", client, parts_per_file=6, max_chunks=3000)
    assert len(exact) > 3000 >= len(counts)
    assert meta["max_chunks"] == 3000 and meta["capped_chunks"] > 0 and meta["cap_floor"] >= 1
    assert all(n <= exact[chunk] for chunk, n in counts.items())
    top = sorted(exact, key=exact.__getitem__, reverse=True)[:50]
    assert all(chunk in counts for chunk in top)
    with pytest.raises(ValueError, match="max_chunks must be an integer"):
        count_chunks_dask(files, "gpt4", client, max_chunks=1)


@pytest.mark.parametrize("tie_break", ["first", "lexical"])
def test_trained_merges_equal_local_training(client, tie_break):
    files = [TAYLOR, UDHR]
    table = count_chunks_dask(files, "gpt4", client, parts_per_file=7)
    from_dask = train(None, 700, counts=table, tie_break=tie_break)
    from_files = train(files, 700, workers=1, tie_break=tie_break)
    assert from_dask.merges == from_files.merges
    assert len(from_dask.merges) == 700 - 256


def test_a_custom_pattern_counts_each_file_whole(client, tmp_path):
    """Runs of non-spaces swallow newlines, so every range end would fall inside a chunk; a custom
    pattern's files are never cut (streaming.streams_exactly: no bound on its look-ahead), so each
    file is one task from the start; the table is exactly the serial one."""
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"alpha{i % 7}.\nbeta gamma{i % 5} delta.\nEpsilon " for i in range(3000)))
    pattern = r"[^ ]+| +"
    got = count_chunks_dask([path, TAYLOR], pattern, client, parts_per_file=5)
    assert "serial_fallback" not in got[1]
    assert got[1]["ranges"] == 2  # each file whole
    assert_same_table(got, local([path, TAYLOR], pattern))


def test_empty_file_and_tiny_files(client, tmp_path):
    empty, tiny = tmp_path / "empty.txt", tmp_path / "tiny.txt"
    empty.write_text("")
    tiny.write_text("hello hello world\n")
    assert_same_table(count_chunks_dask([empty, tiny, empty], "gpt4", client), local([empty, tiny, empty]))


# ----- never silently wrong ---------------------------------------------------------------------


class KillOnStart(distributed.WorkerPlugin):
    """SIGKILLs the worker process when the leaf task `suffix` starts executing.

    once: only while `marker` does not exist yet (it is created just before the kill)."""

    def __init__(self, suffix: str, marker: str, once: bool) -> None:
        self.suffix, self.marker, self.once = suffix, marker, once

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and str(key).startswith("bpe-count-") and str(key).endswith(self.suffix):
            if self.once:
                try:
                    open(self.marker, "x").close()
                except FileExistsError:
                    return
            else:
                with open(self.marker, "a") as f:
                    f.write("x")
            os.kill(os.getpid(), signal.SIGKILL)


def worker_pids(client) -> set[int]:
    return set(client.run(os.getpid).values())


def with_plugin(client, plugin, name, fn):
    client.register_plugin(plugin, name=name)
    try:
        return fn()
    finally:
        client.unregister_worker_plugin(name)
        client.wait_for_workers(2, timeout=60)


def test_worker_killed_mid_job_is_retried_and_the_table_is_exact(client, tmp_path):
    files = [SHAKESPEARE, UDHR]
    marker = tmp_path / "killed"
    before = worker_pids(client)
    got = with_plugin(
        client,
        KillOnStart("-3", str(marker), once=True),
        "kill-once",
        lambda: count_chunks_dask(files, "gpt4", client, parts_per_file=4),
    )
    assert marker.exists()  # the kill happened
    assert worker_pids(client) != before  # a worker process was replaced
    assert_same_table(got, local(files))


def test_worker_killed_every_time_fails_clearly(client, tmp_path):
    marker = tmp_path / "kills"
    with pytest.raises(DistributedCountError, match="workers that died"):
        with_plugin(
            client,
            KillOnStart("-1", str(marker), once=False),
            "kill-always",
            lambda: count_chunks_dask([SHAKESPEARE], "gpt4", client, parts_per_file=3),
        )
    assert len(marker.read_text()) == 2  # tried, retried once (allowed-failures=1), then gave up


def test_a_file_that_differs_on_the_worker_is_refused(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("one two three\n" * 100)
    job = _plan([path], "gpt4", 1, None)[0]
    path.write_text("one two thre3\n" * 100)  # same size, other content
    with pytest.raises(DistributedCountError, match="different"):
        _count_job(job)
    path.write_text("short\n")
    with pytest.raises(DistributedCountError, match="same files"):
        _count_job(job)
    path.unlink()
    with pytest.raises(DistributedCountError, match="same path"):
        _count_job(job)


def test_pattern_resolved_differently_on_a_worker_is_refused(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("x y\n")
    job = _plan([path], "gpt4", 1, None)[0]
    other = _Job(job.file, job.start, job.end, job.pattern, "not the gpt4 regex")
    with pytest.raises(DistributedCountError, match="same version"):
        _count_job(other)


def test_coverage_check_catches_lost_or_repeated_parts():
    jobs = _plan([TAYLOR], "gpt4", 1, 4)
    parts = [_count_job(j) for j in jobs]
    assert len(parts) == 4
    _check_coverage(_merge_parts(*[_count_job(j) for j in jobs]), jobs)  # complete: fine
    with pytest.raises(DistributedCountError, match="lost or counted twice"):
        _check_coverage(_merge_parts(parts[0], parts[1], parts[3]), jobs)
    again = [_count_job(j) for j in jobs]
    with pytest.raises(DistributedCountError, match="lost or counted twice"):
        _check_coverage(_merge_parts(again[0], again[1], _count_job(jobs[1]), again[2], again[3]), jobs)


def test_merging_is_associative_and_ordered():
    jobs = _plan([TAYLOR, EMOJI, TAYLOR], "gpt4", 1, 4)
    assert len(jobs) == 9  # emoji_sequences has no cut point: one range
    flat = _merge_parts(*[_count_job(j) for j in jobs])
    leaves = [_count_job(j) for j in jobs]
    tree = _merge_parts(_merge_parts(*leaves[:3]), _merge_parts(*leaves[3:7]), _merge_parts(*leaves[7:]))
    assert list(tree.counts.items()) == list(flat.counts.items())
    assert list(flat.counts.items()) == list(local([TAYLOR, EMOJI, TAYLOR])[0].items())


# ----- inputs and command line ---------------------------------------------------------------------


def test_bad_inputs_are_clear_errors(client, tmp_path):
    with pytest.raises(FileNotFoundError, match="no files match"):
        count_chunks_dask([str(tmp_path / "*.nothing")], "gpt4", client)
    with pytest.raises(FileNotFoundError, match="not found"):
        count_chunks_dask([tmp_path / "missing.txt"], "gpt4", client)
    with pytest.raises(ValueError, match="directory"):
        count_chunks_dask([tmp_path], "gpt4", client)
    with pytest.raises(ValueError, match="invalid split pattern"):
        count_chunks_dask([TAYLOR], "(unclosed", client)
    with pytest.raises(ValueError, match="min_chunk_count"):
        count_chunks_dask([TAYLOR], "gpt4", client, min_chunk_count=0)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text\n" * 10 + b"\xff\xfe broken\n")
    with pytest.raises(ValueError, match="not valid UTF-8"):
        count_chunks_dask([bad], "gpt4", client)


def test_integer_arguments_are_read_as_local_counting_reads_them(client):
    """count_files(engine="dask") took min_chunk_count=True as 1 and refused numpy's integers
    (np.int64(2): "must be an integer"), the reverse of engine="local"; both now agree."""
    np = pytest.importorskip("numpy")
    want = local([TAYLOR], min_chunk_count=2)
    got = count_files([TAYLOR], "gpt4", engine="dask", scheduler=client, min_chunk_count=np.int64(2))
    assert_same_table(got, want)
    capped = count_chunks_dask(
        [TAYLOR], "gpt4", client, max_chunks=np.int64(5000), parts_per_file=np.int64(2)
    )
    assert capped[1]["max_chunks"] == 5000 and type(capped[1]["max_chunks"]) is int
    for bad in ({"min_chunk_count": True}, {"parts_per_file": True}, {"workers": True}, {"max_chunks": 2.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            count_chunks_dask([TAYLOR], "gpt4", client, **bad)


def test_workers_with_a_scheduler_are_refused_not_ignored(client, tmp_path):
    """`count --scheduler ADDR -j 8` counted on the scheduler's workers and dropped -j without a
    word: workers is the size of a cluster started here, and a scheduler has its own."""
    from tokenizer.cli import main

    with pytest.raises(ValueError, match="workers must be left out with a scheduler"):
        count_chunks_dask([TAYLOR], "gpt4", client, workers=2)
    with pytest.raises(ValueError, match="workers must be left out with a scheduler"):
        count_chunks_dask([TAYLOR], "gpt4", client.scheduler.address, workers=2)
    table = tmp_path / "t.counts"
    argv = ["count", "--scheduler", client.scheduler.address, "-j", "2", str(TAYLOR), "-q", "-o", str(table)]
    assert main(argv) == 2 and not table.exists()


def test_count_files_engine_choice(client):
    files = [str(CORPORA / "taylor*.txt"), str(UDHR)]
    want = local([TAYLOR, UDHR])
    address = client.scheduler.address
    counts, meta = count_files(files, "gpt4", engine="dask", scheduler=address)
    assert meta["engine"] == "dask"
    assert_same_table((counts, meta), want)
    assert_same_table(count_files(files, "gpt4", engine="local", workers=1), want)
    with pytest.raises(ValueError, match="a scheduler is for engine='dask'"):
        count_files(files, "gpt4", scheduler=address)
    with pytest.raises(ValueError, match="engine must be one of local, dask, got 'spark'"):
        count_files(files, "gpt4", engine="spark")


def test_core_never_imports_dask_and_missing_dask_is_a_clear_error():
    code = (
        "import sys, tokenizer, tokenizer.train, tokenizer.counting\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]\n"
        "sys.modules['distributed'] = None\n"
        "from tokenizer.distributed import count_chunks_dask\n"
        "try:\n"
        f"    count_chunks_dask([{str(TAYLOR)!r}], 'gpt4')\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "pip install" in out.stdout and "[dask]" in out.stdout


@pytest.mark.parametrize("engine_args", [["--engine", "dask"], ["--scheduler", "tcp://127.0.0.1:8786"]])
def test_cli_count_without_dask_says_what_to_install(tmp_path, engine_args):
    """`count --engine dask` without the [dask] extra printed an ImportError traceback and
    exited 1; it is one `error:` line naming the extra, exit 2, before any counting."""
    table = tmp_path / "t.counts"
    argv = ["count", *engine_args, str(TAYLOR), "-q", "-o", str(table)]
    code = f"import sys\nsys.modules['distributed'] = None\nfrom tokenizer.cli import main\nsys.exit(main({argv!r}))\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert "pip install" in out.stderr and "[dask]" in out.stderr
    assert not table.exists()


def test_scheduler_unreachable_or_without_workers_is_a_clear_error(monkeypatch):
    import tokenizer.distributed as td

    monkeypatch.setattr(td, "CONNECT_TIMEOUT_S", 2)
    monkeypatch.setattr(td, "WORKER_WAIT_S", 1)
    with pytest.raises(DistributedCountError, match="cannot reach the Dask scheduler"):
        count_chunks_dask([TAYLOR], "gpt4", "tcp://127.0.0.1:9")
    with distributed.LocalCluster(n_workers=0, dashboard_address=":0", processes=False) as empty:
        with pytest.raises(DistributedCountError, match="no worker joined"):
            count_chunks_dask([TAYLOR], "gpt4", empty.scheduler_address)


def test_a_scheduler_host_that_does_not_resolve_is_named_at_once():
    """tcp://nonexistent.invalid:8786 took Dask's whole 30 s connect timeout to say "Timed out"."""
    with pytest.raises(DistributedCountError, match="the host 'nonexistent.invalid' does not resolve"):
        count_chunks_dask([TAYLOR], "gpt4", "tcp://nonexistent.invalid:8786")
    with pytest.raises(DistributedCountError, match="missing port number"):
        count_chunks_dask([TAYLOR], "gpt4", "tcp://somehost")


def test_a_port_where_nothing_listens_is_named_at_once():
    """tcp://127.0.0.1:PORT with no scheduler there: Dask retried the refused connection for its
    whole 30 s connect timeout, then said "Timed out trying to connect"."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]  # free once closed: nothing listens there
    started = time.monotonic()
    with pytest.raises(DistributedCountError, match=rf"nothing listens at 127.0.0.1:{port}"):
        count_chunks_dask([TAYLOR], "gpt4", f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - started < 5


def test_a_scheduler_that_never_answers_is_waited_for_once(monkeypatch):
    """The port probe added for refused connections waited CONNECT_TIMEOUT_S on a host that drops
    packets, then let Dask's connect wait as long again: 60 s before a word."""
    import socket

    def silent(address, timeout=None):
        assert timeout == CONNECT_TIMEOUT_S
        raise TimeoutError("timed out")  # what create_connection raises when nothing answers

    monkeypatch.setattr(socket, "create_connection", silent)
    with pytest.raises(DistributedCountError, match=r"no answer from 127.0.0.1:8786 within 30 s"):
        count_chunks_dask([TAYLOR], "gpt4", "tcp://127.0.0.1:8786")


def test_an_address_that_is_not_a_scheduler_is_a_clear_error():
    """Something else answering there (here an HTTP 403, as a proxy sends): Dask read the reply
    as a frame length, tried to allocate 3 EiB and the CLI printed a MemoryError traceback."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer() -> None:  # every connection, as a real proxy does (the client first checks the port)
        with server:
            for _ in range(2):
                conn, _ = server.accept()
                with conn:
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    with pytest.raises(DistributedCountError, match=rf"127.0.0.1:{port} did not answer as a Dask scheduler"):
        count_chunks_dask([TAYLOR], "gpt4", f"tcp://127.0.0.1:{port}")
    thread.join(5)


def test_an_address_that_accepts_and_stays_silent_is_a_clear_error(monkeypatch):
    """A port that accepts the connection and never answers: Dask's Client bounds the connect,
    not the handshake after it, and waited for ever."""
    import socket

    import tokenizer.distributed as td

    monkeypatch.setattr(td, "CONNECT_TIMEOUT_S", 1)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(DistributedCountError, match="accepted the connection but sent no Dask handshake"):
            count_chunks_dask([TAYLOR], "gpt4", f"tcp://127.0.0.1:{port}")
        assert time.monotonic() - started < 10


def test_partial_tables_are_merged_while_ranges_are_still_being_counted(client):
    """Memory bound: merges outrank leaves, so partial tables are folded as they come. Counted
    from the task stream: at no time are more than a few counted ranges waiting for their merge
    (merges at default priority: 47 of the 48 waiting; with ours 9-20 measured). Ranges must take longer
    than a scheduler round trip (ms), as real ones (seconds) do."""
    with distributed.get_task_stream(client) as ts:
        got = count_chunks_dask([BOOKS, BIBLE], "gpt4", client, parts_per_file=24)  # ~20-50 ms a range
    assert_same_table(got, local([BOOKS, BIBLE]))
    done: dict[str, float] = {}
    for rec in ts.data:
        for s in rec["startstops"]:
            if s["action"] == "compute":
                done[str(rec["key"])] = s["stop"]
    leaves = {int(k.rsplit("-", 1)[1]): t for k, t in done.items() if k.startswith("bpe-count-")}
    merged = {
        int(k.rsplit("-", 1)[1]): t for k, t in done.items() if k.startswith("bpe-merge-") and "-1-" in k
    }
    assert len(leaves) == got[1]["ranges"] == 48
    events = sorted([(t, 1) for t in leaves.values()] + [(merged[i - i % 4], -1) for i in leaves])
    waiting = peak = 0
    for _, step in events:
        waiting += step
        peak = max(peak, waiting)
    assert peak <= 30, f"{peak} counted ranges were waiting for their merge at once"


def test_cli_count_on_a_scheduler_then_train(request, tmp_path):
    """`python -m tokenizer count --engine dask --scheduler ADDR GLOB -o T` then `train --counts T`
    gives the tokenizer that training on the files gives."""
    from tokenizer.cli import main

    client = request.getfixturevalue("client")
    table, dask_stem, local_stem = tmp_path / "t.counts", tmp_path / "dask", tmp_path / "local"
    glob_arg = str(CORPORA / "t*.txt")  # taylorswift, tinyshakespeare
    address = client.scheduler.address
    assert main(["count", "--engine", "dask", "--scheduler", address, glob_arg, "-q", "-o", str(table)]) == 0
    assert main(["train", "--counts", str(table), "--vocab-size", "600", "-q", "-o", str(dask_stem)]) == 0
    files = [str(TAYLOR), str(SHAKESPEARE)]
    assert main(["train", *files, "-j", "1", "--vocab-size", "600", "-q", "-o", str(local_stem)]) == 0
    assert (tmp_path / "dask.tiktoken").read_bytes() == (tmp_path / "local.tiktoken").read_bytes()


def test_a_failing_task_on_a_local_cluster_is_one_line_on_stderr(tmp_path):
    """`count --engine dask` on a non-UTF-8 file printed the workers' "Compute Failed" log with
    Dask's traceback before the one-line error."""
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9 au lait\n")
    out = subprocess.run(
        [sys.executable, "-m", "tokenizer", "count", "--engine", "dask", "-j", "1", "-q", str(bad)]
        + ["-o", str(tmp_path / "t.counts")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "not valid UTF-8 at byte offset 3" in out.stderr, out.stderr
