"""Training benchmark: our heap trainer vs Hugging Face tokenizers, rustbpe and the reference.

Same corpus file, same split pattern (gpt4), same vocab size. Every trainer runs in its own
subprocess, so the peak RSS reported (from wait4) is that trainer's alone; wall time is the
time from start of reading the corpus to the end of training, measured inside the child.
`ours` breaks ties as minbpe does (`first`, the default); `ours-lexical` as rustbpe does, so
its merges are rustbpe's: the like-for-like pair. The summary gives each one's ratios to the peers.

    python bench/train.py --size 10MB --vocab 32768
    python bench/train.py --size 10MB --mixed        # the issue's mix: a third each of English, Python, multilingual
    python bench/train.py --size 100MB --vocab 32768 --corpus-file /tmp/large/large_en.txt
    cat large_en.txt large_multi.txt > all.txt; python bench/train.py --size 500MB --corpus-file all.txt  # whole file
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
CACHE = ROOT / "bench" / "results"
SIZES = {"1MB": 1 << 20, "10MB": 10 << 20, "100MB": 100 << 20, "500MB": 500 << 20}
# Sources, in order, concatenated until the size is reached (cut at a line end).
SOURCES = [
    "pg_en_medium.txt",
    "shakespeare_complete.txt",
    "kjv_bible.txt",
    "pg_en_all.txt.xz",
    "pg_multilingual.txt",
    "udhr_all.txt",
    "code_python.txt",
    "code_c.txt",
    "code_js.txt",
    "emoji_cldr.txt",
]
# --mixed: equal thirds of English prose, Python source and multilingual books (issue 16's "10 MB mixed")
MIXED_SOURCES = ["pg_en_medium.txt", "code_python.txt", "pg_multilingual.txt"]
# ours: minbpe's tie rule (`first`, the default); ours-lexical: rustbpe's rule, the same merges as rustbpe
TRAINERS = ["ours", "ours-lexical", "hf", "rustbpe", "reference"]
BASELINE = "@baseline"  # ours@baseline: ours from the --baseline checkout
REFERENCE_MAX_BYTES = 200_000  # the O(N*M) reference only runs on tiny inputs
REFERENCE_MAX_VOCAB = 1024


def build_corpus(size: int) -> Path:
    """A UTF-8 file of about `size` bytes from ../shared/corpora, cached in bench/results."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"corpus_{size >> 20}MB.txt"
    if path.exists() and path.stat().st_size > 0:
        return path
    tmp = path.with_suffix(".tmp")
    written = 0
    with open(tmp, "wb") as out:
        for name in SOURCES:
            src = CORPORA / name
            opener = lzma.open if name.endswith(".xz") else open
            with opener(src, "rb") as f:
                for line in f:
                    if written + len(line) > size:
                        break
                    out.write(line)
                    written += len(line)
            if written >= size - 4096:
                break
    os.replace(tmp, path)
    return path


