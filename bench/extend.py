"""Extension benchmark: extend cl100k_base by N merges vs train N merges, on the same code.

The issue's goal: extending cl100k_base by 1,000 merges on 10 MB of code takes at most 2x
the time `train` takes for 1,000 merges on the same text (same split pattern, gpt4 =
cl100k's). Each run is a fresh subprocess (this file with --child), timed inside the child
from before the library is imported (loading cl100k_base counts for extend) to the
result; the ratio compares medians of --repeat runs.

    python bench/extend.py                      # ~9.3 MB: code_python + code_c + code_js
    python bench/extend.py --merges 1000 --repeat 3 --corpus-file some_code.txt
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
CACHE = ROOT / "bench" / "results"
CODE_SOURCES = ["code_python.txt", "code_c.txt", "code_js.txt"]  # 9.3 MB together
BASE = "cl100k_base"
PATTERN = "gpt4"  # cl100k_base's split, so both runs count the same chunks


def build_code_corpus() -> Path:
    """The code corpora concatenated, cached in bench/results."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / "corpus_code.txt"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(b"".join((CORPORA / name).read_bytes() for name in CODE_SOURCES))
        os.replace(tmp, path)
    return path


def child(mode: str, corpus: Path, merges: int) -> dict:
    t0 = time.perf_counter()
    from tokenizer import extend, get_encoding, train

    if mode == "train":
        tok = train([corpus], 256 + merges, pattern=PATTERN)
        stats = tok.metadata["statistics"]
        return {"seconds": time.perf_counter() - t0, "merges": stats["merges"], "phases": stats["seconds"]}
    tok = extend(get_encoding(BASE), [corpus], merges)
    ext, stats = tok.metadata["extension"], tok.metadata["statistics"]
    return {
        "seconds": time.perf_counter() - t0,
        "merges": ext["added"],
        "phases": stats["seconds"],
        "tokens_before": ext["corpus_tokens_before"],
        "tokens_after": ext["corpus_tokens_after"],
        "multi_token_chunks": stats["multi_token_chunks"],
        "reencoded_chunks": stats["reencoded_chunks"],
    }


def run(mode: str, corpus: Path, merges: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--corpus-file", str(corpus), "--merges", str(merges)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, alternating; medians compared")
    parser.add_argument("--corpus-file", type=Path, help="default: the code corpora concatenated")
    parser.add_argument("--child", choices=["train", "extend"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpus = args.corpus_file or build_code_corpus()
    if args.child:
        print(json.dumps(child(args.child, corpus, args.merges)))
        return
    print(f"corpus {corpus} ({corpus.stat().st_size / 1e6:.1f} MB), {args.merges} merges")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    times: dict[str, list[float]] = {"train": [], "extend": []}
    for _ in range(args.repeat):
        for mode in times:
            result = run(mode, corpus, args.merges)
            times[mode].append(result["seconds"])
            phases = ", ".join(f"{k} {v:.1f}" for k, v in result["phases"].items())
            extra = ""
            if mode == "extend":
                before, after = result["tokens_before"], result["tokens_after"]
                extra = (
                    f"; tokens {before} -> {after} ({100 * (after - before) / before:+.2f} %), "
                    f"{result['reencoded_chunks']} re-encodings of {result['multi_token_chunks']} chunks"
                )
            print(f"{mode:>6}: {result['seconds']:.2f} s, {result['merges']} merges ({phases}){extra}")
    train_s, extend_s = statistics.median(times["train"]), statistics.median(times["extend"])
    print(f"extend / train = {extend_s / train_s:.2f} (goal <= 2)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
