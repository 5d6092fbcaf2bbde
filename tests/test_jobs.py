"""playground/jobs.py without HTTP: the manager's own refusals, names, queue and temp folders.

These jobs never start a process: `max_running=0` keeps every job in the queue, which is
all the bookkeeping needs. Training through the server is tested in test_api_jobs.py.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from playground import create_app
from playground.jobs import AlreadyFinished, JobManager, JobNotFound, NameTaken, QueueFull
from tests.server_helpers import save_tokenizer


@pytest.fixture
def manager(tmp_path: Path):
    jobs = JobManager(tmp_path / "data", max_queued=2, max_running=0, history=100)
    yield jobs
    jobs.shutdown()


def submit(jobs: JobManager, name: str | None = None):
    """A queued job with a one-line corpus in its own temp folder."""
    job_dir = jobs.new_job_dir()
    (job_dir / "text.txt").write_text("ab ab ab", encoding="utf-8")
    return jobs.submit(
        job_dir=job_dir,
        name=name,
        auto_name=lambda taken: f"auto-{len(taken)}",
        params={"vocab_size": 258},
        corpus=[(str(job_dir / "text.txt"), "the text field")],
        corpus_bytes=8,
    )


def test_queue_full_is_its_own_exception(manager):
    first, second = submit(manager, "one"), submit(manager, "two")
    assert [manager.snapshot(j)["queue_position"] for j in (first, second)] == [1, 2]
    with pytest.raises(QueueFull, match=r"too many training jobs waiting \(2 queued\)"):
        manager.check_capacity()
    with pytest.raises(QueueFull):
        submit(manager, "three")
    assert sorted(j.name for j in manager.jobs.values()) == ["one", "two"]


def test_unknown_job_is_job_not_found(manager):
    with pytest.raises(JobNotFound, match="no job 'nope' .*forgotten when the server restarts"):
        manager.get("nope")
    job = submit(manager, "here")
    assert manager.get(job.id) is job


def test_taken_names_are_name_taken(manager):
    (manager.data_dir / "saved.json").write_text("{}")
    submit(manager, "queued-one")
    for name, fragment in [
        ("SAVED", "already exists"),
        ("queued-ONE", "being trained"),
        ("cl100k_base", "reference encoding"),
    ]:
        with pytest.raises(NameTaken, match=fragment):
            submit(manager, name)
    assert submit(manager, None).name.startswith("auto-")  # no name: the manager asks for one


def test_cancel_twice_is_already_finished_and_leaves_no_folder(manager):
    job = submit(manager, "gone")
    assert job.dir.is_dir()
    manager.cancel(job)
    assert manager.snapshot(job)["state"] == "cancelled" and not job.dir.exists()
    with pytest.raises(AlreadyFinished, match=f"job {job.id} already cancelled"):
        manager.cancel(job)
    assert manager.queue == []


def test_shutdown_cancels_every_unfinished_job(manager):
    jobs = [submit(manager, "a"), submit(manager, "b")]
    manager.shutdown()
    assert [j.state for j in jobs] == ["cancelled", "cancelled"]
    assert list(manager.jobs_dir.iterdir()) == []


def test_stale_job_folders_removed_at_start(tmp_path):
    data = tmp_path / "data"
    stale = data / ".jobs" / "999999999-deadbeefdeadbeef"
    (stale / "out").mkdir(parents=True)
    (stale / "out" / "x.tiktoken").write_text("partial")
    ours = data / ".jobs" / f"{os.getpid()}-0123456789abcdef"  # a job of a running server
    ours.mkdir()
    JobManager(data, max_queued=1, max_running=1, history=1).shutdown()
    assert not stale.exists() and ours.exists()


def test_the_app_removes_stale_folders_too(server_dirs):
    web, data = server_dirs
    stale = data / ".jobs" / "999999999-deadbeefdeadbeef"
    (stale / "out").mkdir(parents=True)
    create_app({"WEB_DIR": web, "DATA_DIR": data})
    assert not stale.exists()


def test_a_queued_job_whose_folder_was_removed_fails_when_its_turn_comes(manager):
    """Its temp folder (the uploads) deleted by hand while it waited: starting it raised out of
    the request that freed the slot (a 500 on another job's cancel) and left it "queued" for
    ever, out of the queue, with its name reserved."""
    gone, other = submit(manager, "gone"), submit(manager, "other")
    shutil.rmtree(gone.dir)
    manager.max_running = 1
    manager.cancel(other)  # frees nothing, but starts the queue: `gone` is first
    assert gone.state == "failed" and "folder" in gone.error and "send the job again" in gone.error
    assert manager.queue == [] and "gone" not in manager.reserved_names()


def test_submissions_being_sent_hold_their_place_in_the_queue(manager):
    """Each reservation counts as a waiting job until its submit (or its refusal) ends it: a
    third concurrent upload was read whole before the queue said it was full."""
    with manager.reserve(), manager.reserve():
        with pytest.raises(QueueFull, match=r"\(0 queued, 2 more being sent\)"), manager.reserve():
            pass
        submit(manager, "one")  # its own reservation does not refuse it
    assert manager.arriving == 0
    with manager.reserve():
        submit(manager, "two")
    with pytest.raises(QueueFull, match=r"\(2 queued\)"), manager.reserve():
        pass
    assert manager.arriving == 0


def test_a_finished_jobs_files_are_synced_into_the_data_folder(manager, monkeypatch):
    """The renames into DATA_DIR are flushed (an fsync of the folder) before the job says done
    and its temp folder goes: unsynced, a power cut could undo them but not the removal."""
    job = submit(manager, "synced")
    out = job.dir / "out"
    out.mkdir()
    save_tokenizer(out, "synced")
    synced = []
    real_fsync = os.fsync
    folder = os.open(manager.data_dir, os.O_RDONLY)
    monkeypatch.setattr(
        os, "fsync", lambda fd: (synced.append(os.path.sameopenfile(fd, folder)), real_fsync(fd))
    )
    with manager.lock:
        manager.queue.remove(job)
        manager._install(job, {})
    assert job.state == "done" and (manager.data_dir / "synced.json").is_file()
    os.close(folder)
    assert True in synced


def test_a_queued_job_has_progress_keys_not_null(manager):
    """GET /api/jobs/ID gives progress (phase, done, total, eta) at every stage: a queued job's
    was null, so a client reading snap["progress"]["phase"] failed until the job started."""
    job = submit(manager, "waiting")
    progress = manager.snapshot(job)["progress"]
    assert progress == {
        "phase": "queued",
        "done": 0,
        "total": None,
        "percent": None,
        "rate": None,
        "eta": None,
    }
    manager.cancel(job)
    assert manager.snapshot(job)["progress"]["phase"] == "queued"  # where it stopped
