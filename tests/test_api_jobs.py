"""playground/jobs_api.py, jobs.py, job_process.py through the real server: worker processes,
SSE progress, downloads, cancel, kill, restart.

Runs the real trainer in spawned processes on ../shared/corpora; small vocabularies where
a job must finish, a big corpus and vocabulary where it must still be running when we act.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

requests = pytest.importorskip("requests")
pytest.importorskip("tokenizer.train")

from tests.helpers import CORPORA  # noqa: E402
from tests.server_helpers import LiveServer, alive  # noqa: E402
from tokenizer import Tokenizer  # noqa: E402
from tokenizer.train import train  # noqa: E402

SMALL = CORPORA / "taylorswift.txt"
BIG = CORPORA / "pg_en_medium.txt"
SAMPLES = [
    "Hello world! It's a beautiful day, isn't it?   Numbers: 1234567 and 3.14159\n\n",
    "We are never ever getting back together <|endoftext|> like, ever",
    (CORPORA / "udhr_sample.txt").read_text(encoding="utf-8")[:3000],
    SMALL.read_text(encoding="utf-8")[5000:9000],
    "emoji 🙂👍🏽 and 日本語のテキスト and ﷽",
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("jobs-data")


@pytest.fixture(scope="module")
def server(data_dir) -> Iterator[LiveServer]:
    """One server for the module, one job at a time and one waiting (so 429 is easy to reach)."""
    live = LiveServer(data_dir, MAX_RUNNING_JOBS=1, MAX_QUEUED_JOBS=1)
    yield live
    live.close()


def tiktoken_encoding(server: LiveServer, name: str, tmp_path: Path):
    pytest.importorskip("tiktoken")
    import tiktoken
    import tiktoken.load

    path = tmp_path / f"{name}.tiktoken"
    path.write_bytes(server.get(f"/api/tokenizers/{name}.tiktoken").content)
    meta = server.get(f"/api/tokenizers/{name}.json").json()
    return tiktoken.Encoding(
        name,
        pat_str=meta["pattern_regex"],
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens=meta["special_tokens"],
    )


def test_train_progress_done_download(server, tmp_path):
    resp = server.train([SMALL], vocab_size="1000", special_tokens="<|endoftext|>\n<|pad|>")
    assert resp.status_code == 202, resp.text
    job, name = resp.json()["job"], resp.json()["name"]
    assert name == "taylorswift-1000"
    assert resp.headers["Location"] == f"/api/jobs/{job}"

    events = list(server.events(job))
    states = [e["state"] for e in events]
    assert states[-1] == "done", events[-1]
    assert set(states[:-1]) <= {"queued", "running"}
    phases = [e["progress"]["phase"] for e in events if e["progress"]]
    assert "count" in phases and "merge" in phases
    assert phases.index("count") < phases.index("merge")
    merge = [e["progress"] for e in events if e["progress"] and e["progress"]["phase"] == "merge"]
    assert [p["done"] for p in merge] == sorted(p["done"] for p in merge)
    assert merge[-1]["done"] == merge[-1]["total"] == 1000 - 256
    assert merge[-1]["percent"] == 100.0

    snap = server.get(f"/api/jobs/{job}").json()
    assert snap["state"] == "done" and snap["tokenizer"] == name and snap["error"] is None
    assert snap["result"]["vocab_size"] == 1002 and snap["result"]["merges"] == 744
    assert snap["corpus"] == {"files": ["taylorswift.txt"], "bytes": SMALL.stat().st_size}

    # Files are in place, complete, and nothing else is left behind.
    assert server.files() == [f"{name}.json", f"{name}.tiktoken"]
    loaded = Tokenizer.load(server.data_dir / name)
    expected = train(SMALL.read_text(encoding="utf-8"), 1000, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert loaded.merges == expected.merges
    assert loaded.special_tokens == {"<|endoftext|>": 1000, "<|pad|>": 1001}

    entry = next(t for t in server.get("/api/tokenizers").json()["trained"] if t["name"] == name)
    assert entry["vocab_size"] == 1002 and entry["metadata"]["corpus_files"] == ["taylorswift.txt"]

    enc = tiktoken_encoding(server, name, tmp_path)
    for text in SAMPLES:
        assert enc.encode(text, allowed_special="all") == loaded.encode(text, allowed_special="all")
        assert enc.encode_ordinary(text) == loaded.encode_ordinary(text)


def test_text_field_custom_regex_lexical(server):
    text = (CORPORA / "tinyshakespeare.txt").read_text(encoding="utf-8")[:60_000]
    regex = r" ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"
    resp = server.train(
        text=text, vocab_size="400", name="shakes.v1", pattern="custom", regex=regex, tie_break="lexical"
    )
    assert resp.status_code == 202, resp.text
    job = resp.json()["job"]
    final = server.wait(job, lambda s: s["state"] in ("done", "failed", "cancelled"))
    assert final["state"] == "done", final
    loaded = Tokenizer.load(server.data_dir / "shakes.v1")
    assert loaded.pattern_regex == regex
    assert loaded.merges == train(text, 400, pattern=regex, tie_break="lexical").merges
    assert loaded.metadata["training"]["tie_break"] == "lexical"
    # The same name again is a collision now.
    again = server.train(text="more text here", vocab_size="300", name="shakes.v1")
    assert again.status_code == 409 and "already exists" in again.json()["error"]


@pytest.mark.parametrize("regex", ["ab", "b.a"])
def test_a_custom_regex_that_is_a_bare_word_is_a_regex_not_a_name(server, regex):
    """pattern=custom with regex 'ab' was queued (202), then failed "unknown pattern name 'ab'":
    the job passed it to train() as a pattern name. It is the regex: it splits out only 'ab' (or
    'b.a'), and the job says what it drops. (A regex that is a pattern's name, 'gpt2', is a 400
    at submit: tokenizer.regex_check refuses it.)"""
    text = "ab ab ab abab cd ab " * 20
    resp = server.train(text=text, vocab_size="260", pattern="custom", regex=regex)
    assert resp.status_code == 202, resp.text
    final = server.wait(resp.json()["job"], lambda s: s["state"] in ("done", "failed", "cancelled"))
    assert final["state"] == "done", final
    loaded = Tokenizer.load(server.data_dir / final["tokenizer"])
    assert loaded.pattern_regex == regex
    with pytest.warns(UserWarning, match="does not match"):
        assert loaded.merges == train(text, 260, regex=regex).merges
    assert any("does not match" in w for w in final["warnings"])


def test_a_reconnect_after_the_final_event_gets_204(server):
    """EventSource reconnects whenever a stream closes, and the server sent the final event
    again each time: a plain client asked every second for ever. A reconnect that already holds
    the final event (Last-Event-ID) now gets 204, which stops it; one that does not gets it."""
    resp = server.train(text="ab ab ab cd " * 50, vocab_size="260")
    job = resp.json()["job"]
    final = server.wait(job, lambda s: s["state"] in ("done", "failed", "cancelled"))
    url = f"{server.base}/api/jobs/{job}/events"
    got = server.requests.get(url, headers={"Last-Event-ID": str(final["version"])}, timeout=30)
    assert got.status_code == 204 and got.content == b""
    for last in (str(final["version"] - 1), "x", "9" * 40, None):  # older, junk, too long, none
        headers = {} if last is None else {"Last-Event-ID": last}
        got = server.requests.get(url, headers=headers, timeout=30)
        assert got.status_code == 200 and got.headers["Content-Type"].startswith("text/event-stream")
        assert f"event: {final['state']}" in got.text


def test_a_training_that_stops_short_of_vocab_size_says_so(server):
    """vocab_size 5000 on a few KB stops when no pair is left twice: the job was "done" with
    its N merges, no word that it is not the size asked for (extension and the CLI say so).
    Special tokens come on top of vocab_size, so they are not counted in the sizes compared."""
    text = SMALL.read_text(encoding="utf-8")[:3000]
    expected = train(text, 5000, special_tokens=["<|a|>", "<|b|>"])
    merges = len(expected.merges)
    resp = server.train(text=text, vocab_size="5000", name="short", special_tokens="<|a|>,<|b|>")
    assert resp.status_code == 202, resp.text
    final = server.wait(resp.json()["job"], lambda s: s["state"] in ("done", "failed", "cancelled"))
    assert final["state"] == "done", final
    assert final["result"]["merges"] == merges < 5000 - 256
    assert final["warnings"] == [
        f"stopped after {merges:,} of 4,744 merges (vocab_size {256 + merges:,} of 5,000): "
        f"{expected.metadata['stop_reason']}; train on more text (or a lower min_frequency) to get more"
    ]
    done = server.wait(
        server.train(text=text, vocab_size="300").json()["job"], lambda s: s["state"] == "done"
    )
    assert done["warnings"] == []  # reached: no warning


def test_non_utf8_refused_before_queueing(server, tmp_path):
    bad = tmp_path / "mixed.txt"
    bad.write_bytes(SMALL.read_bytes()[:1000] + "caf\xe9".encode("latin-1") + b" more")
    before = server.get("/api/jobs").json()["jobs"]
    resp = server.train([SMALL, bad], vocab_size="500")
    assert resp.status_code == 400
    assert "mixed.txt" in resp.json()["error"] and "offset 1003" in resp.json()["error"]
    assert server.get("/api/jobs").json()["jobs"] == before


def test_queue_429_concurrency_and_cancel_leave_nothing(server):
    before = server.files()
    long_job = server.train([BIG], vocab_size="30000", name="long-one")
    assert long_job.status_code == 202, long_job.text
    job = long_job.json()["job"]
    server.wait(job, lambda s: s["state"] == "running" and s["progress"]["phase"] in ("count", "merge"))

    queued = server.train([SMALL], vocab_size="300", name="waiting")
    assert queued.status_code == 202
    qsnap = server.get(f"/api/jobs/{queued.json()['job']}").json()
    assert qsnap["state"] == "queued" and qsnap["queue_position"] == 1
    full = server.train([SMALL], vocab_size="300")
    assert full.status_code == 429 and "too many training jobs" in full.json()["error"]
    assert server.train(text="x y", vocab_size="300", name="waiting").status_code in (409, 429)

    # 50 concurrent API requests while the job runs: all answered, none waits for training.
    paths = ["/api/health", "/api/tokenizers", f"/api/jobs/{job}", "/api/jobs", "/api/tokenizers/cl100k_base"]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(lambda i: server.get(paths[i % len(paths)]).status_code, range(50)))
    elapsed = time.monotonic() - started
    assert codes == [200] * 50
    assert elapsed < 20, elapsed
    assert server.get(f"/api/jobs/{job}").json()["state"] == "running"

    # Cancel the queued one, then the running one.
    cancelled = server.delete(f"/api/jobs/{queued.json()['job']}")
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    pid = server.pid(job)
    resp = server.delete(f"/api/jobs/{job}")
    assert resp.status_code == 200 and resp.json()["state"] == "cancelled"
    assert not alive(pid)
    events = list(server.events(job))  # a finished job's stream ends at once with its final state
    assert events[-1]["state"] == "cancelled"
    assert server.delete(f"/api/jobs/{job}").status_code == 409
    assert server.files() == before
    assert not list((server.data_dir / ".jobs").iterdir())


def test_cancel_kills_the_counting_pool(tmp_path):
    """With workers=2 the trainer counts in a process pool: cancel must stop all of it."""
    psutil = pytest.importorskip("psutil")
    live = LiveServer(tmp_path / "data", TRAIN_WORKERS=2)
    try:
        resp = live.train([BIG], vocab_size="20000")
        job = resp.json()["job"]
        live.wait(job, lambda s: s["state"] == "running")
        parent = psutil.Process(live.pid(job))
        deadline = time.monotonic() + 30
        while not parent.children(recursive=True) and time.monotonic() < deadline:
            time.sleep(0.05)
        family = [parent, *parent.children(recursive=True)]
        assert len(family) > 1, "the trainer started no pool"
        assert live.delete(f"/api/jobs/{job}").json()["state"] == "cancelled"
        gone, alive = psutil.wait_procs(family, timeout=10)
        assert not alive, alive
        assert live.files() == []
    finally:
        live.close()


def test_killed_worker_fails_cleanly(tmp_path):
    """A worker that dies (the OOM killer, say) fails its job and leaves no files."""
    live = LiveServer(tmp_path / "data")
    try:
        job = live.train([BIG], vocab_size="20000").json()["job"]
        live.wait(job, lambda s: s["state"] == "running" and s["progress"]["phase"] in ("count", "merge"))
        os.kill(live.pid(job), signal.SIGKILL)
        final = live.wait(job, lambda s: s["state"] != "running")
        assert final["state"] == "failed"
        assert "killed by signal 9" in final["error"]
        assert live.files() == []
        # The server goes on: the next job runs.
        job2 = live.train(text="ab ab ab ab cd cd", vocab_size="258", name="after").json()["job"]
        assert (
            live.wait(job2, lambda s: s["state"] != "running" and s["state"] != "queued")["state"] == "done"
        )
        assert live.files() == ["after.json", "after.tiktoken"]
    finally:
        live.close()


def test_restart_keeps_trained_tokenizers(server, data_dir):
    names = sorted(t["name"] for t in server.get("/api/tokenizers").json()["trained"])
    assert "taylorswift-1000" in names
    again = LiveServer(data_dir)
    try:
        assert sorted(t["name"] for t in again.get("/api/tokenizers").json()["trained"]) == names
        assert (
            again.get("/api/tokenizers/taylorswift-1000.tiktoken").content
            == (data_dir / "taylorswift-1000.tiktoken").read_bytes()
        )
        assert again.get("/api/jobs").json()["jobs"] == []  # jobs are per server run
        # Deleting through the new server removes it for good.
        assert again.delete("/api/tokenizers/shakes.v1").status_code == 200
        assert not (data_dir / "shakes.v1.json").exists()
    finally:
        again.close()


def test_cancel_right_after_submit(tmp_path):
    """Cancel before the worker has even started up (no process group yet): still stops at once."""
    live = LiveServer(tmp_path / "data")
    try:
        for _ in range(3):
            job = live.train([BIG], vocab_size="30000").json()["job"]
            pid = live.pid(job)
            started = time.monotonic()
            resp = live.delete(f"/api/jobs/{job}")
            assert resp.status_code == 200 and resp.json()["state"] == "cancelled"
            assert time.monotonic() - started < 2.5  # not the 3 s SIGTERM grace period
            assert not alive(pid)
        assert live.files() == []
    finally:
        live.close()
