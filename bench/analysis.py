"""Speed of the "know your tokenizer" commands: `audit` and `stats`, as a user runs them.

    python bench/analysis.py [--mb 6] [--repeats 2]

Every figure is a whole `python -m tokenizer ...` command in a fresh process (start-up,
loading the encoding and printing included), best of --repeats. Targets (issue 14): `audit
o200k_base` within 5 s; `stats` at 2 MB/s or more per tokenizer. For scale, the last column
is tiktoken counting the same file's tokens (`len(encode_ordinary)`, also a fresh process,
including loading our copy of the ranks).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
TEXTS = {
    "english": ["pg_en_medium.txt"],
    "code": ["code_python.txt", "code_c.txt", "code_js.txt"],
    "multilingual": ["pg_multilingual.txt"],
    "udhr (532 languages)": ["udhr_all.txt"],
}


def sample(files: list[str], size: int, out: Path) -> Path:
    """About `size` bytes of the files' text (repeated if they are shorter), cut at a line end."""
    text = "".join((CORPORA / f).read_text(encoding="utf-8") for f in files if (CORPORA / f).exists())
    if not text:
        raise SystemExit(f"none of {files} in {CORPORA}")
    data = (text * (size // len(text.encode()) + 1)).encode()[:size]
    out.write_bytes(data[: data.rfind(b"\n") + 1])
    return out


def best(argv: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def tiktoken_count(name: str, path: str) -> None:
    """The peer's figure: tiktoken with our copy of the encoding's ranks (it would download them)."""
    import tiktoken

    sys.path.insert(0, str(ROOT))
    from tokenizer import get_encoding
    from tokenizer.patterns import resolve_pattern

    ours = get_encoding(name)
    enc = tiktoken.Encoding(
        name,
        pat_str=resolve_pattern(ours.pattern),
        mergeable_ranks=ours.mergeable_ranks,
        special_tokens=ours.special_tokens,
    )
    len(enc.encode_ordinary(Path(path).read_text(encoding="utf-8")))


def main() -> int:
    if sys.argv[1:2] == ["--tiktoken-count"]:
        return tiktoken_count(*sys.argv[2:4]) or 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=6, help="megabytes of each text kind for stats")
    parser.add_argument("--repeats", type=int, default=2, help="fresh processes per figure (best kept)")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "tokenizer"]
    print(f"load average {os.getloadavg()[0]:.2f}\n")
    print("| command | seconds (whole process) | target |\n|---|---:|---|")
    for name in ENCODINGS:
        seconds = best([*cli, "audit", name, "--json"], args.repeats)
        print(f"| `audit {name} --json` | {seconds:.2f} | {'<= 5 s' if name == 'o200k_base' else ''} |")
    print(f"\n`stats FILE -t ENC --json` on {args.mb:g} MB of each text, MB/s (target >= 2):\n")
    print("| text | encoding | ours MB/s | tiktoken MB/s (counting only) |\n|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, files in TEXTS.items():
            path = sample(files, int(args.mb * 1e6), Path(tmp) / "text.txt")
            mb = path.stat().st_size / 1e6
            for name in ENCODINGS:
                ours = best([*cli, "stats", str(path), "-t", name, "--json"], args.repeats)
                peer = best([sys.executable, __file__, "--tiktoken-count", name, str(path)], args.repeats)
                print(f"| {kind} | {name} | {mb / ours:.1f} | {mb / peer:.1f} |")
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
