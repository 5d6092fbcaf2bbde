"""Tokenizer: tiktoken-compatible byte-level BPE encoding and decoding.

Encoding is rank-based, exactly as tiktoken does it: split the text with the pattern, then
inside each chunk repeatedly merge the adjacent pair whose concatenated bytes have the
lowest rank. Short chunks use a simple scan; long ones a heap, so a megabyte without a
split point stays O(n log n) instead of quadratic (tiktoken #195).
"""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Collection, Iterable
from itertools import repeat
from pathlib import Path
from typing import Any, Literal

from . import formats
from .patterns import compile_pattern, resolve_pattern

CACHE_SIZE = 1 << 18  # chunk -> ids entries kept before the cache is cleared (~40 MB at most)
HEAP_THRESHOLD = 128  # chunks longer than this (in bytes) merge with a heap
_SINGLE_BYTES = [bytes([b]) for b in range(256)]
_NO_RANK = 1 << 62  # "this pair is not a token"; compares above every real rank


class Tokenizer:
    """A byte-level BPE tokenizer: ranks (bytes -> id), a split pattern, special tokens."""

    def __init__(
        self,
        mergeable_ranks: dict[bytes, int],
        pattern: str = "gpt4",
        special_tokens: dict[str, int] | None = None,
        *,
        name: str = "custom",
        merges: list[tuple[int, int]] | None = None,
        metadata: dict[str, Any] | None = None,
        decoder: dict[int, bytes] | None = None,
    ) -> None:
        missing = [b for b in range(256) if bytes([b]) not in mergeable_ranks]
        if missing:
            raise ValueError(
                f"tokenizer {name!r}: ranks lack {len(missing)} single bytes "
                f"(first: 0x{missing[0]:02X}); a byte-level BPE needs all 256"
            )
        self.name = name
        self.pattern = pattern
        self.mergeable_ranks = mergeable_ranks
        self.special_tokens: dict[str, int] = dict(special_tokens or {})
        self.merges = merges
        self.metadata: dict[str, Any] = dict(metadata or {})
        self._decoder: dict[int, bytes] = (
            decoder if decoder is not None else {rank: token for token, rank in mergeable_ranks.items()}
        )
        for token, token_id in self.special_tokens.items():
            if token_id in self._decoder:
                raise ValueError(
                    f"special token {token!r} has id {token_id}, which a merged token already uses"
                )
        self._special_decoder = {i: s.encode("utf-8") for s, i in self.special_tokens.items()}
        self._splitter = compile_pattern(pattern)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._special_regex_cache: dict[frozenset[str], re.Pattern[str]] = {}

    # ----- construction -----------------------------------------------------------------

    @classmethod
    def from_merges(
        cls,
        merges: Iterable[tuple[int, int]],
        pattern: str = "gpt4",
        special_tokens: dict[str, int] | list[str] | None = None,
        *,
        name: str = "custom",
        metadata: dict[str, Any] | None = None,
    ) -> Tokenizer:
        """Bytes are ids 0..255, merge i is id 256+i.

        Two merges can make identical bytes; ranks (the encoder and `.tiktoken`) keep the
        lowest id for them, while the decoder still knows the later id.
        """
        vocab = [bytes([b]) for b in range(256)]
        ranks = {token: i for i, token in enumerate(vocab)}
        merge_list: list[tuple[int, int]] = []
        for i, pair in enumerate(merges):
            left, right = int(pair[0]), int(pair[1])
            new_id = 256 + i
            if not (0 <= left < new_id and 0 <= right < new_id):
                raise ValueError(f"merge {i} ({left}, {right}) refers to an id not defined before it")
            token = vocab[left] + vocab[right]
            vocab.append(token)
            ranks.setdefault(token, new_id)
            merge_list.append((left, right))
        if isinstance(special_tokens, (list, tuple)):
            special_tokens = {s: len(vocab) + i for i, s in enumerate(special_tokens)}
        return cls(
            ranks,
            pattern,
            special_tokens,
            name=name,
            merges=merge_list,
            metadata=metadata,
            decoder=dict(enumerate(vocab)),
        )

    # ----- properties -------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (ids may have gaps, as in p50k_base)."""
        return max([*self._decoder, *self.special_tokens.values()]) + 1

    @property
    def pattern_regex(self) -> str:
        return resolve_pattern(self.pattern)

    @property
    def duplicate_ids(self) -> dict[int, int]:
        """Later ids whose bytes equal an earlier token's: {later_id: id the encoder uses}."""
        return {
            i: self.mergeable_ranks[token]
            for i, token in self._decoder.items()
            if self.mergeable_ranks.get(token) != i
        }

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab} pattern={self.pattern[:20]!r}>"

    # ----- encoding ---------------------------------------------------------------------

    def split(self, text: str) -> list[str]:
        """The pre-tokenization chunks of `text` (merges never cross them)."""
        return self._splitter.findall(text)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ignoring special tokens (their text is encoded as ordinary text)."""
        try:
            return self._encode_chunks(self._splitter.findall(text))
        except UnicodeEncodeError:
            # Lone surrogates: tiktoken replaces them the same way.
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return self._encode_chunks(self._splitter.findall(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encode with tiktoken's special-token rules.

        Special tokens in `allowed_special` become their ids; text matching a disallowed
        one raises ValueError (it usually means untrusted text is pretending to be a
        control token); anything else is ordinary text.
        """
        allowed = set(self.special_tokens) if allowed_special == "all" else set(allowed_special)
        disallowed = (
            set(self.special_tokens) - allowed if disallowed_special == "all" else set(disallowed_special)
        )
        if disallowed:
            match = self._special_regex(disallowed).search(text)
            if match:
                raise ValueError(
                    f"Encountered text corresponding to disallowed special token {match.group()!r}.\n"
                    f"If you want this text to be encoded as a special token, pass it to "
                    f"`allowed_special`, e.g. `allowed_special={{{match.group()!r}, ...}}`.\n"
                    f"If you want this text to be encoded as normal text, disable the check for "
                    f"this token by passing `disallowed_special=(enc.special_tokens_set - {{{match.group()!r}}})`.\n"
                    f"To disable this check for all special tokens, pass `disallowed_special=()`."
                )
        allowed &= set(self.special_tokens)
        if not allowed:
            return self.encode_ordinary(text)
        ids: list[int] = []
        start = 0
        for match in self._special_regex(allowed).finditer(text):
            ids.extend(self.encode_ordinary(text[start : match.start()]))
            ids.append(self.special_tokens[match.group()])
            start = match.end()
        ids.extend(self.encode_ordinary(text[start:]))
        return ids

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    def _special_regex(self, tokens: Collection[str]) -> re.Pattern[str]:
        key = frozenset(tokens)
        regex = self._special_regex_cache.get(key)
        if regex is None:
            # Longest first, so a token that is a prefix of another never wins.
            alternatives = sorted(key, key=lambda s: (-len(s), s))
            regex = re.compile("|".join(re.escape(s) for s in alternatives))
            self._special_regex_cache[key] = regex
        return regex

    def _encode_chunks(self, chunks: list[str]) -> list[int]:
        ranks = self.mergeable_ranks
        cache = self._cache
        ids: list[int] = []
        extend = ids.extend
        for chunk in chunks:
            chunk_ids = cache.get(chunk)
            if chunk_ids is None:
                piece = chunk.encode("utf-8")
                rank = ranks.get(piece)
                chunk_ids = (rank,) if rank is not None else self._bpe(piece)
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                cache[chunk] = chunk_ids
            extend(chunk_ids)
        return ids

    def _bpe(self, piece: bytes) -> tuple[int, ...]:
        if len(piece) > HEAP_THRESHOLD:
            return _bpe_heap(piece, self.mergeable_ranks)
        return _bpe_scan(piece, self.mergeable_ranks)

    # ----- decoding ---------------------------------------------------------------------

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        token = self._decoder.get(token_id)
        if token is None:
            token = self._special_decoder.get(token_id)
            if token is None:
                raise ValueError(f"unknown token id {token_id} (vocabulary has {self.n_vocab} ids)")
        return token

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """Each token's bytes, for showing tokens that are not valid UTF-8 on their own."""
        return [self.decode_single_token_bytes(i) for i in ids]

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return b"".join(self.decode_tokens_bytes(ids))

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # ----- files ------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "bpe-playground",
            "version": formats.FORMAT_VERSION,
            "name": self.name,
            "pattern": self.pattern,
            "pattern_regex": self.pattern_regex,
            "special_tokens": self.special_tokens,
            "vocab_size": self.n_vocab,
            "merges": [list(pair) for pair in self.merges] if self.merges is not None else None,
            "metadata": self.metadata,
        }

    def save(self, stem: str | os.PathLike) -> None:
        """Write STEM.tiktoken (tiktoken's rank format) and STEM.json (everything else)."""
        stem = _strip_suffix(Path(stem))
        formats.write_tiktoken(stem.with_name(stem.name + ".tiktoken"), self.mergeable_ranks)
        formats.write_json(stem.with_name(stem.name + ".json"), self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike, pattern: str = "gpt4") -> Tokenizer:
        """Load STEM, STEM.tiktoken or STEM.json (a bare .tiktoken uses `pattern`)."""
        stem = _strip_suffix(Path(path))
        json_path = stem.with_name(stem.name + ".json")
        tiktoken_path = stem.with_name(stem.name + ".tiktoken")
        if not json_path.exists() and not tiktoken_path.exists():
            raise FileNotFoundError(
                f"no tokenizer at {path} (looked for {json_path.name} and {tiktoken_path.name})"
            )
        ranks = formats.read_tiktoken(tiktoken_path) if tiktoken_path.exists() else None
        if not json_path.exists():
            return cls(ranks, pattern, name=stem.name)  # type: ignore[arg-type]
        return cls.from_json(formats.read_json(json_path), ranks, source=str(json_path))

    @classmethod
    def from_json(
        cls, meta: dict[str, Any], ranks: dict[bytes, int] | None = None, source: str = "<json>"
    ) -> Tokenizer:
        """Rebuild from STEM.json (+ the .tiktoken ranks), checking that the two agree."""
        name = meta.get("name", "custom")
        pattern = meta.get("pattern_regex") or meta.get("pattern") or "gpt4"
        if meta.get("pattern") in ("gpt2", "r50k", "p50k", "cl100k", "gpt4", "o200k", "gpt4o", "none"):
            pattern = meta["pattern"]
        special = meta.get("special_tokens") or {}
        if not isinstance(special, dict) or not all(
            isinstance(k, str) and isinstance(v, int) for k, v in special.items()
        ):
            raise ValueError(f"{source}: 'special_tokens' must map strings to integer ids")
        merges = meta.get("merges")
        metadata = meta.get("metadata") or {}
        if merges is None:
            if ranks is None:
                raise ValueError(f"{source}: has no merges and there is no .tiktoken file next to it")
            return cls(ranks, pattern, special, name=name, metadata=metadata)
        if not isinstance(merges, list) or not all(
            isinstance(m, list) and len(m) == 2 and all(isinstance(x, int) for x in m) for m in merges
        ):
            raise ValueError(f"{source}: 'merges' must be a list of [left_id, right_id] pairs")
        try:
            tok = cls.from_merges(merges, pattern, special, name=name, metadata=metadata)
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None
        if ranks is not None and ranks != tok.mergeable_ranks:
            raise ValueError(f"{source}: merges disagree with the ranks in the .tiktoken file next to it")
        return tok


