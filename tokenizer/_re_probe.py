"""The backtracking probe of regex_check, run on the stdlib `re` translation in a child process.

regex_check runs a custom split regex on short hostile runs ("48 'a' in a row", "'ab'
repeated") before anything trains or encodes with it, because nested repeats such as
(?:a|a)+ take time exponential in such a run. It runs them with the `regex` package, which
can stop a match (`timeout=`). But the page's worker runs the stdlib `re` translation of the
same regex (Pyodide has no `regex`), and so does CPython for patterns with tiktoken's Unicode
tables; `re` backtracks differently: (?:a+)+b finishes at once in `regex` and takes 1.4 s on
24 characters in `re`, doubling with each one more. `re` cannot be interrupted, so the same
runs go to a child process here, which the caller kills when they overrun: the regex is
refused at the boundary (the server's form, the CLI's argument, a file's Split) instead of
freezing the page's worker on the first matching text.

The child prints "ready" once it has compiled the regex (start-up is not the regex's time:
up to STARTUP_SECONDS on a loaded machine), then a dot per run done; the runs are charged the
child's CPU time, not the wall time of a machine that may be too busy to run it.
Where no process can be started (Pyodide, a sandbox), nothing is probed and the page's
watchdog is the guard.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from typing import Any

STARTUP_SECONDS = 20.0  # the child's interpreter start and imports; ~0.1 s on an idle machine
READY, RUN_DONE = b"ready\n", b"."  # the child's words: compiled; one more run finished
# The runs' budget is the child's CPU time where it can be read (Linux: /proc/PID/stat), so a
# machine too busy to run the child does not get a sane regex refused; the wait for a starved
# child ends after STARVED_SECONDS of wall time all the same. POLL_SECONDS: how often the
# child's CPU time is read while it runs (a sane regex has finished before the first read).
STARVED_SECONDS = 10.0
POLL_SECONDS = 0.02


@functools.lru_cache(maxsize=256)
def first_overrun(source: str, runs: tuple[str, ...], seconds: float) -> int | None:
    """The index of the first of `runs` that `re` had not finished, with this split regex, when
    `seconds` were spent on them all (the child is then killed); None when it finished them, or
    when nothing was probed (no child process here, or the `re` translation refuses the regex,
    which the page then reports itself)."""
    if sys.platform == "emscripten":
        return None
    import subprocess  # here: the page's Pyodide imports this module, and has no processes

    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "tokenizer._re_probe"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": _package_root()},  # this very copy of the package
        )
    except OSError:
        return None
    try:
        child.stdin.write(json.dumps({"source": source, "runs": runs}).encode("utf-8"))  # type: ignore[union-attr]
        child.stdin.close()  # type: ignore[union-attr]
        if _read(child, len(READY), STARTUP_SECONDS) != READY:
            return None
        done = len(_read_runs(child, len(runs), seconds))
        return done if done < len(runs) else None
    except (OSError, ValueError):
        return None
    finally:
        child.kill()
        child.wait()


def _package_root() -> str:
    """The folder holding this `tokenizer` package."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(child: Any, size: int, seconds: float) -> bytes:
    """Up to `size` bytes of the child's output, as many as it writes within `seconds`."""
    import select

    fd = child.stdout.fileno()  # type: ignore[union-attr]
    got = b""
    deadline = time.monotonic() + seconds
    while len(got) < size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        data = os.read(fd, size - len(got))
        if not data:  # the child ended
            break
        got += data
    return got


def _read_runs(child: Any, size: int, seconds: float) -> bytes:
    """Up to `size` bytes of the child's output, as many as it writes within `seconds` of its
    CPU time (at most STARVED_SECONDS of wall time); within `seconds` of wall time where the
    child's CPU time cannot be read."""
    start = _cpu_seconds(child.pid)
    if start is None:
        return _read(child, size, seconds)
    got = b""
    wall_end = time.monotonic() + STARVED_SECONDS
    while len(got) < size:
        data = _read(child, size - len(got), POLL_SECONDS)
        got += data
        if data:
            continue
        used = _cpu_seconds(child.pid)
        if used is None or used - start >= seconds or time.monotonic() >= wall_end:
            break  # over its budget, ended (no /proc entry), or never run
    return got


def _cpu_seconds(pid: int) -> float | None:
    """A process's user + system CPU seconds from /proc/PID/stat, None where there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, ValueError, IndexError):
        return None


def main() -> int:
    """The child: read {"source", "runs"} from stdin, compile with `re`, say ready, then one dot
    per finished run."""
    from .patterns import compile_pattern

    job = json.loads(sys.stdin.buffer.read())
    try:
        splitter = compile_pattern(job["source"], engine="re")
    except (ValueError, TypeError, OverflowError, RecursionError):
        return 1
    out = sys.stdout.buffer
    out.write(READY)
    out.flush()
    for run in job["runs"]:
        splitter.findall(run)
        out.write(RUN_DONE)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
