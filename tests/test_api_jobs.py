"""Training through the real server: worker processes, SSE progress, downloads, cancel, kill, restart.

Runs the real trainer in spawned processes on ../shared/corpora; small vocabularies where
a job must finish, a big corpus and vocabulary where it must still be running when we act.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

requests = pytest.importorskip("requests")
pytest.importorskip("tokenizer.train")

from server import create_app  # noqa: E402
from tests.helpers import CORPORA  # noqa: E402
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


class Live:
    """A create_app() server on an ephemeral port, with helpers that send our own Origin."""

    def __init__(self, data_dir: Path, **config) -> None:
        from werkzeug.serving import make_server

        self.data_dir = data_dir
        self.app = create_app(
            {"DATA_DIR": data_dir, "WEB_DIR": data_dir / "no-web", "TRAIN_WORKERS": 1, **config}
        )
        self.srv = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.thread = threading.Thread(
            target=self.srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.srv.server_port}"
        self.origin = {"Origin": self.base}

    def close(self) -> None:
        self.app.extensions["bpe_jobs"].shutdown()
        self.srv.shutdown()
        self.thread.join(5)

    def get(self, path: str, **kw):
        return requests.get(self.base + path, timeout=30, **kw)

    def delete(self, path: str):
        return requests.delete(self.base + path, headers=self.origin, timeout=30)

    def train(self, files: list[Path] = (), **fields):
        handles = [("corpus", (p.name, open(p, "rb"), "text/plain")) for p in files]
        try:
            return requests.post(
                self.base + "/api/train", files=handles or None, data=fields, headers=self.origin, timeout=60
            )
        finally:
            for _, (_, f, _) in handles:
                f.close()

    def events(self, job: str) -> Iterator[dict]:
        """The SSE stream, parsed: one dict per `data:` line, until the server closes it."""
        with requests.get(f"{self.base}/api/jobs/{job}/events", stream=True, timeout=120) as resp:
            assert resp.status_code == 200
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            for line in resp.iter_lines():
                if line.startswith(b"data: "):
                    yield json.loads(line[6:])

    def wait(self, job: str, predicate, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            snap = self.get(f"/api/jobs/{job}").json()
            if predicate(snap):
                return snap
            time.sleep(0.05)
        raise AssertionError(f"job {job} never got there: {snap}")

    def pid(self, job: str) -> int:
        process = self.app.extensions["bpe_jobs"].jobs[job].process
        assert process is not None and process.pid
        return process.pid

    def files(self) -> list[str]:
        """Everything in the data folder, temp folders included."""
        return sorted(
            str(p.relative_to(self.data_dir)) for p in self.data_dir.rglob("*") if p.name != ".jobs"
        )


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("jobs-data")


@pytest.fixture(scope="module")
def live(data_dir) -> Iterator[Live]:
    server = Live(data_dir, MAX_RUNNING_JOBS=1, MAX_QUEUED_JOBS=1)
    yield server
    server.close()


def tiktoken_encoding(live: Live, name: str, tmp_path: Path):
    pytest.importorskip("tiktoken")
    import tiktoken
    import tiktoken.load

    path = tmp_path / f"{name}.tiktoken"
    path.write_bytes(live.get(f"/api/tokenizers/{name}.tiktoken").content)
    meta = live.get(f"/api/tokenizers/{name}.json").json()
    return tiktoken.Encoding(
        name,
        pat_str=meta["pattern_regex"],
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens=meta["special_tokens"],
    )


def test_train_progress_done_download(live, tmp_path):
    resp = live.train([SMALL], vocab_size="1000", special_tokens="<|endoftext|>\n<|pad|>")
    assert resp.status_code == 202, resp.text
    job, name = resp.json()["job"], resp.json()["name"]
    assert name == "taylorswift-1000"
    assert resp.headers["Location"] == f"/api/jobs/{job}"

    events = list(live.events(job))
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

    snap = live.get(f"/api/jobs/{job}").json()
    assert snap["state"] == "done" and snap["tokenizer"] == name and snap["error"] is None
    assert snap["result"]["vocab_size"] == 1002 and snap["result"]["merges"] == 744
    assert snap["corpus"] == {"files": ["taylorswift.txt"], "bytes": SMALL.stat().st_size}

    # Files are in place, complete, and nothing else is left behind.
    assert live.files() == [f"{name}.json", f"{name}.tiktoken"]
    loaded = Tokenizer.load(live.data_dir / name)
    expected = train(SMALL.read_text(encoding="utf-8"), 1000, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert loaded.merges == expected.merges
    assert loaded.special_tokens == {"<|endoftext|>": 1000, "<|pad|>": 1001}

    entry = next(t for t in live.get("/api/tokenizers").json()["trained"] if t["name"] == name)
    assert entry["vocab_size"] == 1002 and entry["metadata"]["corpus_files"] == ["taylorswift.txt"]

    enc = tiktoken_encoding(live, name, tmp_path)
    for text in SAMPLES:
        assert enc.encode(text, allowed_special="all") == loaded.encode(text, allowed_special="all")
        assert enc.encode_ordinary(text) == loaded.encode_ordinary(text)


def test_text_field_custom_regex_lexical(live):
    text = (CORPORA / "tinyshakespeare.txt").read_text(encoding="utf-8")[:60_000]
    regex = r" ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+"
    resp = live.train(
        text=text, vocab_size="400", name="shakes.v1", pattern="custom", regex=regex, tie_break="lexical"
    )
    assert resp.status_code == 202, resp.text
    job = resp.json()["job"]
    final = live.wait(job, lambda s: s["state"] in ("done", "failed", "cancelled"))
    assert final["state"] == "done", final
    loaded = Tokenizer.load(live.data_dir / "shakes.v1")
    assert loaded.pattern_regex == regex
    assert loaded.merges == train(text, 400, pattern=regex, tie_break="lexical").merges
    assert loaded.metadata["training"]["tie_break"] == "lexical"
    # The same name again is a collision now.
    again = live.train(text="more text here", vocab_size="300", name="shakes.v1")
    assert again.status_code == 409 and "already exists" in again.json()["error"]


def test_non_utf8_refused_before_queueing(live, tmp_path):
    bad = tmp_path / "mixed.txt"
    bad.write_bytes(SMALL.read_bytes()[:1000] + "caf\xe9".encode("latin-1") + b" more")
    before = live.get("/api/jobs").json()["jobs"]
    resp = live.train([SMALL, bad], vocab_size="500")
    assert resp.status_code == 400
    assert "mixed.txt" in resp.json()["error"] and "offset 1003" in resp.json()["error"]
    assert live.get("/api/jobs").json()["jobs"] == before


def test_queue_429_concurrency_and_cancel_leave_nothing(live):
    before = live.files()
    long_job = live.train([BIG], vocab_size="30000", name="long-one")
    assert long_job.status_code == 202, long_job.text
    job = long_job.json()["job"]
    live.wait(job, lambda s: s["state"] == "running" and s["progress"]["phase"] in ("count", "merge"))

    queued = live.train([SMALL], vocab_size="300", name="waiting")
    assert queued.status_code == 202
    qsnap = live.get(f"/api/jobs/{queued.json()['job']}").json()
    assert qsnap["state"] == "queued" and qsnap["queue_position"] == 1
    full = live.train([SMALL], vocab_size="300")
    assert full.status_code == 429 and "too many training jobs" in full.json()["error"]
    assert live.train(text="x y", vocab_size="300", name="waiting").status_code in (409, 429)

    # 50 concurrent API requests while the job runs: all answered, none waits for training.
    paths = ["/api/health", "/api/tokenizers", f"/api/jobs/{job}", "/api/jobs", "/api/tokenizers/cl100k_base"]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(lambda i: live.get(paths[i % len(paths)]).status_code, range(50)))
    elapsed = time.monotonic() - started
    assert codes == [200] * 50
    assert elapsed < 20, elapsed
    assert live.get(f"/api/jobs/{job}").json()["state"] == "running"

    # Cancel the queued one, then the running one.
    cancelled = live.delete(f"/api/jobs/{queued.json()['job']}")
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    pid = live.pid(job)
    resp = live.delete(f"/api/jobs/{job}")
    assert resp.status_code == 200 and resp.json()["state"] == "cancelled"
    assert not _alive(pid)
    events = list(live.events(job))  # a finished job's stream ends at once with its final state
    assert events[-1]["state"] == "cancelled"
    assert live.delete(f"/api/jobs/{job}").status_code == 409
    assert live.files() == before
    assert not list((live.data_dir / ".jobs").iterdir())


def test_cancel_kills_the_counting_pool(tmp_path):
    """With workers=2 the trainer counts in a process pool: cancel must stop all of it."""
    psutil = pytest.importorskip("psutil")
    live = Live(tmp_path / "data", TRAIN_WORKERS=2)
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
    live = Live(tmp_path / "data")
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


def test_restart_keeps_trained_tokenizers(live, data_dir):
    names = sorted(t["name"] for t in live.get("/api/tokenizers").json()["trained"])
    assert "taylorswift-1000" in names
    again = Live(data_dir)
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_cli_prints_url_and_sigterm_cancels_jobs(tmp_path):
    """`python server.py --port 0`: prints its URL, serves, and on SIGTERM stops its jobs."""
    import subprocess

    psutil = pytest.importorskip("psutil")
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "server.py"), "--port", "0", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        match = re.match(r"BPE Playground: (http://127\.0\.0\.1:\d+)/$", first.strip())
        assert match, first
        base = match.group(1)
        assert requests.get(base + "/api/health", timeout=10).json()["status"] == "ok"
        with open(BIG, "rb") as f:
            job = requests.post(
                base + "/api/train", files={"corpus": f}, data={"vocab_size": "30000"}, timeout=60
            ).json()["job"]
        deadline = time.monotonic() + 30
        while requests.get(f"{base}/api/jobs/{job}", timeout=10).json()["state"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        family = psutil.Process(proc.pid).children(recursive=True)
        assert family, "no training process"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert "stopping" in proc.stdout.read()
        _, alive = psutil.wait_procs(family, timeout=10)
        assert not alive
        assert [p.name for p in data.iterdir()] == [".jobs"] and not list((data / ".jobs").iterdir())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cancel_right_after_submit(tmp_path):
    """Cancel before the worker has even started up (no process group yet): still stops at once."""
    live = Live(tmp_path / "data")
    try:
        for _ in range(3):
            job = live.train([BIG], vocab_size="30000").json()["job"]
            pid = live.pid(job)
            started = time.monotonic()
            resp = live.delete(f"/api/jobs/{job}")
            assert resp.status_code == 200 and resp.json()["state"] == "cancelled"
            assert time.monotonic() - started < 2.5  # not the 3 s SIGTERM grace period
            assert not _alive(pid)
        assert live.files() == []
    finally:
        live.close()
