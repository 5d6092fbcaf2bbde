"""Split throughput: `regex` vs the stdlib-`re` fallback (what Pyodide runs).

re-fast is the fallback as compile_pattern(..., engine="re") builds it (BMP-only
classes; astral characters swapped for BMP stand-ins first); re-full keeps the astral
ranges in the classes instead (what a pattern with astral literals gets). MB/s of
UTF-8 input, best of --repeat runs of process CPU time (steadier than wall time on a
shared, loaded machine). "en+emoji" is the English text with an emoji after every 20th
word, like chat text, to show the cost of the astral path on otherwise-BMP text.

Usage: python bench/split.py [--mb 1.0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tokenizer.patterns import PATTERNS, TIKTOKEN, ReSplitter, compile_pattern  # noqa: E402

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"
TEXTS = {
    "english": "pg_en_medium.txt",
    "code": "code_python.txt",
    "udhr": "udhr_sample.txt",
    "emoji": "emoji_cldr.txt",
}
ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def load(name: str, megabytes: float) -> str:
    """About `megabytes` MB of UTF-8 from the middle of a corpus file."""
    data = (CORPORA / TEXTS[name]).read_bytes()
    size = int(megabytes * 1_000_000)
    start = max(0, len(data) // 2 - size // 2)
    return data[start : start + size].decode("utf-8", errors="ignore")


def with_emoji(text: str, every: int = 20) -> str:
    emoji = ["🙂", "👍🏽", "🇺🇸", "👩‍💻", "🎉", "𝐀"]
    words = text.split(" ")
    for k, i in enumerate(range(every, len(words), every)):
        words[i] += " " + emoji[k % len(emoji)]
    return " ".join(words)


def best_seconds(fn, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0, help="MB of each corpus to split")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    texts = {name: load(name, args.mb) for name in TEXTS}
    texts["en+emoji"] = with_emoji(texts["english"])
    print(
        f"{'pattern':8} {'text':8} {'astral':>7} {'regex':>7} {'re-fast':>8} {'re-full':>8}  fast/regex  full/regex"
    )
    for pattern in ("gpt2", "cl100k", "o200k"):
        engines = {
            "regex": compile_pattern(pattern, engine="regex"),
            "re-fast": compile_pattern(pattern, engine="re"),
            "re-full": ReSplitter(PATTERNS[pattern], bmp_fast_path=False, unicode=TIKTOKEN),
        }
        for name, text in texts.items():
            expected = engines["regex"].findall(text)
            mb = len(text.encode("utf-8")) / 1e6
            speed = {}
            for engine, splitter in engines.items():
                assert splitter.findall(text) == expected, (pattern, name, engine)
                speed[engine] = mb / best_seconds(splitter.findall, text, args.repeat)
            astral = len(ASTRAL.findall(text)) / max(1, len(text))
            print(
                f"{pattern:8} {name:8} {astral:7.2%} {speed['regex']:7.1f} {speed['re-fast']:8.1f} "
                f"{speed['re-full']:8.1f}  {speed['re-fast'] / speed['regex']:9.2f}x "
                f"{speed['re-full'] / speed['regex']:10.2f}x"
            )


if __name__ == "__main__":
    main()
