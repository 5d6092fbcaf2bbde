"""Training jobs: a queue, one spawned process per running job, and the files they produce.

No HTTP here: the manager raises its own exceptions (`QueueFull`, `JobNotFound`, `NameTaken`,
`AlreadyFinished`), which the views turn into status codes (errors.py).

Why a failed or cancelled job leaves nothing behind: a job works in its own temp folder
(DATA_DIR/.jobs/PID-ID: the uploads, then the trainer's output), and only a finished job's
two files are renamed into DATA_DIR, the .tiktoken first and the .json last. A tokenizer is
listed only when its .json exists, so the rename of the .json is the commit. Temp folders
whose server process is gone (kill -9) are removed when the next server starts.

A job that runs longer than `time_limit` seconds (config JOB_TIME_LIMIT) is stopped like a
cancelled one and ends `failed`, with an error that gives the limit and how to raise it.

Every state change happens under `lock` and bumps the job's `version`, which is what SSE
streams wait on (`wait_for_change`).
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import secrets
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tokenizer.encodings import list_encodings

from .config import DEFAULTS, JOBS_DIRNAME
from .job_process import run_job

FINAL_STATES = ("done", "failed", "cancelled")
PRIVATE_PARAMS = ("workers", "base_stem")  # job parameters not shown: a setting, a temp path
SIGTERM_GRACE = 3.0  # seconds a cancelled job gets to exit before SIGKILL
SIGKILL_WAIT = 5.0  # seconds to wait for the kernel to reap it after SIGKILL
JOIN_AFTER_EOF = 10.0  # seconds: the child closed its pipe, so it is exiting


class JobError(Exception):
    """Base of the job manager's refusals; the message says what to do instead."""


class QueueFull(JobError):
    """MAX_QUEUED_JOBS jobs are already waiting."""


class JobNotFound(JobError):
    """No job with that id in this server run."""


class NameTaken(JobError):
    """The tokenizer name belongs to a file, a reference encoding or an unfinished job."""


class AlreadyFinished(JobError):
    """The job is done, failed or cancelled: nothing to cancel."""


class Job:
    """One training job; `version` increases on every change so SSE streams can wait on it."""

    def __init__(
        self, job_id: str, job_dir: Path, name: str, params: dict[str, Any], corpus, corpus_bytes: int
    ):
        self.id = job_id
        self.dir = job_dir
        self.name = name
        self.params = params
        self.corpus: list[tuple[str, str]] = corpus  # (path, label shown to the user)
        self.corpus_bytes = corpus_bytes
        self.state = "queued"
        # The keys of every progress report (job_process), so a client reads progress["phase"]
        # at every stage: a queued job's was null.
        self.progress: dict[str, Any] = initial_progress("queued")
        self.error: str | None = None
        self.warnings: list[str] = []  # e.g. a custom regex that drops text (job_process)
        self.result: dict[str, Any] | None = None
        self.created = time.time()
        self.started: float | None = None
        self.finished: float | None = None
        self.process: multiprocessing.process.BaseProcess | None = None
        self.version = 0

    def snapshot(self, queue_position: int | None = None) -> dict[str, Any]:
        now = self.finished or time.time()
        return {
            "id": self.id,
            "state": self.state,
            "name": self.name,
            "tokenizer": self.name if self.state == "done" else None,
            "progress": self.progress,
            "error": self.error,
            "warnings": self.warnings,
            "queue_position": queue_position,
            "params": {k: v for k, v in self.params.items() if k not in PRIVATE_PARAMS},
            "corpus": {"files": [label for _, label in self.corpus], "bytes": self.corpus_bytes},
            "result": self.result,
            "created": self.created,
            "started": self.started,
            "finished": self.finished,
            "elapsed": (now - self.started) if self.started else None,
            "version": self.version,
        }