def _strip_suffix(path: Path) -> Path:
    if path.suffix in (".tiktoken", ".json"):
        return path.with_suffix("")
    return path


def _bpe_scan(piece: bytes, ranks: dict[bytes, int]) -> tuple[int, ...]:
    """tiktoken's loop: merge the leftmost lowest-rank adjacent pair until none is mergeable.

    Pair ranks are kept in a list and only the merged pair's neighbours are re-ranked;
    `min` and `index` then run at C speed, which is what makes short chunks cheap.
    """
    get = ranks.get
    parts = list(map(_SINGLE_BYTES.__getitem__, piece))
    pair_ranks = list(map(get, map(bytes.__add__, parts, parts[1:]), repeat(_NO_RANK)))
    while pair_ranks:
        best = min(pair_ranks)
        if best == _NO_RANK:
            break
        i = pair_ranks.index(best)
        merged = parts[i] + parts[i + 1]
        parts[i] = merged
        del parts[i + 1]
        del pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(merged + parts[i + 1], _NO_RANK)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + merged, _NO_RANK)
    return tuple(map(ranks.__getitem__, parts))


def _bpe_heap(piece: bytes, ranks: dict[bytes, int]) -> tuple[int, ...]:
    """Same result as `_bpe_scan` in O(n log n): a heap of candidate pairs, lazily invalidated.

    Part i spans piece[i:end[i]]; parts form a linked list. Ties on rank pop the leftmost
    start first, which is exactly the scan's leftmost-lowest choice.
    """
    n = len(piece)
    end = list(range(1, n + 1))  # end[i]: end of the part starting at i
    prev = list(range(-1, n - 1))
    alive = [True] * n
    get = ranks.get
    heap: list[tuple[int, int, int]] = []
    for i in range(n - 1):
        rank = get(piece[i : i + 2])
        if rank is not None:
            heap.append((rank, i, i + 2))
    heapq.heapify(heap)
    while heap:
        rank, i, pair_end = heapq.heappop(heap)
        if not alive[i]:
            continue
        j = end[i]
        if j >= n or not alive[j] or end[j] != pair_end:
            continue  # stale: one side merged since this entry was pushed
        alive[j] = False
        end[i] = pair_end
        if pair_end < n:
            prev[pair_end] = i
            new_rank = get(piece[i : end[pair_end]])
            if new_rank is not None:
                heapq.heappush(heap, (new_rank, i, end[pair_end]))
        p = prev[i]
        if p >= 0:
            new_rank = get(piece[p:pair_end])
            if new_rank is not None:
                heapq.heappush(heap, (new_rank, p, pair_end))
    ids = []
    i = 0
    while i < n:
        ids.append(ranks[piece[i : end[i]]])
        i = end[i]
    return tuple(ids)
