"""Incremental encoding: after an edit, split and encode only the chunks around it.

A keystroke in 5 MB of text should not split and encode 5 MB again. `IncrementalEncoder` keeps
the previous text's chunks (their end offsets and cumulative token counts) and its ids; given
the new text it finds the edit (common prefix and suffix), re-splits a window around it, and
reuses every other chunk's ids (`edit(start, removed, inserted)` is told where the edit is, for
a caller that keeps only the edits, not two copies of a long text). The result is always exactly `tok.encode(text,
allowed_special="all")`; where the argument below does not hold it encodes the whole text.

Why the window is exact. `findall` is a left-to-right scan: a match attempt at position x gives a
chunk [x, y) and the scan resumes at y. The chunk depends on the characters the attempt
examined, and for the library's named split patterns (gpt2/r50k/p50k, cl100k, o200k) we bound
them: an attempt examines no further than max(y, R(x)) + LOOKAHEAD, where R(x) is the end of
the whitespace run starting at x (x itself if text[x] is not whitespace). Beyond the chunk's end
the patterns look at most a contraction's three characters ahead (o200k's `(?i:'s|'ll|...)?`),
one character to end a greedy run, or one past a lookahead (`\\s+(?!\\S)`). Whitespace is the
exception: `\\s*[\\r\\n]+` and `\\s+(?!\\S)` read a whole whitespace run and may then give back
all of it but a prefix: in "\\n" + 1000 spaces + "x", the chunk "\\n" was decided by the "x",
1001 characters later (make it a "\\n" and the chunk becomes the whole run). So:

- Left edge. The characters before the edit start s are the same in both texts. Old chunks
  whose attempts examined only characters before s are unchanged, and so is the scan up to
  them. We step back LOOKAHEAD characters from s, then to the start of the whitespace run there
  (if any), and start re-splitting at the start of the old chunk holding that point: every
  chunk before it ends at least LOOKAHEAD before s and starts outside any whitespace run
  reaching s, so its attempt ended before s.
- Right edge. We split the new text in growing slices from there. A chunk from a slice is
  the full scan's chunk when its attempt did not reach the slice end (same bound); the rest of
  the slice is split again in the next, larger slice. Once the scan stands at a position p at
  or after the edit's end whose shifted position p - delta is an old chunk boundary, the two
  scans are in the same state in front of the same characters (the patterns have no
  lookbehind, never match "", and `$` sees the same end), so every old chunk from there on is
  what a full split would give, shifted by delta.

Special tokens cut the text into segments before the split, so the window is only used while
the text holds none (checked around the edit; the old text was checked when it was encoded);
so do a HF file's non-special added tokens, in every mode (they are matched in any text).
`special` is the page's choice, as the CLI's `encode --special`: "allow" (the default) encodes
special-token text as its id, "text" as ordinary text (`disallowed_special=()`: no segments, the
window always holds), "raise" as "allow" but refuses a text holding one (ValueError naming it).
Text with lone surrogates, custom patterns (no bound holds for an arbitrary regex: `a(?=.*z)`
reads to the end) and "none" (one chunk) are encoded whole.

The chunk index (each chunk's length and token count) is cut into blocks of BLOCK chunks with
their sums: finding the chunk at an offset walks the block sums, then one block; an edit
rewrites the block or two it touches. The text itself is kept the same way, as pieces of about
PIECE characters (`_Text`): an edit rebuilds the piece or two it touches, where a flat `str`
would be copied whole (5 MB: 10-20 MB of copying, most of a keystroke's time in Pyodide). The
scan above only reads slices of the text, which the pieces give without joining the rest. A
keystroke costs the window plus O(blocks + pieces + BLOCK + PIECE), not the length of the text.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate, chain, filterfalse

from .._batch import BATCH_MIN_CHUNKS
from ..added_tokens import AddedMatching
from ..core import CACHE_SIZE, Tokenizer
from ..patterns import NO_SPLIT, is_named
from ..preparation import Preparation

SPECIAL_MODES = ("allow", "text", "raise")  # what special-token text becomes (cli encode --special)
LOOKAHEAD = 4  # characters an attempt of a named pattern examines past max(chunk end, space run)
FIRST_SLICE = 512  # characters split past the edit's end first; each next slice is twice as long
BLOCK = 2048  # chunks per block of the chunk index: an edit rewrites one or two blocks
COMPARE_BLOCK = 1 << 14  # characters compared at once when looking for the common prefix/suffix
PIECE = 1 << 14  # characters per piece of a kept text: an edit copies one or two pieces (< 4 * PIECE)


@dataclass(frozen=True)
class Patch:
    """ids[start : start + removed] of the previous result become `ids`; `text` is their text."""

    start: int
    removed: int
    ids: array  # int32
    text: str
    full: bool  # True when the whole text was encoded again (start == 0, removed == old count)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i : i + COMPARE_BLOCK] == b[i : i + COMPARE_BLOCK]:
        i += COMPARE_BLOCK
    hi = min(i + COMPARE_BLOCK, n)
    while i < hi and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most `limit` (so it never overlaps the common prefix)."""
    i = 0
    la, lb = len(a), len(b)
    while (
        i + COMPARE_BLOCK <= limit
        and a[la - i - COMPARE_BLOCK : la - i] == b[lb - i - COMPARE_BLOCK : lb - i]
    ):
        i += COMPARE_BLOCK
    while i < limit and a[la - 1 - i] == b[lb - 1 - i]:
        i += 1
    return i


