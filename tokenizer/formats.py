"""File formats: tiktoken's `.tiktoken` rank files and our `.json` metadata, written atomically.

A `.tiktoken` file holds one `base64(token_bytes) rank` line per token, exactly what
`tiktoken.load.load_tiktoken_bpe` reads. Everything else about a tokenizer (name, split
pattern, special tokens, merges, training statistics) lives in `STEM.json` next to it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

FORMAT_VERSION = 1


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write via a temp file in the same folder + rename, so readers never see half a file."""
    with atomic_writer(path) as f:
        f.write(data)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file that becomes `path` when the block ends, all at once (for writers that
    stream: no copy of the content in memory); on an error the temp file is removed."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _read_umask() -> int:
    """Read once at import: os.umask can only be read by setting it, which races with threads."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_tiktoken(ranks: dict[bytes, int]) -> str:
    """Ranks -> `.tiktoken` text, lines sorted by rank."""
    lines = [
        f"{base64.b64encode(token).decode('ascii')} {rank}\n"
        for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])
    ]
    return "".join(lines)


def parse_tiktoken(text: str, source: str = "<string>") -> dict[bytes, int]:
    """`.tiktoken` text -> ranks; a bad line raises ValueError naming the file and line."""
    ranks: dict[bytes, int] = {}
    seen_ranks: set[int] = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{source}:{lineno}: expected 'BASE64 RANK', got {line[:60]!r}")
        token_b64, rank_str = parts
        try:
            token = base64.b64decode(token_b64, validate=True)
            rank = int(rank_str)
        except (binascii.Error, ValueError):
            raise ValueError(f"{source}:{lineno}: bad token or rank: {line[:60]!r}") from None
        if rank < 0:
            raise ValueError(f"{source}:{lineno}: negative rank {rank}")
        if token in ranks:
            raise ValueError(f"{source}:{lineno}: token {token!r} appears twice")
        if rank in seen_ranks:
            raise ValueError(f"{source}:{lineno}: rank {rank} appears twice")
        ranks[token] = rank
        seen_ranks.add(rank)
    if not ranks:
        raise ValueError(f"{source}: no tokens in file")
    return ranks


def write_tiktoken(path: str | os.PathLike, ranks: dict[bytes, int]) -> None:
    atomic_write_text(path, dump_tiktoken(ranks))


def read_tiktoken(path: str | os.PathLike) -> dict[bytes, int]:
    path = Path(path)
    try:
        text = path.read_bytes().decode("ascii")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a .tiktoken file (non-ASCII byte at offset {e.start})") from None
    return parse_tiktoken(text, str(path))


def write_json(path: str | os.PathLike, obj: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=1) + "\n")


def read_json(path: str | os.PathLike) -> dict[str, Any]:
    path = Path(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte offset {e.start})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: expected a JSON object at the top level")
    return obj