class JobManager:
    """Queue + worker processes + the files they produce; every state change under `lock`."""

    def __init__(
        self,
        data_dir: Path,
        *,
        max_queued: int,
        max_running: int,
        history: int,
        time_limit: float = DEFAULTS["JOB_TIME_LIMIT"],
    ) -> None:
        self.data_dir = data_dir
        self.time_limit = float(time_limit)
        self.jobs_dir = data_dir / JOBS_DIRNAME
        self.max_queued = int(max_queued)
        self.max_running = int(max_running)
        self.history = int(history)
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.jobs: dict[str, Job] = {}
        self.queue: list[Job] = []
        self.arriving = 0  # submissions whose body is still being read (reserve)
        self._ctx = multiprocessing.get_context("spawn")
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._remove_stale_job_dirs()
        atexit.register(self.shutdown)

    def _remove_stale_job_dirs(self) -> None:
        """Temp folders of jobs whose server process is gone (crash, kill -9): never finished."""
        for path in self.jobs_dir.iterdir():
            pid_str = path.name.split("-", 1)[0]
            if pid_str.isdigit() and _pid_alive(int(pid_str)):
                continue
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)

    def new_job_dir(self) -> Path:
        job_dir = self.jobs_dir / f"{os.getpid()}-{secrets.token_hex(8)}"
        job_dir.mkdir()
        return job_dir

    # -- queries

    def check_capacity(self) -> None:
        """QueueFull unless one more job fits: MAX_QUEUED_JOBS waiting plus the free running
        slots, the submissions still being sent (`reserve`) counted as waiting."""
        with self.lock:
            self._check_room(self.arriving)

    @contextlib.contextmanager
    def reserve(self) -> Iterator[None]:
        """Hold a place for a submission while its body arrives (check_capacity first): 20
        concurrent uploads all passed the check on an empty queue, were each read to the end
        (up to MAX_UPLOAD_BYTES on disk apiece) and only then did 15 of them get the 429."""
        with self.lock:
            self.check_capacity()
            self.arriving += 1
        try:
            yield
        finally:
            with self.lock:
                self.arriving -= 1

    def _check_room(self, arriving: int) -> None:
        running = sum(1 for j in self.jobs.values() if j.state == "running")
        if len(self.queue) + arriving >= self.max_queued + max(0, self.max_running - running):
            being_sent = f", {arriving} more being sent" if arriving else ""
            raise QueueFull(
                f"too many training jobs waiting ({len(self.queue)} queued{being_sent}); "
                "wait for one to finish or cancel one"
            )

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise JobNotFound(f"no job {job_id[:40]!r} (jobs are forgotten when the server restarts)")
        return job

    def snapshot(self, job: Job) -> dict[str, Any]:
        with self.lock:
            position = self.queue.index(job) + 1 if job in self.queue else None
            return job.snapshot(position)

    def snapshots(self) -> list[dict[str, Any]]:
        with self.lock:
            return [self.snapshot(j) for j in self.jobs.values()]

    def reserved_names(self) -> set[str]:
        """Lower-cased names taken by files, reference encodings or unfinished jobs."""
        names = {p.name[: -len(".json")].lower() for p in self.data_dir.glob("*.json")}
        names |= {p.name[: -len(".tiktoken")].lower() for p in self.data_dir.glob("*.tiktoken")}
        names |= {n.lower() for n in list_encodings()}
        names |= {j.name.lower() for j in self.jobs.values() if j.state in ("queued", "running")}
        return names

    # -- changes

    def submit(
        self,
        *,
        job_dir: Path,
        name: str | None,
        auto_name: Callable[[set[str]], str],
        params: dict[str, Any],
        corpus: list[tuple[str, str]],
        corpus_bytes: int,
    ) -> Job:
        """Queue a job whose corpus already sits in `job_dir` (from new_job_dir); start it if a
        slot is free. `name=None` asks `auto_name(taken names)` for one."""
        with self.lock:
            self._check_room(0)  # its own reservation, if any, is this job
            taken = self.reserved_names()
            if name is None:
                name = auto_name(taken)
            elif name.lower() in taken:
                if name.lower() in {n.lower() for n in list_encodings()}:
                    raise NameTaken(f"{name!r} is the name of a reference encoding; choose another name")
                raise NameTaken(f"a tokenizer named {name!r} already exists (or is being trained)")
            job = Job(job_dir.name.split("-", 1)[1], job_dir, name, params, corpus, corpus_bytes)
            self.jobs[job.id] = job
            self.queue.append(job)
            self._touch(job)
            self._forget_old()
            self._start_queued()
            return job

    def cancel(self, job: Job) -> None:
        if not self._stop(job, "cancelled", None):
            raise AlreadyFinished(f"job {job.id} already {job.state}; nothing to cancel")

    def _stop(self, job: Job, state: str, error: str | None) -> bool:
        """Put an unfinished job in `state`, kill its processes, remove its folder.
        False if it had finished already."""
        with self.lock:
            if job.state in FINAL_STATES:
                return False
            process = job.process
            if job in self.queue:
                self.queue.remove(job)
            job.state = state  # from here on the monitor discards whatever arrives
            job.error = error
            job.finished = time.time()
            job.process = None
        if process is not None:
            _kill_process_group(process)
        with self.lock:
            shutil.rmtree(job.dir, ignore_errors=True)
            self._touch(job)
            self._start_queued()
        return True

    def shutdown(self) -> None:
        """Stop every job (server exit): their processes die, their temp folders go."""
        with self.lock:
            active = [j for j in self.jobs.values() if j.state in ("queued", "running")]
        for job in active:
            with contextlib.suppress(AlreadyFinished):
                self.cancel(job)

    def wait_for_change(self, job: Job, seen_version: int, timeout: float) -> None:
        with self.lock:
            if job.version == seen_version:
                self.changed.wait(timeout)

    # -- internals (called with the lock held)

    def _touch(self, job: Job) -> None:
        job.version += 1
        self.changed.notify_all()

    def _forget_old(self) -> None:
        finished = [j for j in self.jobs.values() if j.state in FINAL_STATES]
        for job in finished[: max(0, len(finished) - self.history)]:
            del self.jobs[job.id]

    def _start_queued(self) -> None:
        running = sum(1 for j in self.jobs.values() if j.state == "running")
        while self.queue and running < self.max_running:
            job = self.queue.pop(0)
            self._start(job)
            running += 1
        for queued in self.queue:
            self._touch(queued)  # their queue position changed

    def _start(self, job: Job) -> None:
        out_dir = job.dir / "out"
        try:
            out_dir.mkdir()
        except OSError as e:  # its folder (with the uploads) removed by hand while it waited: was
            # an exception out of whichever request or monitor thread started it, a 500, and the
            # job left "queued" for ever, out of the queue, holding its name
            self._finish(
                job,
                "failed",
                f"could not start: the job's folder in {JOBS_DIRNAME} is gone ({e.strerror}); "
                "it holds the uploaded corpus, so send the job again",
            )
            return
        spec = {
            **job.params,
            "corpus": job.corpus,
            "name": job.name,
            "out_dir": str(out_dir),
            "parent_pid": os.getpid(),
        }
        receiver, sender = self._ctx.Pipe(duplex=False)
        process = self._ctx.Process(target=run_job, args=(sender, spec), name=f"bpe-train-{job.id}")
        job.state = "running"
        job.started = time.time()
        job.progress = initial_progress("starting")
        try:
            process.start()
        except Exception as e:
            sender.close()
            receiver.close()
            self._finish(job, "failed", f"could not start the training process: {e}")
            return
        sender.close()  # the child holds the only writing end: EOF when it exits
        job.process = process
        self._touch(job)
        threading.Thread(
            target=self._monitor, args=(job, receiver), name=f"monitor-{job.id}", daemon=True
        ).start()

    def _monitor(self, job: Job, receiver: Connection) -> None:
        """Reads the child's messages until it exits, or stops it at the time limit; then
        finalizes the job."""
        outcome: tuple[str, Any] | None = None
        deadline = time.monotonic() + self.time_limit
        try:
            while True:
                try:
                    if not receiver.poll(max(0.0, deadline - time.monotonic())):
                        self._stop(job, "failed", self._over_time_message())
                        return
                    kind, payload = receiver.recv()
                except (EOFError, OSError):
                    break
                if kind in ("progress", "warning"):
                    with self.lock:
                        if job.state == "running":
                            if kind == "warning":
                                job.warnings.append(payload)
                            else:
                                job.progress = payload
                            self._touch(job)
                else:
                    outcome = (kind, payload)
        finally:
            receiver.close()
        process = job.process
        if process is not None:
            process.join(JOIN_AFTER_EOF)
        with self.lock:
            if job.state != "running":
                return  # cancelled meanwhile: cancel() cleaned up
            if outcome and outcome[0] == "done":
                self._install(job, outcome[1])
            elif outcome and outcome[0] == "error":
                self._finish(job, "failed", outcome[1])
            else:
                code = process.exitcode if process is not None else None
                why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
                hint = " (out of memory?)" if code == -signal.SIGKILL else ""
                self._finish(job, "failed", f"the training process died ({why}){hint}")

    def _over_time_message(self) -> str:
        return (
            f"stopped: the job ran longer than the time limit of {_duration(self.time_limit)} "
            f"(JOB_TIME_LIMIT = {self.time_limit:g} s); raise it with server.py --job-time-limit "
            "SECONDS (or create_app({'JOB_TIME_LIMIT': ...})), or train on less text or a smaller "
            "vocabulary. A custom regex that backtracks on the corpus can also run this long"
        )

    def _install(self, job: Job, result: dict[str, Any]) -> None:
        """Rename the finished files into DATA_DIR: .tiktoken first, then .json (the commit)."""
        out_dir = job.dir / "out"
        src_tt, src_json = out_dir / f"{job.name}.tiktoken", out_dir / f"{job.name}.json"
        dst_tt, dst_json = self.data_dir / src_tt.name, self.data_dir / src_json.name
        if not (src_tt.is_file() and src_json.is_file()):
            self._finish(job, "failed", "the training process ended without writing its files")
            return
        if dst_json.exists() or dst_tt.exists():
            self._finish(
                job, "failed", f"a tokenizer named {job.name!r} appeared while training; nothing overwritten"
            )
            return
        try:
            os.replace(src_tt, dst_tt)
            os.replace(src_json, dst_json)
        except OSError as e:
            for path in (dst_tt, dst_json):
                with contextlib.suppress(OSError):
                    path.unlink()
            self._finish(job, "failed", f"could not save the tokenizer: {e.strerror}")
            return
        _fsync_dir(self.data_dir)  # the renames on disk before "done" and before the temp folder goes
        job.result = result
        progress = dict(job.progress or {})
        progress.update(phase="done", percent=100.0, eta=0)
        job.progress = progress
        self._finish(job, "done", None)

    def _finish(self, job: Job, state: str, error: str | None) -> None:
        job.state = state
        job.error = error
        job.finished = time.time()
        job.process = None
        shutil.rmtree(job.dir, ignore_errors=True)
        self._touch(job)
        self._start_queued()