def _space_run_start(text: str | _Text, i: int) -> int:
    """The start of the whitespace run ending at i (i itself when text[i - 1] is not space)."""
    while i > 0:
        lo = max(0, i - COMPARE_BLOCK)
        kept = len(text[lo:i].rstrip())
        if kept:
            return lo + kept
        i = lo
    return 0


def _space_run_end(text: str | _Text, i: int, limit: int) -> int:
    """The end of the whitespace run starting at i, or `limit` if it reaches that far."""
    while i < limit:
        hi = min(limit, i + COMPARE_BLOCK)
        piece = text[i:hi]
        stripped = len(piece) - len(piece.lstrip())
        if stripped < len(piece):
            return i + stripped
        i = hi
    return limit


class _Text:
    """A text kept as pieces of at most 2 * PIECE characters, for cheap edits and slices.

    `text[a:b]` joins only the pieces it spans; `replace` rebuilds only the pieces the edit
    touches (cut again into PIECE characters when the result is longer than 2 * PIECE);
    `str(text)` joins them all (kept until the next edit). No piece is empty.
    """

    __slots__ = ("_pieces", "_ends", "_flat")

    def __init__(self, text: str = "") -> None:
        self._pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
        self._ends = list(accumulate(map(len, self._pieces)))
        self._flat: str | None = text

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __str__(self) -> str:
        if self._flat is None:
            self._flat = "".join(self._pieces)
        return self._flat

    def _start(self, i: int) -> int:
        return self._ends[i] - len(self._pieces[i])

    def __getitem__(self, key: slice) -> str:
        a, b, step = key.indices(len(self))
        if step != 1:
            raise ValueError("a _Text slices with step 1 only")
        if self._flat is not None:
            return self._flat[a:b]
        if a >= b:
            return ""
        i = bisect_right(self._ends, a)  # the piece holding character a
        j = bisect_left(self._ends, b)  # the piece holding character b - 1
        a -= self._start(i)
        if i == j:
            return self._pieces[i][a : b - self._start(j)]
        return "".join([self._pieces[i][a:], *self._pieces[i + 1 : j], self._pieces[j][: b - self._start(j)]])

    def replace(self, start: int, removed: int, inserted: str) -> None:
        """Characters [start, start + removed) become `inserted` (the range lies in the text)."""
        pieces = self._pieces
        if not pieces:
            i, j, middle = 0, -1, inserted
        else:
            i = min(bisect_right(self._ends, start), len(pieces) - 1)  # the piece holding start
            j = max(i, min(bisect_left(self._ends, start + removed), len(pieces) - 1))
            head = pieces[i][: start - self._start(i)]
            middle = head + inserted + pieces[j][start + removed - self._start(j) :]
        size = PIECE if len(middle) > 2 * PIECE else max(len(middle), 1)
        pieces[i : j + 1] = [middle[k : k + size] for k in range(0, len(middle), size)]
        self._ends = list(accumulate(map(len, pieces)))
        self._flat = None


