"""Encoding speed: ours vs tiktoken on the same text and ranks, each measurement in a fresh process.

    python bench/encode.py [--mb 6] [--repeats 2] [--sizes 1 2 4] [--skip-adversarial]

Table 1, real text (English, code, multilingual x cl100k_base, o200k_base): "cold" is the
first encode in a fresh process (empty chunk cache, nothing warmed up), "warm" encodes
the same text a second time. Table 2, adversarial text that the split pattern cannot cut
(one letter repeated, random lowercase letters, random CJK ideographs, all without
spaces) at several sizes: ours should stay linear and within a small factor of tiktoken.
Ratios are tiktoken's seconds / ours (above 1: we are faster) in table 1, and ours /
tiktoken's (below 1: we are faster) in table 2. Each figure is the best of --repeats fresh
processes; compare ratios from one run, absolute times move with the machine's load.
Ids are checked equal to tiktoken's in every cold and adversarial run (outside the timing).
Table 1's pure-Python column is the cold encode with BPE_PURE_PYTHON=1: without numpy's batch
merge, the code the page's worker runs. "Peak MB added" is how far the encode raised its
process's peak RSS above the RSS it started from (Linux: the peak is reset just before it), the
least of the runs: the ids, the chunk cache and the merge's working memory, not the ranks, which
both processes hold before.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import random
import string
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tokenizer._batch import PURE_PYTHON_ENV  # noqa: E402  (no numpy batch merge: the page's path)

CORPORA = ROOT / ".." / "shared" / "corpora"
TEXTS = {
    "english": ["pg_en_medium.txt"],
    "code": ["code_python.txt", "code_c.txt", "code_js.txt"],
    "multilingual": ["pg_multilingual.txt", "udhr_all.txt"],
}
ADVERSARIAL = ("one letter", "letters", "cjk")
ENCODINGS = ("cl100k_base", "o200k_base")
CJK_FIRST, CJK_END = 0x4E00, 0x9FA6  # CJK Unified Ideographs (3 bytes each in UTF-8)


def load_text(kind: str, megabytes: float) -> str:
    """The first `megabytes` MB (UTF-8) of a real-text kind, or generated adversarial text."""
    size = int(megabytes * 1e6)
    if kind in ADVERSARIAL:
        rng = random.Random(0)
        if kind == "one letter":
            return "a" * size
        if kind == "letters":
            return "".join(rng.choices(string.ascii_lowercase, k=size))
        return "".join(map(chr, rng.choices(range(CJK_FIRST, CJK_END), k=size // 3)))
    data = b""
    for name in TEXTS[kind]:
        path = CORPORA / name
        data += lzma.open(path).read() if name.endswith(".xz") else path.read_bytes()
    return data[:size].decode("utf-8", errors="ignore")


def measure_here(kind: str, encoding: str, megabytes: float, mode: str) -> tuple[float, float]:
    """Seconds for one encode in this process (mode: tiktoken, cold, pure or warm), and the MB
    it added to the process's RSS at its peak."""
    import tiktoken

    sys.path.insert(0, str(ROOT))
    from tokenizer import get_encoding

    text = load_text(kind, megabytes)
    ours = get_encoding(encoding)
    ref = tiktoken.Encoding(
        encoding, pat_str=ours.pattern_regex, mergeable_ranks=ours.mergeable_ranks, special_tokens={}
    )
    encode = ref.encode_ordinary if mode == "tiktoken" else ours.encode_ordinary
    if mode == "warm":
        encode(text)
    before = reset_peak_rss()
    start = time.perf_counter()
    ids = encode(text)
    seconds = time.perf_counter() - start
    peak = peak_rss() - before
    if mode in ("cold", "pure") and ids != ref.encode_ordinary(text):
        raise SystemExit(f"{kind} {encoding}: ids differ from tiktoken's")
    return seconds, peak


def status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (Linux), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} in /proc/self/status: the memory columns need Linux")


def reset_peak_rss() -> float:
    """Resets this process's peak RSS to its current RSS (Linux: 5 > clear_refs); returns it (MB)."""
    Path("/proc/self/clear_refs").write_text("5")
    return status_mb("VmRSS")


def peak_rss() -> float:
    return status_mb("VmHWM")


def measure(kind: str, encoding: str, megabytes: float, mode: str, repeats: int) -> tuple[float, float]:
    """Best seconds over `repeats` fresh processes, and the least memory the encode added to
    its process at its peak (MB: the ids, the chunk cache, the merge's working memory; the
    loaded ranks are there before, for both)."""
    best, least = float("inf"), float("inf")
    env = {**os.environ, PURE_PYTHON_ENV: "1" if mode == "pure" else ""}
    for _ in range(repeats):
        args = [sys.executable, __file__, "--measure", json.dumps([kind, encoding, megabytes, mode])]
        out = subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout
        seconds, peak = json.loads(out)
        best, least = min(best, seconds), min(least, peak)
    return best, least


def real_text_table(megabytes: float, repeats: int) -> None:
    print(f"\n{megabytes:g} MB of each text; MB/s of UTF-8 input; ratio = tiktoken seconds / ours\n")
    print(
        "| text | encoding | tiktoken MB/s | ours cold | ours warm | cold vs tiktoken | warm vs tiktoken "
        "| cold, pure Python (the page's path) | peak MB added: tiktoken / ours cold |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for kind in TEXTS:
        size = len(load_text(kind, megabytes).encode("utf-8")) / 1e6
        for encoding in ENCODINGS:
            (t_ref, m_ref), (t_cold, m_cold), (t_warm, _), (t_pure, _) = (
                measure(kind, encoding, megabytes, mode, repeats)
                for mode in ("tiktoken", "cold", "warm", "pure")
            )
            print(
                f"| {kind} | {encoding} | {size / t_ref:.1f} | {size / t_cold:.1f} | {size / t_warm:.1f} "
                f"| {t_ref / t_cold:.2f}x | {t_ref / t_warm:.2f}x | {t_ref / t_pure:.2f}x "
                f"| {m_ref:.0f} / {m_cold:.0f} |",
                flush=True,
            )


def adversarial_table(sizes: list[float], repeats: int) -> None:
    print("\nAdversarial text without spaces (one chunk); seconds, cold; ratio = ours / tiktoken\n")
    print("| text | encoding | MB | tiktoken s | ours s | ours / tiktoken | peak MB added: tiktoken / ours |")
    print("|---|---|---:|---:|---:|---:|---|")
    for kind in ADVERSARIAL:
        for encoding in ENCODINGS:
            for megabytes in sizes:
                t_ref, m_ref = measure(kind, encoding, megabytes, "tiktoken", repeats)
                t_ours, m_ours = measure(kind, encoding, megabytes, "cold", repeats)
                print(
                    f"| {kind} | {encoding} | {megabytes:g} | {t_ref:.2f} | {t_ours:.2f} | {t_ours / t_ref:.2f}x "
                    f"| {m_ref:.0f} / {m_ours:.0f} |",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=6.0, help="megabytes of each real text kind")
    parser.add_argument("--repeats", type=int, default=2, help="fresh processes per figure (best is kept)")
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 2, 4], help="adversarial MB")
    parser.add_argument("--skip-adversarial", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement, in a child
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure_here(*json.loads(args.measure))))
        return
    real_text_table(args.mb, args.repeats)
    if not args.skip_adversarial:
        adversarial_table(args.sizes, args.repeats)


if __name__ == "__main__":
    main()
