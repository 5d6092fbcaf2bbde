"""The reference encodings (gpt2, r50k_base, p50k_base, cl100k_base, o200k_base).

Their ranks come from the npm `tiktoken` package (`encoders/NAME.json`): nothing is
downloaded at run time. `build_blobs()` (run by `make`) converts them once into a
compact binary blob per encoding (see `pack_encoding`), which CPython and the browser
(Pyodide) both load in tens of milliseconds instead of base64-decoding 100k+ strings.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import sys
from array import array
from pathlib import Path
from typing import Any

from . import formats
from .core import Tokenizer
from .patterns import PATTERNS

ENCODING_PATTERNS = {
    name: PATTERNS[name] for name in ("gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base")
}
ENCODING_PATTERN_NAMES = {
    "gpt2": "gpt2",
    "r50k_base": "r50k",
    "p50k_base": "p50k",
    "cl100k_base": "cl100k",
    "o200k_base": "o200k",
}
BLOB_MAGIC = b"BPEPG\x01\n"
DATA_DIR = Path(__file__).with_name("_data")  # built blobs; git-ignored
_loaded: dict[str, Tokenizer] = {}


def list_encodings() -> list[str]:
    return list(ENCODING_PATTERNS)


def get_encoding(name: str) -> Tokenizer:
    """A reference encoding, loaded once per process."""
    if name not in ENCODING_PATTERNS:
        raise ValueError(f"unknown encoding {name!r}; available: {', '.join(ENCODING_PATTERNS)}")
    tok = _loaded.get(name)
    if tok is None:
        blob_path = DATA_DIR / f"{name}.bpe"
        if blob_path.exists():
            tok = encoding_from_bytes(blob_path.read_bytes())
        else:
            tok = encoding_from_npm_json(name, _read_npm_json(name))
        _loaded[name] = tok
    return tok


def register_encoding(data: bytes) -> Tokenizer:
    """Make a blob's encoding available to get_encoding (how the browser worker loads them)."""
    tok = encoding_from_bytes(data)
    _loaded[tok.name] = tok
    return tok


# ----- npm tiktoken JSON --------------------------------------------------------------


def npm_encoders_dir() -> Path:
    """Where npm's tiktoken keeps encoders/*.json: $TOKENIZER_NPM_ENCODERS, else ./node_modules."""
    env = os.environ.get("TOKENIZER_NPM_ENCODERS")
    if env:
        return Path(env)
    for root in (Path(__file__).resolve().parents[1], Path.cwd()):
        candidate = root / "node_modules" / "tiktoken" / "encoders"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        "reference encodings not found: run `npm ci` in the repository (npm package tiktoken) "
        "or `make build`, or set TOKENIZER_NPM_ENCODERS"
    )


def _read_npm_json(name: str) -> dict[str, Any]:
    return json.loads((npm_encoders_dir() / f"{name}.json").read_text(encoding="utf-8"))


def parse_bpe_ranks(bpe_ranks: str) -> dict[bytes, int]:
    """npm's `bpe_ranks`: `! <start>` markers, then base64 tokens taking consecutive ranks."""
    ranks: dict[bytes, int] = {}
    words = bpe_ranks.split()
    next_rank = 0
    i = 0
    while i < len(words):
        if words[i] == "!":
            next_rank = int(words[i + 1])
            i += 2
            continue
        ranks[base64.b64decode(words[i])] = next_rank
        next_rank += 1
        i += 1
    return ranks


def encoding_from_npm_json(name: str, obj: dict[str, Any]) -> Tokenizer:
    return Tokenizer(
        parse_bpe_ranks(obj["bpe_ranks"]),
        ENCODING_PATTERN_NAMES[name],
        obj.get("special_tokens", {}),
        name=name,
    )


# ----- binary blob --------------------------------------------------------------------
# BLOB_MAGIC | u32 header length | header JSON | u16 token lengths (LE) | token bytes
# Header: name, pattern, special_tokens, segments [[first_rank, count], ...] (ranks have gaps).


def pack_encoding(tok: Tokenizer) -> bytes:
    items = sorted(tok.mergeable_ranks.items(), key=lambda kv: kv[1])
    segments: list[list[int]] = []
    for _, rank in items:
        if segments and segments[-1][0] + segments[-1][1] == rank:
            segments[-1][1] += 1
        else:
            segments.append([rank, 1])
    header = json.dumps(
        {"name": tok.name, "pattern": tok.pattern, "special_tokens": tok.special_tokens, "segments": segments}
    ).encode("utf-8")
    lengths = array("H", [len(token) for token, _ in items])
    if sys.byteorder != "little":
        lengths.byteswap()
    return b"".join(
        [BLOB_MAGIC, struct.pack("<I", len(header)), header, lengths.tobytes(), *(t for t, _ in items)]
    )


def encoding_from_bytes(data: bytes) -> Tokenizer:
    if not data.startswith(BLOB_MAGIC):
        raise ValueError("not an encoding blob (bad magic)")
    pos = len(BLOB_MAGIC)
    (header_len,) = struct.unpack_from("<I", data, pos)
    pos += 4
    header = json.loads(data[pos : pos + header_len])
    pos += header_len
    count = sum(n for _, n in header["segments"])
    lengths = array("H")
    lengths.frombytes(data[pos : pos + 2 * count])
    if sys.byteorder != "little":
        lengths.byteswap()
    pos += 2 * count
    tokens = []
    append = tokens.append
    for length in lengths:
        append(data[pos : pos + length])
        pos += length
    if pos != len(data):
        raise ValueError(f"encoding blob {header['name']!r} is truncated or has trailing data")
    rank_ids = [r for first, n in header["segments"] for r in range(first, first + n)]
    return Tokenizer(
        dict(zip(tokens, rank_ids, strict=True)),
        header["pattern"],
        header["special_tokens"],
        name=header["name"],
    )


def build_blobs(out_dir: str | os.PathLike = DATA_DIR) -> dict[str, Path]:
    """Convert every npm encoder JSON into a blob in `out_dir` (skips up-to-date ones)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    src_dir = npm_encoders_dir()
    written = {}
    for name in ENCODING_PATTERNS:
        src = src_dir / f"{name}.json"
        dst = out / f"{name}.bpe"
        if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            tok = encoding_from_npm_json(name, json.loads(src.read_text(encoding="utf-8")))
            formats.atomic_write_bytes(dst, pack_encoding(tok))
        written[name] = dst
    return written
