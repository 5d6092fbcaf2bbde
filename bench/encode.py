"""Encoding throughput: ours vs tiktoken on the same text, same ranks, in one run.

    python bench/encode.py [--mb 4] [--repeats 3]

Prints MB/s (UTF-8 input bytes per second, single thread, best of N) and ratios. "cold"
starts each run with an empty chunk cache, "warm" re-encodes with the cache filled. The
named patterns split with the stdlib-`re` translation by default (the path the browser
runs too); the last column splits with the `regex` package instead, for comparison.
"""

from __future__ import annotations

import argparse
import lzma
import sys
import time
from collections.abc import Callable
from pathlib import Path

import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tokenizer import get_encoding  # noqa: E402
from tokenizer.patterns import compile_pattern  # noqa: E402

CORPORA = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpora"
TEXTS = {
    "english": ["pg_en_medium.txt"],
    "code": ["code_python.txt", "code_c.txt", "code_js.txt"],
    "multilingual": ["pg_multilingual.txt", "udhr_all.txt"],
}


def load_text(files: list[str], megabytes: float) -> str:
    data = b""
    for name in files:
        path = CORPORA / name
        data += lzma.open(path).read() if name.endswith(".xz") else path.read_bytes()
    return data[: int(megabytes * 1e6)].decode("utf-8", errors="ignore")


def best_seconds(fn: Callable[[], object], repeats: int, before: Callable[[], None] = lambda: None) -> float:
    best = float("inf")
    for _ in range(repeats):
        before()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(name: str, text: str, repeats: int) -> tuple[float, float, float, float]:
    """Seconds for tiktoken, ours cold, ours warm, ours cold splitting with `regex`."""
    ours = get_encoding(name)
    ref = tiktoken.Encoding(
        name, pat_str=ours.pattern_regex, mergeable_ranks=ours.mergeable_ranks, special_tokens={}
    )
    expected = ref.encode_ordinary(text)
    assert ours.encode_ordinary(text) == expected, f"{name} differs from tiktoken"
    t_ref = best_seconds(lambda: ref.encode_ordinary(text), repeats)
    t_cold = best_seconds(lambda: ours.encode_ordinary(text), repeats, before=ours._cache.clear)
    ours.encode_ordinary(text)
    t_warm = best_seconds(lambda: ours.encode_ordinary(text), repeats)
    default_splitter = ours._splitter
    ours._splitter = compile_pattern(ours.pattern, engine="regex")
    try:
        t_regex = best_seconds(lambda: ours.encode_ordinary(text), repeats, before=ours._cache.clear)
    finally:
        ours._splitter = default_splitter
    return t_ref, t_cold, t_warm, t_regex


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=4.0, help="megabytes of each text kind")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    print(
        "| text | encoding | tiktoken MB/s | ours cold | ours warm | cold, `regex` split | cold / tiktoken | warm / tiktoken |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for kind, files in TEXTS.items():
        text = load_text(files, args.mb)
        megabytes = len(text.encode("utf-8")) / 1e6
        for name in ["cl100k_base", "o200k_base"]:
            t_ref, t_cold, t_warm, t_regex = measure(name, text, args.repeats)
            mbps = [megabytes / t for t in (t_ref, t_cold, t_warm, t_regex)]
            print(
                f"| {kind} | {name} | {mbps[0]:.1f} | {mbps[1]:.1f} | {mbps[2]:.1f} | {mbps[3]:.1f} "
                f"| {t_ref / t_cold:.2f}x | {t_ref / t_warm:.2f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
