"""Incremental encoding: after an edit, split and encode only the chunks around it.

A keystroke in 5 MB of text should not split and encode 5 MB again. `IncrementalEncoder` keeps
the previous text's chunks (their end offsets and cumulative token counts) and its ids; given
the new text it finds the edit (common prefix and suffix), re-splits a window around it, and
reuses every other chunk's ids. The result is always exactly `tok.encode(text,
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
the text holds none (checked around the edit; the old text was checked when it was encoded).
Text with lone surrogates, custom patterns (no bound holds for an arbitrary regex: `a(?=.*z)`
reads to the end) and "none" (one chunk) are encoded whole.

Chunk ends and cumulative token counts live in lists with a gap, as in a gap buffer: entries
before the gap are absolute, entries after it are stored relative to the text's end (and to
the total token count). An edit replaces entries at the gap, and everything after it stays
valid without being touched: a keystroke costs the window, plus moving the gap from the
previous edit, not the length of the text.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, chain

from ..core import Tokenizer
from ..patterns import NO_SPLIT, is_named

LOOKAHEAD = 4  # characters an attempt of a named pattern examines past max(chunk end, space run)
FIRST_SLICE = 512  # characters split past the edit's end first; each next slice is twice as long
COMPARE_BLOCK = 1 << 14  # characters compared at once when looking for the common prefix/suffix


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


def _space_run_start(text: str, i: int) -> int:
    """The start of the whitespace run ending at i (i itself when text[i - 1] is not space)."""
    while i > 0:
        lo = max(0, i - COMPARE_BLOCK)
        kept = len(text[lo:i].rstrip())
        if kept:
            return lo + kept
        i = lo
    return 0


def _space_run_end(text: str, i: int, limit: int) -> int:
    """The end of the whitespace run starting at i, or `limit` if it reaches that far."""
    while i < limit:
        hi = min(limit, i + COMPARE_BLOCK)
        piece = text[i:hi]
        stripped = len(piece) - len(piece.lstrip())
        if stripped < len(piece):
            return i + stripped
        i = hi
    return limit


class IncrementalEncoder:
    """One text's encoding, kept up to date edit by edit: `update(text)` returns a Patch."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok
        self.windowed = bool(tok.pattern != NO_SPLIT and is_named(tok.pattern))
        self._special = tok._special_regex(tok.special_tokens) if tok.special_tokens else None
        self._special_len = max(map(len, tok.special_tokens), default=0)
        self.text = ""
        self.ids = array("i")  # arrays, not lists: 4-8 bytes an entry instead of 36
        self._valid = False  # ends/counts describe self.text (else the next update is whole)
        self._ends = array("q")  # chunk end offsets, with the gap (module docstring)
        self._counts = array("q")  # tokens up to each chunk's end, with the gap
        self._gap = 0

    # ----- the gap lists --------------------------------------------------------------------

    def _end(self, i: int) -> int:
        return self._ends[i] if i < self._gap else self._ends[i] + len(self.text)

    def _count(self, i: int) -> int:
        return self._counts[i] if i < self._gap else self._counts[i] + len(self.ids)

    def _move_gap(self, j: int) -> None:
        g, n, t = self._gap, len(self.text), len(self.ids)
        if j < g:
            self._ends[j:g] = array("q", [e - n for e in self._ends[j:g]])
            self._counts[j:g] = array("q", [c - t for c in self._counts[j:g]])
        elif j > g:
            self._ends[g:j] = array("q", [e + n for e in self._ends[g:j]])
            self._counts[g:j] = array("q", [c + t for c in self._counts[g:j]])
        self._gap = j

    def _chunk_at(self, pos: int) -> int:
        """Index of the first chunk ending after `pos` (the chunk holding character pos)."""
        g = self._gap
        if g and pos < self._ends[g - 1]:
            return bisect_right(self._ends, pos, 0, g)
        return bisect_right(self._ends, pos - len(self.text), g, len(self._ends))

    # ----- encoding -------------------------------------------------------------------------

    def _chunk_ids(self, chunks: list[str]) -> list[tuple[int, ...]]:
        self.tok._encode_chunks([])  # makes sure tok._cache is the encoding cache
        return list(map(self.tok._cache.__getitem__, chunks))

    def _whole(self, text: str) -> Patch:
        removed = len(self.ids)
        self._valid = False
        self.text = text
        if not self.windowed or (self._special is not None and self._special.search(text)):
            self.ids = array("i", self.tok.encode(text, allowed_special="all"))
            return Patch(0, removed, self.ids, text, True)
        chunks = self.tok.split(text)
        try:
            per_chunk = self._chunk_ids(chunks)
        except UnicodeEncodeError:  # lone surrogates: encode() replaces them over the whole text
            self.ids = array("i", self.tok.encode(text, allowed_special="all"))
            return Patch(0, removed, self.ids, text, True)
        self.ids = array("i", chain.from_iterable(per_chunk))
        self._ends = array("q", accumulate(map(len, chunks)))
        self._counts = array("q", accumulate(map(len, per_chunk)))
        self._gap = len(self._ends)
        self._valid = True
        return Patch(0, removed, self.ids, text, True)

    def update(self, text: str) -> Patch:
        """Encode `text`, reusing what is unchanged since the previous call."""
        old = self.text
        if not self._valid or not old or not text:
            return self._whole(text)
        s = _common_prefix(old, text)
        suffix = _common_suffix(old, text, min(len(old), len(text)) - s)
        delta = len(text) - len(old)
        e_old, e_new = len(old) - suffix, len(text) - suffix
        if s == e_old and s == e_new:
            return Patch(len(self.ids), 0, array("i"), "", False)
        if self._special is not None:
            lo, hi = max(0, s - self._special_len), e_new + self._special_len
            if self._special.search(text, lo, min(len(text), hi)):
                return self._whole(text)
        # Left edge: back off LOOKAHEAD characters, then over the whitespace run there.
        j = self._chunk_at(_space_run_start(old, max(0, s - LOOKAHEAD)))
        j = min(j, len(self._ends) - 1)
        a = self._end(j - 1) if j else 0
        try:
            chunks, resync = self._resplit(text, a, e_new, delta, j)
            per_chunk = self._chunk_ids(chunks)
        except UnicodeEncodeError:
            return self._whole(text)
        k = self._chunk_at(resync - delta - 1) + 1 if resync - delta > 0 else 0
        return self._splice(text, j, k, a, chunks, per_chunk)

    def _resplit(self, text: str, a: int, e_new: int, delta: int, j: int) -> tuple[list[str], int]:
        """The new text's chunks from a up to the first position where the scans agree again."""
        tok, out = self.tok, []
        k = j  # old chunk whose end is compared with the scan's shifted position
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
                    while k < len(self._ends) and self._end(k) < y - delta:
                        k += 1
                    if k == len(self._ends) or self._end(k) == y - delta:
                        return out, y
            if at_end:
                return out, len(text)
            pos, size = x, size * 2

    def _splice(self, text: str, j: int, k: int, a: int, chunks: list[str], per_chunk: list) -> Patch:
        t_start = self._count(j - 1) if j else 0
        t_end = self._count(k - 1) if k else 0
        new_ids = array("i", chain.from_iterable(per_chunk))
        self._move_gap(j)  # entries from j on are now relative to the old text's end
        self._ends[j:k] = array("q", [a + e for e in accumulate(map(len, chunks))])
        self._counts[j:k] = array("q", [t_start + c for c in accumulate(map(len, per_chunk))])
        self._gap = j + len(chunks)  # entries after the new chunks stay relative: still right
        self.ids[t_start:t_end] = new_ids
        self.text = text
        return Patch(t_start, t_end - t_start, new_ids, "".join(chunks), False)
