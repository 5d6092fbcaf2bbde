"""Scaling of the counting phase (and of training) with corpus size and engine: time and peak memory.

    BPE_LARGE_DIR=/path/to/large python bench/scale.py                       # count: 100 MB and 1 GB
    python bench/scale.py --sizes 100,500,1000 --train --vocab-size 32768    # count + merge phases
    python bench/scale.py --train --min-chunk-count 1,2 --sizes 100          # pruning: merges and memory
    python bench/scale.py --scheduler tcp://HOST:8786 --modes dask           # a real cluster

Inputs of N MB are built once in --work-dir (default: the system temp dir) by concatenating
large_en.txt and large_multi.txt from make_large.sh (found in BPE_LARGE_DIR or
../shared/corpora/large), cut at a line end; beyond their 413 MB the same text repeats, which
adds bytes but no new distinct chunks (say so when quoting 1 GB figures).

Every run is a fresh subprocess, so one run's memory never shows in the next; peak memory is
sampled (every 50 ms) as the summed RSS of that process and all its descendants (pool
processes, Dask workers), and also for the main process alone; the summed PSS is sampled too
(forked workers share the parent's pages, which summed RSS counts once per process). Modes:
  local1  count_chunks(workers=1): one process
  local   count_chunks(): all cores (ProcessPoolExecutor over byte ranges)
  dask    count_chunks_dask on a LocalCluster of --dask-workers processes (start-up timed
          apart), or on --scheduler
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("large_en.txt", "large_multi.txt")
MB = 1_000_000


# ----- inputs --------------------------------------------------------------------------------------


def large_dir() -> Path:
    candidates = [os.environ.get("BPE_LARGE_DIR"), ROOT.parent / "shared" / "corpora" / "large"]
    for c in candidates:
        if c and all((Path(c) / s).is_file() for s in SOURCES):
            return Path(c)
    raise SystemExit(
        "large corpora not found: run ../shared/corpora/make_large.sh, or set BPE_LARGE_DIR to the "
        f"folder holding {' and '.join(SOURCES)}"
    )


def build_input(size_mb: int, work_dir: Path) -> Path:
    """A corpus of about size_mb MB: the large corpora in turn, repeated, the last one cut at a line end."""
    out = work_dir / f"bpe_scale_{size_mb}MB.txt"
    if out.exists():
        return out
    target, total = size_mb * MB, 0
    src = large_dir()
    tmp = out.with_suffix(".part")
    with open(tmp, "wb") as o:
        while total < target:
            for name in SOURCES:
                path = src / name
                size = path.stat().st_size
                with open(path, "rb") as f:
                    if total + size <= target:
                        while block := f.read(1 << 24):
                            o.write(block)
                        total += size
                        continue
                    data = f.read(target - total)
                data = data[: data.rfind(b"\n") + 1]
                o.write(data)
                total += len(data)
                break
            else:
                continue
            break
    tmp.rename(out)
    return out


# ----- one measured run (child process) -------------------------------------------------------------


def child(spec: dict) -> dict:
    sys.path.insert(0, str(ROOT))
    from tokenizer.counting import count_chunks

    files = [Path(f) for f in spec["files"]]
    mode, mcc = spec["mode"], spec.get("min_chunk_count", 1)
    if spec.get("vocab_size"):
        return child_train(spec, files, mode, mcc)
    out: dict = {}
    t0 = time.perf_counter()
    if mode == "dask":
        import distributed

        from tokenizer.distributed import count_chunks_dask

        if spec.get("scheduler"):
            client = distributed.Client(spec["scheduler"])
        else:
            cluster = distributed.LocalCluster(
                n_workers=spec["dask_workers"], threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = distributed.Client(cluster)
        out["start_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        counts, meta = count_chunks_dask(files, spec["pattern"], client, min_chunk_count=mcc)
        out["workers"] = meta["workers"]
    else:
        workers = 1 if mode == "local1" else None
        counts, meta = count_chunks(files, spec["pattern"], workers=workers, min_chunk_count=mcc)
        out["workers"] = meta.get("workers", 1)
    out["count_s"] = time.perf_counter() - t0
    if mode == "dask":
        client.close()
        if not spec.get("scheduler"):
            cluster.close()  # joins the worker processes, so their CPU time is in RUSAGE_CHILDREN
    out["unique_chunks"], out["chunks"], out["bytes"] = len(counts), meta["chunks"], meta["bytes"]
    out["main_maxrss_count_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["cpu_s"] = time.process_time() + kids.ru_utime + kids.ru_stime
    return out


def child_train(spec: dict, files: list[Path], mode: str, mcc: int) -> dict:
    """The public path, `train(files, ...)`: count, then merge (train frees the table once the
    trainer's words are built). The count phase's peak is read at its last progress call."""
    from tokenizer.train import train

    if mode not in ("local", "local1"):
        raise SystemExit("--train measures local training (count with --modes dask separately)")
    at_count_end: dict = {}

    def progress(phase, done, total, rate, eta):
        if phase == "count":
            at_count_end["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    tok = train(
        files,
        spec["vocab_size"],
        pattern=spec["pattern"],
        workers=1 if mode == "local1" else None,
        min_chunk_count=mcc,
        progress=progress,
    )
    stats = tok.metadata["statistics"]
    seconds = stats["seconds"]
    if spec.get("merges_out"):
        Path(spec["merges_out"]).write_text(json.dumps(tok.merges))
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "workers": tok.metadata["training"]["workers"],
        "count_s": seconds["count"],
        "merge_s": seconds["total"] - seconds["count"],
        "merges": stats["merges"],
        "unique_chunks": stats["unique_chunks"],
        "chunks": stats["chunks"],
        "bytes": stats["bytes"],
        "main_maxrss_count_mb": at_count_end.get("maxrss", 0.0),
        "main_maxrss_end_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cpu_s": time.process_time() + kids.ru_utime + kids.ru_stime,
    }


def measure(spec: dict, repeat: int = 1) -> dict:
    """Median times and the largest peaks of `repeat` runs."""
    runs = [measure_once(spec) for _ in range(repeat)]
    out = dict(runs[0])
    for key in ("count_s", "merge_s", "cpu_s", "start_s", "busiest_cpu_s"):
        if key in out:
            out[key] = statistics.median(r[key] for r in runs)
    for key in ("peak_tree_mb", "peak_main_mb", "peak_pss_mb"):
        out[key] = max(r[key] for r in runs)
    return out


def measure_once(spec: dict) -> dict:
    """Run one child; sample its process tree's summed RSS until it exits."""
    import psutil

    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    me = psutil.Process(proc.pid)
    peak_tree = peak_main = peak_pss = 0
    cpu: dict[int, float] = {}  # pid -> latest user+sys seconds seen
    while proc.poll() is None:
        try:
            tree = [me, *me.children(recursive=True)]
        except psutil.Error:
            break
        rss, pss = [], []
        for p in tree:
            try:
                with p.oneshot():
                    mem = p.memory_full_info()
                    rss.append(mem.rss)
                    pss.append(mem.pss)
                    t = p.cpu_times()
                    cpu[p.pid] = t.user + t.system
            except psutil.Error:
                rss.append(0)
        peak_tree = max(peak_tree, sum(rss))
        peak_pss = max(peak_pss, sum(pss))
        peak_main = max(peak_main, rss[0])
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"run {spec['mode']} failed:\n{stderr[-3000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result.update(
        peak_tree_mb=peak_tree / 2**20, peak_main_mb=peak_main / 2**20, peak_pss_mb=peak_pss / 2**20
    )
    result["busiest_cpu_s"] = max(cpu.values(), default=0.0)
    return result