def initial_progress(phase: str) -> dict[str, Any]:
    """Progress before the training process reports any: nothing done, nothing known."""
    return {"phase": phase, "done": 0, "total": None, "percent": None, "rate": None, "eta": None}


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    if seconds >= 60:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


def _fsync_dir(folder: Path) -> None:
    """Make the renames into `folder` durable. The files' bytes were synced when written, but
    not the renames: after a power cut they could be undone while the job folder's removal was
    not, and the next start removes what is left of the job there: a "done" tokenizer lost.
    A system without directory fsync (it raises) keeps its own guarantees."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_process_group(process: multiprocessing.process.BaseProcess) -> None:
    """SIGTERM the job's process group (the trainer may run a counting pool), then SIGKILL.

    Every signal goes out while the job process is alive or unreaped, so its pid (and
    process group id) cannot have been reused by an unrelated process.

    The child makes itself a group leader first thing, but a cancel can arrive before that:
    then there is no group yet (and no pool either), so the process itself is signalled too.
    """
    pid = process.pid
    if pid is None:
        return
    for sig, wait in ((signal.SIGTERM, SIGTERM_GRACE), (signal.SIGKILL, SIGKILL_WAIT)):
        _signal_job(pid, sig)
        process.join(wait)
        if process.exitcode is not None:
            break
    # No sweep after join(): the pid is reaped by then and may belong to someone else.


def _signal_job(pid: int, sig: int) -> None:
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)  # pgid == pid once the child called setpgrp
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)
