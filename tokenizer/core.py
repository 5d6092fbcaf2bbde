"""Tokenizer: tiktoken-compatible byte-level BPE encoding and decoding.

Encoding is rank-based, exactly as tiktoken does it: split the text with the pattern, then
merge inside each chunk (`_bpe.encode_piece`: repeatedly the adjacent pair whose concatenated
bytes have the lowest rank). A chunk seen before comes from a bounded cache, so repeated
words cost one dict lookup in C.

Three options reproduce Hugging Face files exactly (hf_import.py): a `Preparation`
(preparation.py: Unicode normalization and HF's add_prefix_space, applied by `split` before and
around the pattern); `chunk_lookup=False` for HF's `ignore_merges: false`, where a chunk that is
itself a token is not taken whole (the merge loop alone decides, so a token the merges never
reach from its bytes is never produced); `unicode="tiktoken"`: a Split regex's \\p{..} and \\s at
Oniguruma's Unicode 16, not the `regex` package's (patterns.py). Without them (tiktoken's
behaviour) encoding takes the same path as before they existed.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import chain
from typing import Any, Literal

from . import _batch, formats, saved
from ._arguments import (
    check_text,
    disallowed_special_error,
    ids_after,
    merge_pair,
    special_set,
    token_id_of,
    token_ids,
)
from ._batch_cuts import safe_cuts
from ._bpe import HEAP_THRESHOLD, MIN_SEGMENT, LongChunkHelp, bpe_merge, encode_piece
from ._gc import paused_gc
from .added_tokens import TokenMatcher, find_disallowed, token_regex
from .patterns import (
    DEFAULT_PATTERN,
    NO_SPLIT,
    NO_SPLIT_REGEX,
    check_pattern_name,
    compile_split,
    resolve_pattern,
)
from .preparation import Preparation
from .readers import TokenizerParts, read_file, saved_json_parts
from .validate import check_disjoint

CACHE_SIZE = 1 << 18  # chunk -> ids entries kept before the cache is cleared (~40 MB at most)
BATCH_WINDOW = CACHE_SIZE // 2  # chunks whose new ones are merged together (half the cache: all fit)
SAMPLE_STEP = 32  # every 32nd chunk is looked up to guess whether many are new
NARROW_SIZES_KEPT = (
    64  # byte-value sets whose narrow table size is remembered (each costs up to 0.07 s to find)
)


class Tokenizer:
    """A byte-level BPE tokenizer: ranks (bytes -> id), a split pattern, special tokens."""

    def __init__(
        self,
        mergeable_ranks: dict[bytes, int],
        pattern: str = DEFAULT_PATTERN,
        special_tokens: dict[str, int] | None = None,
        *,
        name: str = "custom",
        merges: list[tuple[int, int]] | None = None,
        metadata: dict[str, Any] | None = None,
        decoder: dict[int, bytes] | None = None,
        preparation: Preparation | None = None,
        chunk_lookup: bool = True,
        unicode: str | None = None,
        shared_special_ids: bool = False,
    ) -> None:
        mergeable_ranks = token_ids(mergeable_ranks, bytes, f"tokenizer {name!r}: mergeable_ranks")
        missing = [b for b in range(256) if bytes([b]) not in mergeable_ranks]
        if missing:
            raise ValueError(
                f"tokenizer {name!r}: ranks lack {len(missing)} single bytes "
                f"(first: 0x{missing[0]:02X}); a byte-level BPE needs all 256"
            )
        self.name = name
        self.pattern = pattern
        self.mergeable_ranks = mergeable_ranks
        self.special_tokens: dict[str, int] = dict(
            token_ids(special_tokens or {}, str, f"tokenizer {name!r}: special_tokens")
        )
        self.merges = merges
        self.metadata: dict[str, Any] = dict(metadata or {})
        self._decoder: dict[int, bytes] = (
            decoder if decoder is not None else {rank: token for token, rank in mergeable_ranks.items()}
        )
        if not shared_special_ids:  # tiktoken allows it (compat.py): the id decodes as the merged token
            check_disjoint(self.special_tokens, self._decoder, f"tokenizer {name!r}")
        self._special_decoder = {i: s.encode("utf-8") for s, i in self.special_tokens.items()}
        self.unicode = unicode  # None: the pattern's default flavour (patterns.default_unicode)
        check_pattern_name(pattern)
        self._splitter = compile_split(pattern, unicode=unicode)
        self.preparation = preparation or None  # None: the text is split as it is (tiktoken)
        # HF's added tokens that are not special: matched in any text (added_tokens.py)
        self.always_matched: frozenset[str] = (
            preparation.added.not_special if preparation and preparation.added else frozenset()
        )
        if missing := sorted(self.always_matched - self.special_tokens.keys()):
            raise ValueError(f"tokenizer {name!r}: added tokens {missing[:3]} have no id")
        self.chunk_lookup = chunk_lookup
        if not chunk_lookup:  # the default path stays the method itself, unchanged
            self._encode_new_chunk = self._merge_new_chunk  # type: ignore[method-assign]
        self._cache = _ChunkCache(self._encode_new_chunk)
        self._longest_token: int | None = None  # bytes; bounds the safe-cut checks of long chunks
        self._pairs: _batch.PairTable | None = None  # built on the first batch merge (numpy only)
        self._narrow: tuple[bytes, _batch.PairTable] | None = None  # byte values -> table of their tokens
        self._narrow_sizes: dict[bytes, int] = {}  # byte values -> tokens made of them (fits: else the vocab)
        self._long_help = LongChunkHelp(self._find_cuts, self._merge_segments)
        # Another engine's merge of many new chunks at once (the page sets its JavaScript one):
        # pieces that are not tokens, 2 to HEAP_THRESHOLD bytes, BATCH_MIN_CHUNKS or more of
        # them -> the scan's ids of each, or None to decline. Tried before numpy's batch.
        self.batch_merge: Callable[[list[bytes]], list[tuple[int, ...]] | None] | None = None
        self._special_regex_cache: dict[frozenset[str], re.Pattern[str]] = {}

    # ----- construction -----------------------------------------------------------------

    @classmethod
    def from_merges(
        cls,
        merges: Iterable[tuple[int, int]],
        pattern: str = DEFAULT_PATTERN,
        special_tokens: dict[str, int] | list[str] | None = None,
        *,
        name: str = "custom",
        metadata: dict[str, Any] | None = None,
        preparation: Preparation | None = None,
        chunk_lookup: bool = True,
        unicode: str | None = None,
    ) -> Tokenizer:
        """Bytes are ids 0..255, merge i is id 256+i.

        Two merges can make identical bytes; ranks (the encoder and `.tiktoken`) keep the
        lowest id for them, while the decoder still knows the later id.
        """
        vocab = [bytes([b]) for b in range(256)]
        ranks = {token: i for i, token in enumerate(vocab)}
        merge_list: list[tuple[int, int]] = []
        for i, pair in enumerate(merges):
            left, right = merge_pair(pair, i)
            new_id = 256 + i
            if not (0 <= left < new_id and 0 <= right < new_id):
                raise ValueError(f"merge {i} ({left}, {right}) refers to an id not defined before it")
            token = vocab[left] + vocab[right]
            vocab.append(token)
            ranks.setdefault(token, new_id)
            merge_list.append((left, right))
        if isinstance(special_tokens, (list, tuple)):
            special_tokens = ids_after(special_tokens, len(vocab))
        return cls(
            ranks,
            pattern,
            special_tokens,
            name=name,
            merges=merge_list,
            metadata=metadata,
            decoder=dict(enumerate(vocab)),
            preparation=preparation,
            chunk_lookup=chunk_lookup,
            unicode=unicode,
        )

    # ----- properties -------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (ids may have gaps, as in p50k_base)."""
        return max([*self._decoder, *self.special_tokens.values()]) + 1

    @property
    def pattern_regex(self) -> str:
        """The split as a regex (a name resolved; `none` as NO_SPLIT_REGEX): tiktoken's pat_str."""
        return NO_SPLIT_REGEX if self.pattern == NO_SPLIT else resolve_pattern(self.pattern)

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
        """The pre-tokenization chunks of `text` (merges never cross them). With a preparation
        they are chunks of the prepared text (normalized, with HF's prefix space), as merged."""
        check_text(text)
        if self.preparation is None:
            return self._splitter.findall(text)
        return self.preparation.chunks(text, self._splitter)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ignoring special tokens (their text is encoded as ordinary text); HF's added
        tokens that are not special are still matched, as HF matches them in any text."""
        check_text(text)
        return (
            self._encode_around(text, self.always_matched) if self.always_matched else self._encode_text(text)
        )

    def _encode_text(self, text: str) -> list[int]:
        """The text's chunks merged, no token matched in it."""
        split = self._splitter.findall if self.preparation is None else self.split
        try:
            return self._encode_chunks(split(text))
        except UnicodeEncodeError:  # lone surrogates: tiktoken replaces them the same way
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return self._encode_chunks(split(text))

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
        check_text(text)
        allowed = self.check_special(text, allowed_special, disallowed_special)
        allowed &= set(self.special_tokens)
        if disallowed_special == "all" and isinstance(self.special_regex(self.special_tokens), TokenMatcher):
            allowed = set(self.special_tokens)  # HF's scan found none disallowed: take its matches
        return self._encode_around(text, allowed) if allowed else self._encode_text(text)

    def _encode_around(self, text: str, tokens: Collection[str]) -> list[int]:
        """`tokens` found in the text as their ids, the rest merged."""
        ids: list[int] = []
        for before, token in self.segments(text, tokens):
            ids.extend(self._encode_text(before))
            if token is not None:
                ids.append(self.special_tokens[token])
        return ids

    def segments(self, text: str, tokens: Collection[str]) -> Iterator[tuple[str, str | None]]:
        """(text before a match, its token) for each of `tokens` found (one scan, special_regex),
        then (the rest, None): how encode cuts the text around special tokens."""
        start = 0
        for match in self.special_regex(tokens).finditer(text):
            yield text[start : match.start()], match.group()
            start = match.end()
        yield text[start:], None

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    @property
    def control_tokens(self) -> set[str]:
        """The special tokens encode may refuse: all but HF's non-special added ones."""
        return self.special_tokens.keys() - self.always_matched

    def check_special(
        self,
        text: str,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> set[str]:
        """tiktoken's special-token rules: the allowed special tokens, after raising ValueError
        (tiktoken's message) if `text` holds a disallowed one. "all" means every special token;
        `disallowed_special="all"` means every one not allowed; an explicit set wins over allowed.
        HF's added tokens that are not special (always_matched) are always allowed; with HF's
        options, a disallowed one counts where HF's scan of them all finds it (find_disallowed)."""
        every = set(self.special_tokens)
        allowed = every if allowed_special == "all" else special_set(allowed_special, "allowed")
        allowed |= self.always_matched
        if disallowed_special == "all":
            disallowed = every - allowed
        else:  # None or empty: no check, as tiktoken's `if disallowed_special:`
            disallowed = special_set(disallowed_special, "disallowed") if disallowed_special else set()
            disallowed -= self.always_matched
        match = find_disallowed(self.special_regex, every, disallowed, text) if disallowed else None
        if match:
            raise disallowed_special_error(match.group())
        return allowed

    def special_regex(self, tokens: Collection[str]) -> re.Pattern[str]:
        """A regex matching any of `tokens` (leftmost, then longest), compiled once per set; with
        HF's lstrip/rstrip/single_word (preparation.added) a TokenMatcher, used as one."""
        key = frozenset(tokens)
        regex = self._special_regex_cache.get(key)
        if regex is None:
            regex = token_regex(key, self.preparation.added if self.preparation else None)
            self._special_regex_cache[key] = regex
        return regex

    def _encode_chunks(self, chunks: list[str]) -> list[int]:
        cache = self._cache
        if type(cache) is not _ChunkCache:  # someone assigned a plain dict to reset it
            cache = self._cache = _ChunkCache(self._encode_new_chunk, cache)
        if len(chunks) < _batch.BATCH_MIN_CHUNKS:
            # Hits never leave C: a miss calls _ChunkCache.__missing__ (one Python call per new chunk).
            return list(chain.from_iterable(map(cache.__getitem__, chunks)))
        with paused_gc():  # many new tuples, no cycles: 3-8 % of a 6 MB encode went to the GC
            if self.batch_merge is not None or _batch.available():
                return self._encode_many(chunks, cache)
            return list(chain.from_iterable(map(cache.__getitem__, chunks)))

    def _encode_many(self, chunks: list[str], cache: _ChunkCache) -> list[int]:
        """Many chunks: the new ones are merged together (`_batch`, when there are enough of
        them and numpy is there), then every chunk is read from the cache. More distinct
        chunks than the cache holds go a window of BATCH_WINDOW chunks at a time."""
        # A sample first: a warm cache (text seen before), or too few new chunks for a batch
        # to pay, skips building the set of new chunks.
        if self._sample_says_batch(chunks, cache):
            distinct = set(chunks)
            if len(distinct) > CACHE_SIZE:
                windows = (chunks[i : i + BATCH_WINDOW] for i in range(0, len(chunks), BATCH_WINDOW))
                return list(chain.from_iterable(self._encode_many(window, cache) for window in windows))
            new = distinct.difference(cache)
            if len(new) >= _batch.BATCH_MIN_CHUNKS:
                if len(cache) + len(new) > CACHE_SIZE:
                    cache.clear()
                    new = distinct
                new_chunks = list(new)
                pieces = list(map(str.encode, new_chunks))  # UTF-8
                cache.update(zip(new_chunks, self._merge_pieces(pieces), strict=True))
        return list(chain.from_iterable(map(cache.__getitem__, chunks)))

    def _sample_says_batch(self, chunks: list[str], cache: _ChunkCache) -> bool:
        """Whether the new chunks look many enough for a batch, judged from every
        SAMPLE_STEP-th chunk. Distinct words grow slower than the text (Heaps' law), so the
        distinct new chunks of the sample and of half of it give the growth exponent, and
        the sample's figures are scaled up by it. The guess overshoots (1.6x on English), so
        it must reach _batch.ESTIMATE_MARGIN times the table's price, less where nearly every chunk is
        new (`_batch.estimate_margin`); only speed depends on it."""
        missed = [chunk for chunk in chunks[::SAMPLE_STEP] if chunk not in cache]
        if len(missed) * SAMPLE_STEP < _batch.BATCH_MIN_CHUNKS:
            return False
        if self._pairs is not None or self.batch_merge is not None:  # no table to pay for here
            return True
        pieces = [chunk.encode("utf-8", "surrogatepass") for chunk in missed]
        if self.chunk_lookup:  # a chunk that is a token is looked up, never merged
            pieces = [piece for piece in pieces if piece not in self.mergeable_ranks]
        sample, half = set(pieces), set(pieces[::2])
        if not sample:  # every new chunk is a token: nothing to merge
            return False
        growth = min(max(math.log2(len(sample) / max(len(half), 1)), 0.0), 1.0)
        scale = SAMPLE_STEP**growth / _batch.estimate_margin(growth)
        values = _batch.byte_values(b"".join(sample))
        return self.batch_pays(int(len(sample) * scale), int(sum(map(len, sample)) * scale), values)

    def chunk_token_counts(self, chunks: list[str]) -> list[int]:
        """How many tokens each chunk encodes to (len of its ids), without keeping the ids:
        what counting needs. Many chunks are merged together when numpy is there."""
        return self._merge_pieces(list(map(str.encode, chunks)), lengths_only=True)

    def _merge_pieces(self, pieces: list[bytes], *, lengths_only: bool = False) -> list[Any]:
        """Each piece's ids (or their number) exactly as `_encode_new_chunk` gives them: whole
        tokens and long pieces one by one, the rest through `_batch` in one go."""
        whole = list(map(self.mergeable_ranks.get, pieces)) if self.chunk_lookup else [None] * len(pieces)
        # A piece that is a token gives (rank,) (1 when counting); the others are filled below.
        results: list[Any] = [1] * len(pieces) if lengths_only else list(zip(whole))
        batched: list[int] = []
        for i in [i for i, rank in enumerate(whole) if rank is None]:
            if 1 < len(pieces[i]) <= HEAP_THRESHOLD:
                batched.append(i)
            else:
                ids = self._piece_ids(pieces[i])
                results[i] = len(ids) if lengths_only else ids
        to_merge = [pieces[i] for i in batched]
        found = self._merge_short(to_merge, lengths_only=lengths_only)
        for i, result in zip(batched, found, strict=True):
            results[i] = result
        return results

    def _merge_short(self, pieces: list[bytes], *, lengths_only: bool = False) -> list[Any]:
        """Ids (or their number) of pieces that are not tokens, 2 to HEAP_THRESHOLD bytes each:
        through `batch_merge` if set and it accepts them, else numpy's batch if it pays, else
        the Python loop."""
        if self.batch_merge is not None and len(pieces) >= _batch.BATCH_MIN_CHUNKS:
            merged = self.batch_merge(pieces)
            if merged is not None:
                return list(map(len, merged)) if lengths_only else merged
        priced = self._pairs is None and len(pieces) >= _batch.BATCH_MIN_CHUNKS  # else values don't matter
        values = _batch.byte_values(b"".join(pieces)) if priced else None
        if self.batch_pays(len(pieces), sum(map(len, pieces)), values):
            merge = _batch.merge_lengths if lengths_only else _batch.merge_ids
            return merge(pieces, self.table_for(values))
        return [len(ids) if lengths_only else ids for ids in map(self._piece_ids, pieces)]

    def batch_pays(
        self, pieces: int, size: int, values: bytes | None = None, *, always: bool = False
    ) -> bool:
        """Whether merging `pieces` new chunks of `size` bytes together beats the Python loop:
        numpy is there, they are many, and their pair table is built or worth building.
        `values`: the chunks' byte values, when known; their table may be a narrow one
        (`table_for`). `always`: price a narrow table whatever the values (a long chunk)."""
        if pieces < _batch.BATCH_MIN_CHUNKS or not _batch.available():
            return False
        if self._pairs is None:
            tokens = self._table_tokens(values, always=always)
            if size < _batch.TABLE_BYTES_PER_RANK * tokens:
                return False
            if tokens == len(self.mergeable_ranks) and not _batch.fits(self.mergeable_ranks):
                return False
        return _batch.numpy_or_none() is not None

    def table_for(self, values: bytes | None = None) -> _batch.PairTable:
        """The pair table `batch_pays` priced for chunks of these byte values: the narrow table
        of the tokens made of them alone (`_batch.ranks_within` argues why it is exact), kept
        for the next chunks of the same values; else the whole vocabulary's (built once)."""
        if (
            self._pairs is not None
            or values is None
            or self._table_tokens(values) == len(self.mergeable_ranks)
        ):
            return self.pair_table()
        if self._narrow is None or self._narrow[0] != values:
            self._narrow = (values, _batch.PairTable(_batch.ranks_within(self.mergeable_ranks, values)))
        return self._narrow[1]

    def _table_tokens(self, values: bytes | None, *, always: bool = False) -> int:
        """Tokens in the table for chunks of these byte values: the narrow table's when it has at
        most 1/NARROW_SHARE of the vocabulary, else the whole vocabulary. Text with more than
        NARROW_MAX_LETTERS ASCII letters is not narrow (most tokens are Latin letters) and is
        not even checked, unless `always`: finding the tokens takes up to 0.07 s."""
        full = len(self.mergeable_ranks)
        if values is None or self._pairs is not None:
            return full
        size = self._narrow_sizes.get(values)
        if size is None:
            if not always and _batch.ascii_letters(values) > _batch.NARROW_MAX_LETTERS:
                return full
            narrow = _batch.ranks_within(self.mergeable_ranks, values)
            size = len(narrow) if _batch.fits(narrow) else full
            if len(self._narrow_sizes) >= NARROW_SIZES_KEPT:
                self._narrow_sizes.clear()
            self._narrow_sizes[values] = size
        return size if size * _batch.NARROW_SHARE <= full else full

    def pair_table(self) -> _batch.PairTable:
        """The batch merge's table of token pairs, built once (needs numpy)."""
        if self._pairs is None:
            self._pairs = _batch.PairTable(self.mergeable_ranks)
        return self._pairs

    def _piece_ids(self, piece: bytes) -> tuple[int, ...]:
        """One chunk's ids from its bytes (what `_encode_new_chunk` gives for its text)."""
        if self.chunk_lookup:
            return self._encode_piece(piece)
        return tuple(bpe_merge(piece, self.mergeable_ranks))

    def _encode_new_chunk(self, chunk: str) -> tuple[int, ...]:
        return self._encode_piece(chunk.encode("utf-8"))

    def _encode_piece(self, piece: bytes) -> tuple[int, ...]:
        return encode_piece(piece, self.mergeable_ranks, self._max_token_length(), self._long_help)

    def _find_cuts(self, piece: bytes) -> list[int] | None:
        """A long chunk's proved-safe cuts found with numpy, or None when that would not pay."""
        table = self._long_chunk_table(piece, len(piece) // MIN_SEGMENT)
        if table is None:
            return None
        return safe_cuts(piece, self.mergeable_ranks, self._max_token_length(), table)

    def _merge_segments(self, segments: list[bytes]) -> tuple[list[int], list[int]] | None:
        """A long chunk's short segments merged together: (ids per segment, all ids in order),
        or None when that would not pay."""
        table = self._long_chunk_table(b"".join(segments), len(segments))
        if table is None:
            return None
        return _batch.merge_flat(segments, table)

    def _long_chunk_table(self, piece: bytes, pieces: int) -> _batch.PairTable | None:
        """The pair table to cut or merge one long chunk (as `pieces` segments) with, None when
        numpy would not pay. Its narrow table is always priced: a chunk without spaces is
        mostly of one script (a megabyte of CJK, or of lowercase letters)."""
        values = _batch.byte_values(piece) if self._pairs is None else None
        if not self.batch_pays(pieces, len(piece), values, always=True):
            return None
        return self.table_for(values)

    def _merge_new_chunk(self, chunk: str) -> tuple[int, ...]:
        """chunk_lookup=False: the merge loop alone, even for a chunk that is itself a token."""
        return tuple(bpe_merge(chunk.encode("utf-8"), self.mergeable_ranks))

    def bpe_merge(self, piece: bytes) -> list[int]:
        """The merge loop alone on raw bytes (UTF-8 or not), without the whole-piece lookup.

        What encoding gives a chunk whose bytes are not themselves a token; for a piece that
        *is* a token it says whether the merges alone reach it (the audit's "unreachable").
        """
        return bpe_merge(piece, self.mergeable_ranks)

    def _max_token_length(self) -> int:
        if self._longest_token is None:
            self._longest_token = max(map(len, self.mergeable_ranks))
        return self._longest_token

    # ----- decoding ---------------------------------------------------------------------

    def decode_single_token_bytes(self, token_id: int) -> bytes:
        token_id = token_id_of(token_id)
        token = self._decoder.get(token_id)
        if token is None:
            token = self._special_decoder.get(token_id)
            if token is None:
                raise ValueError(f"unknown token id {token_id}: no token has it (ids: 0..{self.n_vocab - 1})")
        return token

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        """Each token's bytes, for showing tokens that are not valid UTF-8 on their own.

        Ids that are all ints of the vocabulary (no special token) are looked up at C speed,
        one `map` (4-5x faster on long lists); anything else goes id by id through
        decode_single_token_bytes, which refuses non-ints (True is not id 1) and unknown ids."""
        if type(ids) is not list:  # a numpy array's tolist() gives plain ints (or its bools, floats)
            ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        if set(map(type, ids)) <= {int}:
            try:
                return list(map(self._decoder.__getitem__, ids))
            except KeyError:
                pass  # a special token or an unknown id: the checked path says which
        return [self.decode_single_token_bytes(i) for i in ids]

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return b"".join(self.decode_tokens_bytes(ids))

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # ----- files ------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """STEM.json's object (saved.py)."""
        return saved.tokenizer_json(self)

    def save(self, stem: str | os.PathLike) -> None:
        """Write STEM.tiktoken (tiktoken's rank format) and STEM.json (everything else)."""
        tiktoken_path, json_path = formats.save_paths(stem)
        formats.write_saved(tiktoken_path, self.mergeable_ranks, json_path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike, pattern: str = DEFAULT_PATTERN) -> Tokenizer:
        """Load any tokenizer file (readers.py): STEM, STEM.tiktoken or STEM.json (a bare .tiktoken
        uses `pattern`), a Hugging Face tokenizer.json or a minbpe .model, every field checked."""
        return cls.from_parts(read_file(path, pattern=pattern))

    @classmethod
    def from_json(
        cls, meta: dict[str, Any], ranks: dict[bytes, int] | None = None, source: str = "<json>"
    ) -> Tokenizer:
        """Rebuild from STEM.json (+ the .tiktoken ranks), checking that the two agree."""
        return cls.from_parts(saved_json_parts(meta, ranks, source))

    @classmethod
    def from_parts(cls, parts: TokenizerParts) -> Tokenizer:
        """Build what a file reader returned (readers.py); an error names the file it is about."""
        return saved.from_parts(cls, parts)


class _ChunkCache(dict):
    """chunk -> ids; a miss encodes the chunk (dict calls __missing__) and remembers it.

    Bounded: cleared when it holds CACHE_SIZE chunks, so memory stays flat on huge inputs.
    """

    def __init__(self, encode: Callable[[str], tuple[int, ...]], initial: dict | None = None) -> None:
        super().__init__(initial or {})
        self._encode = encode

    def __missing__(self, chunk: str) -> tuple[int, ...]:
        if len(self) >= CACHE_SIZE:
            self.clear()
        ids = self[chunk] = self._encode(chunk)
        return ids