# ----- report ---------------------------------------------------------------------------------------


def mb(x: float) -> str:
    return f"{x:,.0f} MB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default="100,1000", help="corpus sizes in MB (default 100,1000)")
    ap.add_argument("--modes", default="local1,local,dask", help="local1, local, dask (default all)")
    ap.add_argument("--dask-workers", type=int, default=2, help="LocalCluster processes (default 2)")
    ap.add_argument("--scheduler", help="count on this Dask scheduler instead of a LocalCluster")
    ap.add_argument("--pattern", default="gpt4")
    ap.add_argument("--train", action="store_true", help="also run the merge phase (mode local)")
    ap.add_argument("--train-mode", default="local", help="counting engine for --train (default local)")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--min-chunk-count", default="1", help="comma list, e.g. 1,2 (train: compares merges)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement: median time, max memory")
    ap.add_argument("--work-dir", default=tempfile.gettempdir(), help="where the inputs are built")
    ap.add_argument("--json", help="also write the raw results here (train mode)")
    ap.add_argument("--files", nargs="+", help="measure these files instead of built N MB inputs")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    work = Path(args.work_dir)
    if args.files:
        inputs = {f"{sum(Path(f).stat().st_size for f in args.files) / MB:,.0f} MB": args.files}
    else:
        inputs = {f"{int(s):,} MB": [str(build_input(int(s), work))] for s in args.sizes.split(",")}
    if args.train:
        train_report(args, inputs, work)
    else:
        count_report(args, inputs)