def build_mixed(size: int) -> Path:
    """size // 3 bytes (cut at a line end) of each MIXED_SOURCES file, in order, cached in bench/results."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"corpus_mixed_{size >> 20}MB.txt"
    if path.exists() and path.stat().st_size > 0:
        return path
    share = size // len(MIXED_SOURCES)
    parts = []
    for name in MIXED_SOURCES:
        data = (CORPORA / name).read_bytes()
        if len(data) < share:
            raise SystemExit(
                f"{name} has {len(data):,} bytes, fewer than a third of {size:,}: pick a smaller --size"
            )
        data = data[:share]
        parts.append(data[: data.rfind(b"\n") + 1])
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(b"".join(parts))
    os.replace(tmp, path)
    return path


# ----- one trainer per child process -----------------------------------------------------------


def run_child(trainer: str, path: Path, vocab: int, threads: int) -> dict:
    from tokenizer.patterns import resolve_pattern

    pattern = resolve_pattern("gpt4")
    start = time.perf_counter()
    if trainer in ("ours", "ours-lexical"):
        from tokenizer.train import train

        tie_break = "lexical" if trainer == "ours-lexical" else "first"
        # min_frequency=1: like rustbpe and HF, go on merging pairs seen once (the default, 2,
        # stops earlier on small inputs, which would compare fewer merges with more)
        tok = train(path, vocab, workers=threads, tie_break=tie_break, min_frequency=1)
        stats = tok.metadata["statistics"]
        extra = {
            "merges": stats["merges"],
            "phases": stats["seconds"],
            "unique_chunks": stats["unique_chunks"],
            "pair_recounts": stats["pair_recounts"],
        }
    elif trainer == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(pattern), "isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        trainer_obj = trainers.BpeTrainer(
            vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
        )
        tok.train([str(path)], trainer_obj)
        extra = {"merges": tok.get_vocab_size() - 256}
    elif trainer == "rustbpe":
        import rustbpe

        from tokenizer.counting import range_cuts

        def documents():  # pieces cut where the gpt4 chunking has a boundary: same chunks as ours
            cuts = range_cuts(path, max(1, path.stat().st_size >> 20))
            with open(path, "rb") as f:
                for a, b in zip(cuts, cuts[1:], strict=False):
                    yield f.read(b - a).decode("utf-8")

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(documents(), vocab, pattern=pattern)
        extra = {"merges": len(tok.get_mergeable_ranks()) - 256}
    elif trainer == "reference":
        from tokenizer.counting import count_chunks
        from tokenizer.reference import reference_merges

        counts, _ = count_chunks(path, "gpt4", workers=1)
        extra = {"merges": len(reference_merges(counts.items(), vocab, "first", 1))}
    else:
        raise ValueError(f"unknown trainer {trainer!r}")
    return {"seconds": time.perf_counter() - start, **extra}


def measure(trainer: str, path: Path, vocab: int, threads: int, baseline: Path | None = None) -> dict:
    """Run one trainer in a fresh interpreter; wall time from the child, peak RSS from wait4.
    A name ending in BASELINE runs that trainer with the `tokenizer` package of `baseline`."""
    root = ROOT
    if trainer.endswith(BASELINE):
        trainer, root = trainer.removesuffix(BASELINE), baseline
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads), "PYTHONPATH": str(root)}
    cmd = [sys.executable, __file__, "--child", trainer, "--file", str(path), "--vocab", str(vocab)]
    cmd += ["--threads", str(threads)]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        sampler = _TreeRss(proc.pid)
        out = proc.stdout.read()
        tree_rss, tree_pss = sampler.stop()
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage: its peak RSS
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{trainer} failed:\n{err.read().decode(errors='replace')[-2000:]}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    # CPU seconds of the child and the workers it waited for, start-up included: a load on the
    # shared machine stretches wall times far more than this, so it shows what a change did
    result["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    result["tree_peak_mb"] = tree_rss / 2**20
    result["tree_pss_mb"] = tree_pss / 2**20
    return result


class _TreeRss:
    """Samples a process and its children (worker processes) every 50 ms: the peak of their
    summed RSS, and of their summed PSS (pages shared after fork counted once, not per process)."""

    def __init__(self, pid: int) -> None:
        import threading

        import psutil

        self.proc = psutil.Process(pid)
        self.peak_rss = self.peak_pss = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        import psutil

        while not self.done.wait(0.05):
            try:
                procs = [self.proc, *self.proc.children(recursive=True)]
                infos = [p.memory_full_info() for p in procs]
            except psutil.Error:
                continue
            self.peak_rss = max(self.peak_rss, sum(i.rss for i in infos))
            self.peak_pss = max(self.peak_pss, sum(i.pss for i in infos))

    def stop(self) -> tuple[int, int]:
        self.done.set()
        self.thread.join()
        return self.peak_rss, self.peak_pss


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--size", choices=SIZES, default="10MB", help="corpus size built from ../shared/corpora"
    )
    parser.add_argument(
        "--corpus-file", type=Path, help="use this UTF-8 file instead (its first --size bytes)"
    )
    parser.add_argument(
        "--mixed",
        action="store_true",
        help="a third each of " + ", ".join(MIXED_SOURCES) + " (not --corpus-file)",
    )
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--threads", type=int, default=2, help="threads/processes for every trainer")
    parser.add_argument("--runs", type=int, default=1, help="runs per trainer (the median is reported)")
    parser.add_argument(
        "--trainers", default=",".join(TRAINERS), help="comma-separated subset of " + ",".join(TRAINERS)
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout of another version (e.g. `git worktree add /tmp/base HEAD~3`): its ours and "
        "ours-lexical run too, interleaved with everything else, as ours@baseline and ours-lexical@baseline",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(run_child(args.child, args.file, args.vocab, args.threads)))
        return 0

    if args.mixed and args.corpus_file:
        parser.error("--mixed builds its own corpus; leave out --corpus-file")
    path = args.corpus_file or (build_mixed if args.mixed else build_corpus)(SIZES[args.size])
    if args.corpus_file and path.stat().st_size > SIZES[args.size] * 1.05:
        path = _prefix_copy(path, SIZES[args.size])
    size = path.stat().st_size
    print(
        f"corpus {path.name}: {size / 1e6:.1f} MB, pattern gpt4, vocab {args.vocab}, threads {args.threads}"
    )
    trainers = []
    for trainer in args.trainers.split(","):
        if trainer == "reference" and (size > REFERENCE_MAX_BYTES or args.vocab > REFERENCE_MAX_VOCAB):
            print(
                f"  reference: skipped (only for <= {REFERENCE_MAX_BYTES:,} bytes and vocab <= {REFERENCE_MAX_VOCAB})"
            )
            continue
        trainers.append(trainer)
        if args.baseline and trainer.startswith("ours"):
            trainers.append(trainer + BASELINE)
    runs: dict[str, list[dict]] = {t: [] for t in trainers}
    for _ in range(args.runs):  # round robin: a change in the machine's load hits every trainer alike
        for trainer in trainers:
            r = measure(trainer, path, args.vocab, args.threads, args.baseline)
            runs[trainer].append(r)
            print(
                f"  {trainer}: {r['seconds']:.2f} s, CPU {r['cpu_seconds']:.2f} s, peak PSS {r['tree_pss_mb']:.0f} MB, "
                f"load {_load()}",
                flush=True,
            )
    rows = {}
    for trainer, done in runs.items():
        done.sort(key=lambda r: r["seconds"])
        rows[trainer] = done[len(done) // 2]
        rows[trainer]["all_seconds"] = [round(r["seconds"], 2) for r in done]
        rows[trainer]["all_cpu_seconds"] = sorted(round(r["cpu_seconds"], 2) for r in done)

    print()
    print(
        "| trainer | wall s | CPU s, all processes | peak PSS MB, all processes | peak RSS MB, all processes "
        "| largest process MB | merges | time / ours | PSS / ours |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ours = rows.get("ours")
    for name, r in rows.items():
        t_ratio = f"{r['seconds'] / ours['seconds']:.2f}" if ours else "-"
        m_ratio = f"{r['tree_pss_mb'] / ours['tree_pss_mb']:.2f}" if ours else "-"
        print(
            f"| {name} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | {r['tree_pss_mb']:.0f} | {r['tree_peak_mb']:.0f} "
            f"| {r['peak_rss_mb']:.0f} | {r['merges']} | {t_ratio} | {m_ratio} |"
        )
    summary = []
    for name in ("ours", "ours-lexical", "ours" + BASELINE, "ours-lexical" + BASELINE):
        peers = [(peer, r) for peer, r in rows.items() if not peer.startswith("ours")]
        if name in rows and peers:
            ratios = ", ".join(
                f"{rows[name]['seconds'] / r['seconds']:.2f}x {peer}'s time, "
                f"{rows[name]['tree_pss_mb'] / r['tree_pss_mb']:.2f}x its memory"
                for peer, r in peers
            )
            summary.append(f"{name}: {ratios}")
    if summary:
        print("\n" + "\n".join(summary))
    if args.runs > 1:
        print("\nall runs (s), interleaved: " + "; ".join(f"{n} {r['all_seconds']}" for n, r in rows.items()))
        print("all runs (CPU s): " + "; ".join(f"{n} {r['all_cpu_seconds']}" for n, r in rows.items()))
    phases = [
        f"{name} by phase (s): {r['phases']}; {r['unique_chunks']:,} distinct chunks, "
        f"{r['pair_recounts']} pair recounts"
        for name, r in rows.items()
        if "phases" in r
    ]
    if phases:
        print("\n" + "\n".join(phases))
    if args.json:
        args.json.write_text(
            json.dumps({"corpus": str(path.name), "bytes": size, "vocab": args.vocab, "rows": rows}, indent=1)
        )
    return 0


def _load() -> str:
    """The 1-minute load average: on a shared machine, say how busy it was next to each figure."""
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "?"


def _prefix_copy(path: Path, size: int) -> Path:
    """The first `size` bytes of a big file, cut at a line end, cached in bench/results."""
    CACHE.mkdir(parents=True, exist_ok=True)
    out_path = CACHE / f"{path.stem}_{size >> 20}MB.txt"
    if not out_path.exists():
        with open(path, "rb") as f:
            data = f.read(size)
        data = data[: data.rfind(b"\n") + 1]
        tmp = out_path.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, out_path)
    return out_path


if __name__ == "__main__":
    sys.exit(main())