def _merge_new(tok: Tokenizer, chunks: list[str], cache: dict[str, tuple[int, ...]]) -> None:
    """Put the chunks that `cache` lacks into it, merged together (`tok.batch_merge`: the
    worker's JavaScript loop) rather than one by one on lookup. Exact: `_merge_pieces` gives
    each chunk the ids its own encoding would. Finding them is one C-speed pass of lookups
    (most chunks of a large text are hits; no set of them all, no flat list of ids); when they
    would overflow the cache, the lookups merge them as before."""
    new = list(dict.fromkeys(filterfalse(cache.__contains__, chunks)))
    if len(new) >= BATCH_MIN_CHUNKS and len(cache) + len(new) <= CACHE_SIZE:
        cache.update(zip(new, tok._merge_pieces(list(map(str.encode, new))), strict=True))


def _only_matched(tok: Tokenizer) -> Preparation:
    """The preparation of a tokenizer.json whose only part is HF's non-special added tokens."""
    return Preparation(added=AddedMatching(not_special=tok.always_matched))


class IncrementalEncoder:
    """One text's encoding, kept up to date edit by edit: `update(text)` returns a Patch."""

    def __init__(self, tok: Tokenizer, *, special: str = "allow") -> None:
        if special not in SPECIAL_MODES:
            raise ValueError(f"special must be one of {', '.join(SPECIAL_MODES)}, got {special!r}")
        self.tok = tok
        self.special = special
        # A preparation (HF normalizer, prefix space) makes chunks of other text: encode whole.
        # HF's non-special added tokens alone do not: they cut the text as special tokens do.
        plain = tok.preparation is None or tok.preparation == _only_matched(tok)
        self.windowed = bool(plain and tok.pattern != NO_SPLIT and is_named(tok.pattern))
        as_text = special == "text" or not tok.special_tokens
        matched = tok.always_matched if as_text else tok.special_tokens.keys()  # what cuts the text
        self._special = tok.special_regex(matched) if matched else None
        self._control = tok.control_tokens  # what special="raise" refuses
        self._special_ids = frozenset() if as_text else frozenset(map(tok.special_tokens.get, self._control))
        self._allowed = (
            {"allowed_special": set(), "disallowed_special": ()} if as_text else {"allowed_special": "all"}
        )
        self._special_len = max(map(len, matched), default=0)
        self._text = _Text()
        self.ids = array("i")  # arrays, not lists: 4-8 bytes an entry instead of 36
        self._valid = False  # the blocks describe self.text (else the next update is whole)
        self._lens: list[array] = []  # per block: the chunks' lengths in characters
        self._counts: list[array] = []  # per block: the chunks' token counts
        self._chars: list[int] = []  # per block: its characters
        self._toks: list[int] = []  # per block: its tokens

    @property
    def text(self) -> str:
        """The text encoded last (joined from its pieces: O(length) after an edit)."""
        return str(self._text)

    @property
    def length(self) -> int:
        """The text's length in characters, without joining it."""
        return len(self._text)

    # ----- the blocks -----------------------------------------------------------------------

    def _set_blocks(self, lo: int, hi: int, lens: array, counts: array) -> None:
        """Blocks lo..hi-1 become these chunks, cut into blocks of at most BLOCK chunks."""
        cuts = range(0, max(len(lens), 1), BLOCK)
        self._lens[lo:hi] = [lens[c : c + BLOCK] for c in cuts]
        self._counts[lo:hi] = [counts[c : c + BLOCK] for c in cuts]
        self._chars[lo:hi] = [sum(x) for x in self._lens[lo : lo + len(cuts)]]
        self._toks[lo:hi] = [sum(x) for x in self._counts[lo : lo + len(cuts)]]

    def _locate(self, pos: int) -> tuple[int, int, int, int]:
        """(block, index in it, start offset, first token) of the chunk holding character pos."""
        chars = toks = 0
        last = len(self._lens) - 1
        for b, size in enumerate(self._chars):
            if chars + size > pos or b == last:
                lens = self._lens[b]
                i = min(bisect_right(list(accumulate(lens)), pos - chars), len(lens) - 1)
                return b, i, chars + sum(lens[:i]), toks + sum(self._counts[b][:i])
            chars += size
            toks += self._toks[b]
        raise AssertionError("unreachable: there is always a block")

    def _ends_from(self, b: int, i: int, start: int) -> Iterator[int]:
        """End offsets of the chunks from chunk i of block b (which starts at `start`) on."""
        pos = start
        for lens in self._lens[b:]:
            for size in lens[i:]:
                pos += size
                yield pos
            i = 0

    # ----- encoding -------------------------------------------------------------------------

    def _chunk_ids(self, chunks: list[str]) -> list[tuple[int, ...]]:
        tok = self.tok
        tok._encode_chunks([])  # makes sure tok._cache is the encoding cache
        cache = tok._cache
        if tok.batch_merge is not None and len(chunks) >= BATCH_MIN_CHUNKS:
            _merge_new(tok, chunks, cache)
        return list(map(cache.__getitem__, chunks))

    def _whole(self, text: str) -> Patch:
        removed = len(self.ids)
        self._valid = False
        self._text = _Text(text)
        if not self.windowed or (self._special is not None and self._special.search(text)):
            self.ids = array("i", self.tok.encode(text, **self._allowed))
            return Patch(0, removed, self.ids, text, True)
        chunks = self.tok.split(text)
        try:
            per_chunk = self._chunk_ids(chunks)
        except UnicodeEncodeError:  # lone surrogates: encode() replaces them over the whole text
            self.ids = array("i", self.tok.encode(text, **self._allowed))
            return Patch(0, removed, self.ids, text, True)
        self.ids = array("i", chain.from_iterable(per_chunk))
        self._lens, self._counts, self._chars, self._toks = [], [], [], []
        self._set_blocks(0, 0, array("i", map(len, chunks)), array("i", map(len, per_chunk)))
        self._valid = True
        return Patch(0, removed, self.ids, text, True)

    def update(self, text: str) -> Patch:
        """Encode `text`, reusing what is unchanged since the previous call."""
        old = self.text
        if not self._valid or not old or not text:
            return self._checked(self._whole(text))
        s = _common_prefix(old, text)
        suffix = _common_suffix(old, text, min(len(old), len(text)) - s)
        self._text = _Text(text)
        return self._checked(self._patched(len(old), s, len(old) - suffix, len(text) - suffix))

    def _checked(self, patch: Patch) -> Patch:
        """With special="raise", a ValueError when the text holds a special token (the CLI's
        message). Only the patch's new ids need a look: the text before it was checked, or its
        encoding raised and was dropped (the caller starts afresh after an error)."""
        if self.special == "raise" and self._special_ids and not self._special_ids.isdisjoint(patch.ids):
            self._valid = False
            match = self.tok.special_regex(self._control).search(self.text)
            at = f" at character {match.start() + 1}" if match else ""
            raise ValueError(
                f"the text holds the special token {match.group() if match else '?'!r}{at}: choose special "
                "tokens 'allow' to encode it as its id, or 'text' to encode it as ordinary text"
            )
        return patch

    def edit(self, start: int, removed: int, inserted: str) -> Patch:
        """Replace `removed` characters at `start` with `inserted` and encode the result.

        The same as `update(text[:start] + inserted + text[start + removed:])` without comparing
        the texts: the caller says where they differ. The range need not be the smallest one
        (the argument in the module docstring only uses that the texts agree before `start` and
        after the range), so a caller may widen it freely.
        """
        text = self._text
        old_len = len(text)
        if not 0 <= start <= start + removed <= old_len:
            raise ValueError(f"edit {start}+{removed} outside a text of {old_len} characters")
        text.replace(start, removed, inserted)
        if not self._valid or not old_len or not len(text):
            return self._checked(self._whole(str(text)))
        return self._checked(self._patched(old_len, start, start + removed, start + len(inserted)))

    def _patched(self, old_len: int, s: int, e_old: int, e_new: int) -> Patch:
        """_patch, with the blocks marked invalid until they describe the new text (an error
        half-way makes the next update whole)."""
        self._valid = False
        patch = self._patch(self._text, old_len, s, e_old, e_new)
        if not patch.full:
            self._valid = True  # else _whole decided
        return patch

    def _patch(self, text: _Text, old_len: int, s: int, e_old: int, e_new: int) -> Patch:
        """self._text is `text` now, which agrees with the old text (of old_len characters)
        before s and from e_old (old) / e_new (new) on; the blocks still describe the old."""
        delta = len(text) - old_len
        if s == e_old and s == e_new:
            return Patch(len(self.ids), 0, array("i"), "", False)
        if self._special is not None:
            lo, hi = max(0, s - self._special_len), min(len(text), e_new + self._special_len)
            if self._special.search(text[lo:hi]):  # a plain alternation of literals: as search(text, lo, hi)
                return self._whole(str(text))
        # Left edge: back off LOOKAHEAD characters, then over the whitespace run there (the
        # characters before s are the old text's).
        bj, ij, a, t_start = self._locate(_space_run_start(text, max(0, s - LOOKAHEAD)))
        try:
            chunks, resync = self._resplit(text, a, e_new, delta, self._ends_from(bj, ij, a))
            per_chunk = self._chunk_ids(chunks)
        except UnicodeEncodeError:
            return self._whole(str(text))
        # The old chunks from resync - delta on are kept (none if that is the old text's end).
        if resync - delta < old_len:
            bk, ik, _, t_end = self._locate(resync - delta)
        else:
            bk, ik, t_end = len(self._lens) - 1, len(self._lens[-1]), len(self.ids)
        lens = self._lens[bj][:ij] + array("i", map(len, chunks)) + self._lens[bk][ik:]
        counts = self._counts[bj][:ij] + array("i", map(len, per_chunk)) + self._counts[bk][ik:]
        self._set_blocks(bj, bk + 1, lens, counts)
        new_ids = array("i", chain.from_iterable(per_chunk))
        self.ids[t_start:t_end] = new_ids
        return Patch(t_start, t_end - t_start, new_ids, "".join(chunks), False)

    def _resplit(
        self, text: _Text, a: int, e_new: int, delta: int, old_ends: Iterator[int]
    ) -> tuple[list[str], int]:
        """The new text's chunks from a up to the first position where the scans agree again."""
        tok, out = self.tok, []
        old_end = next(old_ends, None)  # the old chunk end compared with the scan's shifted position
        pos, size = a, FIRST_SLICE
        while True:
            b = min(len(text), max(pos, e_new) + size)
            at_end = b == len(text)
            x = pos
            for chunk in tok.split(text[pos:b]):
                y = x + len(chunk)
                if not at_end:
                    reach = max(y, _space_run_end(text, x, b) if chunk[0].isspace() else x)
                    if chunk[-1].isspace():
                        reach = max(reach, _space_run_end(text, y, b))
                    if reach + LOOKAHEAD > b:
                        break
                out.append(chunk)
                x = y
                if y >= e_new:
                    while old_end is not None and old_end < y - delta:
                        old_end = next(old_ends, None)
                    if old_end is None or old_end == y - delta:
                        return out, y
            if at_end:
                return out, len(text)
            pos, size = x, size * 2