def count_report(args, inputs) -> None:
    modes = args.modes.split(",")
    rows = []
    for label, files in inputs.items():
        base = None
        for mode in modes:
            spec = {
                "mode": mode,
                "files": files,
                "pattern": args.pattern,
                "dask_workers": args.dask_workers,
                "scheduler": args.scheduler,
            }
            r = measure(spec, args.repeat)
            base = base or r
            name = {"local1": "local, 1 process", "local": f"local, {r['workers']} processes"}.get(
                mode, f"Dask, {r['workers']} workers" + (" (LocalCluster)" if not args.scheduler else "")
            )
            speed = r["bytes"] / MB / r["count_s"]
            row = {
                "corpus": label,
                "engine": name,
                "count phase (wall)": f"{r['count_s']:.1f} s"
                + (f" (+{r['start_s']:.1f} s start)" if "start_s" in r else ""),
                "speed": f"{speed:.1f} MB/s",
                "wall speed-up": f"{base['count_s'] / r['count_s']:.2f}x",
                "CPU, all processes": f"{r['cpu_s']:.1f} s",
                "CPU, busiest process": f"{r['busiest_cpu_s']:.1f} s",
                "CPU-bound speed-up": f"{base['busiest_cpu_s'] / r['busiest_cpu_s']:.2f}x",
                "peak RSS, all processes": mb(r["peak_tree_mb"]),
                "peak PSS, all processes": mb(r["peak_pss_mb"]),
                "peak RSS, main": mb(r["peak_main_mb"]),
                "distinct chunks": f"{r['unique_chunks']:,}",
            }
            rows.append(list(row.values()))
            print("  ".join(f"{k}: {v}" for k, v in row.items()), file=sys.stderr, flush=True)
            if base["unique_chunks"] != r["unique_chunks"] or base["chunks"] != r["chunks"]:
                raise SystemExit(f"{mode} counted a different table than {modes[0]}: {r} vs {base}")
    header = list(row)
    print_table(header, rows)


def train_report(args, inputs, work: Path) -> None:
    rows, merges, results = [], {}, []
    for label, files in inputs.items():
        for mcc in map(int, args.min_chunk_count.split(",")):
            out = work / f"bpe_scale_merges_{label.split()[0].replace(',', '')}_{mcc}.json"
            spec = {
                "mode": args.train_mode,
                "files": files,
                "pattern": args.pattern,
                "vocab_size": args.vocab_size,
                "min_chunk_count": mcc,
                "merges_out": str(out),
                "dask_workers": args.dask_workers,
            }
            r = measure(spec, args.repeat)
            merges[(label, mcc)] = json.loads(out.read_text())
            size = r["bytes"] / MB
            same = ""
            if mcc > 1 and (label, 1) in merges:
                same = agreement(merges[(label, 1)], merges[(label, mcc)])
            row = {
                "corpus": label,
                "min chunk count": str(mcc),
                "distinct chunks": f"{r['unique_chunks']:,}",
                "count (wall)": f"{r['count_s']:.1f} s",
                f"merge {r['merges']:,} (wall)": f"{r['merge_s']:.1f} s",
                "CPU, all processes": f"{r['cpu_s']:.1f} s",
                "peak RSS main, after count": mb(r["main_maxrss_count_mb"]),
                "peak RSS main, count + merge": mb(r["main_maxrss_end_mb"]),
                "peak RSS, all processes": mb(r["peak_tree_mb"]),
                "main peak / corpus": f"{r['main_maxrss_end_mb'] / size * 100:.0f} %",
                "merges vs no pruning": same,
            }
            rows.append(list(row.values()))
            results.append({"corpus": label, **spec, **r})
            print("  ".join(f"{k}: {v}" for k, v in row.items()), file=sys.stderr, flush=True)
    header = list(row)
    print_table(header, rows)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


def tokens(merges: list) -> list[bytes]:
    vocab = [bytes([i]) for i in range(256)]
    for a, b in merges:
        vocab.append(vocab[a] + vocab[b])
    return vocab[256:]


def agreement(a: list, b: list) -> str:
    """Identical merges before the first difference; then, since ids shift after it, how many of
    the first k tokens (as bytes) both vocabularies learned."""
    ta, tb = tokens(a), tokens(b)
    n = min(len(ta), len(tb))
    prefix = next((i for i in range(n) if ta[i] != tb[i]), n)
    parts = [f"first {prefix:,} identical"]
    for k in (1000, 10000, n):
        if k <= n:
            parts.append(f"{len(set(ta[:k]) & set(tb[:k])) / k * 100:.1f} % of first {k:,} tokens shared")
    return "; ".join(parts)


def print_table(header: list[str], rows: list[list[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
