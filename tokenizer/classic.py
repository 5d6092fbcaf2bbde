"""Classic BPE (Sennrich et al., 2016), merge-for-merge identical to `subword-nmt`.

Words are the space-separated strings of each line; a word is its characters with `</w>`
glued to the last one (`low` -> `l o w</w>`, subword-nmt's codes version 0.2). Learning
repeatedly merges the most frequent adjacent symbol pair, counted over word frequencies;
ties go to the lexically largest pair (subword-nmt takes `max((count, pair))`). It stops
after `num_merges` merges or when the best pair occurs fewer than `min_frequency` times.

Where subword-nmt rescans a pruned dict for its maximum, this uses a max-heap with lazy
deletion (an entry is trusted only if it still holds the pair's current count) and a
reverse index pair -> words, so each merge touches only the words that contain the pair.

Lines are split as the `subword-nmt` command reads its input, files and stdin alike (a
`codecs` reader, i.e. `str.splitlines`, which also breaks at \\x0b, \\x0c, \\x1c-\\x1e, \\x85,
\\u2028, \\u2029); a line is stripped of `\\r`, `\\n` and spaces at both ends and split at
single spaces only, so tabs and other whitespace stay inside words. (Only the legacy `python
-m subword_nmt.apply_bpe` reads stdin otherwise, with universal newlines; the command is what
subword-nmt documents and what `classic apply` is promised to equal.)

Where subword-nmt departs from its own algorithm, it is followed: its merge step is a
regex over the space-joined word whose `(?<!\\S)`/`(?!\\S)` guards also fire next to a tab
or other non-space whitespace *inside* a symbol (C or JavaScript source indented with
tabs), its statistics update miscounts when two merge paths make the same symbol string,
and a `--dict-input` word with count 0 changes its pruning. The heap learner notices the
first two as they happen (and the third up front) and the run is then redone by
_subword_nmt.py, a step-for-step port of subword-nmt's loop. Known differences left: it
crashes on a corpus without any pair and on a codes file without merges (here: no merges).
"""

from __future__ import annotations

import heapq
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

from . import _subword_nmt
from ._apply_bpe import END_OF_WORD as END_OF_WORD  # the word-end marker: defined with the apply port
from ._apply_bpe import compile_glossaries, isolate_glossaries, reverse_merges, split_to_vocabulary
from ._apply_bpe import count_units as count_units  # subword-nmt get-vocab
from ._apply_bpe import format_vocabulary as format_vocabulary
from ._apply_bpe import parse_vocabulary as parse_vocabulary  # public here, with the codes readers
from ._apply_bpe import read_vocabulary as read_vocabulary
from .formats import atomic_write_text
from .streaming import not_utf8
from .validate import is_integer

CODES_HEADER = "#version: 0.2"
TIE_RULE = "lexically largest pair (subword-nmt)"

Pair = tuple[str, str]

# What subword-nmt's merge regex `(?<!\S)first second(?!\S)` takes for a word boundary
# besides the space that joins the symbols: str.isspace() characters, as `re` reads \s.
_INNER_WHITESPACE = re.compile(r"[^\S ]")


class _DepartsFromSubwordNmt(Exception):
    """Raised by _Learner.merge where subword-nmt's counts stop being the true ones."""


# ----- corpus -> word counts ---------------------------------------------------------------


def words_of_line(line: str) -> list[str]:
    """subword-nmt's word split: strip `\\r\\n ` at the ends, split at single spaces."""
    return [word for word in line.strip("\r\n ").split(" ") if word]


def count_words(corpus: str | Iterable[str]) -> Counter[str]:
    """Word frequencies of a text (split into lines as subword-nmt does) or of an iterable of lines."""
    if isinstance(corpus, (bytes, bytearray)) or not isinstance(corpus, Iterable):
        raise TypeError(
            f"corpus must be a str (the text), an iterable of str lines or a mapping word -> count, "
            f"not {type(corpus).__name__}" + ("; decode bytes first" if isinstance(corpus, bytes) else "")
        )
    lines = corpus.splitlines(keepends=True) if isinstance(corpus, str) else corpus
    counts: Counter[str] = Counter()
    for i, line in enumerate(lines):
        if not isinstance(line, str):  # words_of_line's .strip met an int (iterating bytes) or None
            raise TypeError(f"corpus line {i}: expected str, got {type(line).__name__}")
        counts.update(words_of_line(line))
    return counts


def parse_word_counts(text: str, source: str = "<string>") -> Counter[str]:
    """subword-nmt's `--dict-input` format: one `word count` line each, counts summed."""
    counts: Counter[str] = Counter()
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        parts = line.strip("\r\n ").split(" ")
        if len(parts) != 2 or not parts[0]:
            raise ValueError(f"{source}:{lineno}: expected 'word count', got {line.rstrip()!r}")
        try:
            count = int(parts[1])
        except ValueError:
            raise ValueError(f"{source}:{lineno}: count {parts[1]!r} is not an integer") from None
        if count < 0:
            raise ValueError(f"{source}:{lineno}: negative count {count}")
        counts[parts[0]] += count
    return counts


def word_symbols(word: str) -> tuple[str, ...]:
    """`low` -> ('l', 'o', 'w</w>'): characters, the end-of-word marker glued to the last."""
    return (*word[:-1], word[-1] + END_OF_WORD)


# ----- learning ----------------------------------------------------------------------------


def _descending(symbol: str) -> tuple[int, ...]:
    """A key that sorts strings in reverse order (the terminator 1 puts longer strings first)."""
    return (*(-ord(c) for c in symbol), 1)


def _merge_symbols(symbols: tuple[str, ...], left: str, right: str) -> tuple[str, ...]:
    """Replace occurrences of (left, right) left to right, non-overlapping (`a a a` -> `aa a`)."""
    merged = left + right
    out: list[str] = []
    i, n = 0, len(symbols)
    while i < n:
        if i < n - 1 and symbols[i] == left and symbols[i + 1] == right:
            out.append(merged)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def _regex_merge(symbols: tuple[str, ...], left: str, right: str) -> tuple[str, ...]:
    """subword-nmt's merge of one word (replace_pair), which _merge_symbols equals unless a
    symbol holds whitespace."""
    pattern = re.compile(r"(?<!\S)" + re.escape(left + " " + right) + r"(?!\S)")
    return tuple(pattern.sub((left + right).replace("\\", "\\\\"), " ".join(symbols)).split(" "))


class _Learner:
    """Pair counts over word frequencies, a lazy max-heap and a reverse index pair -> words."""

    def __init__(self, word_counts: Mapping[str, int]) -> None:
        self.words = [word_symbols(word) for word in word_counts]
        self.freqs = list(word_counts.values())
        # Words where subword-nmt's regex merge may misfire, and every symbol string made so
        # far (a merge that makes one again is counted twice by subword-nmt's update).
        self.spaced = {i for i, word in enumerate(word_counts) if _INNER_WHITESPACE.search(word)}
        self.made = {symbol for symbols in self.words for symbol in symbols}
        self.counts: dict[Pair, int] = defaultdict(int)
        self.where: dict[Pair, set[int]] = defaultdict(set)
        for index, (symbols, freq) in enumerate(zip(self.words, self.freqs, strict=True)):
            for pair in pairwise(symbols):
                self.counts[pair] += freq
                self.where[pair].add(index)
        self.counts = {pair: count for pair, count in self.counts.items() if count > 0}
        self.pairs_with_count = Counter(self.counts.values())
        self._keys: dict[str, tuple[int, ...]] = {}
        self.heap = [(-count, self._key(pair), pair) for pair, count in self.counts.items()]
        heapq.heapify(self.heap)

    def _key(self, pair: Pair) -> tuple[int, ...]:
        keys = self._keys
        left = keys.get(pair[0]) or keys.setdefault(pair[0], _descending(pair[0]))
        right = keys.get(pair[1]) or keys.setdefault(pair[1], _descending(pair[1]))
        return left + right

    def top(self, k: int) -> list[tuple[Pair, int]]:
        """The k best (pair, count), best first: highest count, then lexically largest pair.

        Heap entries hold a count at least the pair's current one (every increase pushes a
        new entry); an entry whose count has since fallen is re-pushed with the current one.
        """
        found: list[tuple[int, tuple[int, ...], Pair]] = []
        seen: set[Pair] = set()
        heap, counts = self.heap, self.counts
        while heap and len(found) < k:
            entry = heapq.heappop(heap)
            pair = entry[2]
            current = counts.get(pair, 0)
            if -entry[0] == current and pair not in seen:
                found.append(entry)
                seen.add(pair)
            elif -entry[0] > current > 0:
                heapq.heappush(heap, (-current, entry[1], pair))
        for entry in found:
            heapq.heappush(heap, entry)
        return [(entry[2], -entry[0]) for entry in found]

    def merge(self, pair: Pair) -> None:
        """Merge `pair` in every word that has it and update counts, index and heap.

        Raises _DepartsFromSubwordNmt where subword-nmt's counts would part from the true
        ones from this merge on; the state is then no longer used.
        """
        left, right = pair
        if left + right in self.made:
            raise _DepartsFromSubwordNmt(f"{left + right!r} is made a second way")
        self.made.add(left + right)
        delta: dict[Pair, int] = defaultdict(int)
        for index in self.where.pop(pair, ()):
            symbols = self.words[index]
            new_symbols = _merge_symbols(symbols, left, right)
            if len(new_symbols) == len(symbols):
                continue  # stale index entry: the pair left this word in an earlier merge
            if index in self.spaced and _regex_merge(symbols, left, right) != new_symbols:
                raise _DepartsFromSubwordNmt(f"its regex merges {left!r} {right!r} elsewhere in a word")
            freq = self.freqs[index]
            for old in pairwise(symbols):
                delta[old] -= freq
            for new in pairwise(new_symbols):
                delta[new] += freq
                self.where[new].add(index)
            self.words[index] = new_symbols
        for changed, change in delta.items():
            if change:
                self._set_count(changed, self.counts.get(changed, 0) + change)

    def _set_count(self, pair: Pair, count: int) -> None:
        old = self.counts.get(pair, 0)
        self.pairs_with_count[old] -= 1
        self.pairs_with_count[count] += 1
        if count > 0:
            self.counts[pair] = count
            if count > old:
                heapq.heappush(self.heap, (-count, self._key(pair), pair))
        else:
            self.counts.pop(pair, None)


def _word_counts(corpus: str | Iterable[str] | Mapping[str, int]) -> Mapping[str, int]:
    if isinstance(corpus, Mapping):
        bad = [word for word in corpus if not isinstance(word, str) or not word or " " in word]
        if bad:
            raise ValueError(f"word counts: {bad[0]!r} is not a word (non-empty, without spaces)")
        for word, count in corpus.items():
            if not is_integer(count) or count < 0:
                raise ValueError(f"word counts: {word!r} has count {count!r}; counts are integers >= 0")
        return corpus
    return count_words(corpus)


def merges_budget(word_counts: Mapping[str, int], num_merges: int, total_symbols: bool) -> int:
    """subword-nmt's `--total-symbols`: subtract the distinct word-internal and word-final symbols."""
    if not total_symbols:
        return num_merges
    internal = {char for word in word_counts for char in word[:-1]}
    final = {word[-1] + END_OF_WORD for word in word_counts}
    return num_merges - len(internal) - len(final)


def learn_steps(
    corpus: str | Iterable[str] | Mapping[str, int],
    num_merges: int,
    min_frequency: int = 2,
    *,
    total_symbols: bool = False,
    top: int = 10,
) -> Iterator[dict[str, Any]]:
    """Learn merge by merge, yielding a trace dict per merge (for the Learn view and tests).

    Each dict: `step` (0-based), `pair`, `count`, `tied_with` (other pairs with the same
    count among the `top` shown, which lost because they are lexically smaller), `n_tied`
    (how many pairs in all had that count, besides the winner), `top_pairs` (the `top`
    best (pair, count) before the merge, the winner first) and `tie_rule`.
    `corpus` is a text, an iterable of lines, or a mapping word -> count.
    """
    if not is_integer(num_merges) or num_merges < 0:
        raise ValueError(f"num_merges must be an integer >= 0, got {num_merges!r}")
    if not is_integer(min_frequency) or min_frequency < 1:
        raise ValueError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")
    word_counts = _word_counts(corpus)
    budget = merges_budget(word_counts, num_merges, total_symbols)
    done = 0
    if 0 not in word_counts.values():  # a word counted 0 changes subword-nmt's pruning
        try:
            for step in _heap_steps(_Learner(word_counts), budget, min_frequency, top):
                yield step
                done += 1
            return
        except _DepartsFromSubwordNmt:
            pass  # the merges so far are subword-nmt's; its own loop redoes them and goes on
    yield from _subword_nmt_steps(word_counts, budget, min_frequency, top, skip=done)


def _step(step: int, best: list[tuple[Pair, int]], n_tied: int, top: int) -> dict[str, Any]:
    pair, count = best[0]
    return {
        "step": step,
        "pair": pair,
        "count": count,
        "tied_with": [other for other, c in best[1:top] if c == count],
        "n_tied": n_tied,
        "top_pairs": best[:top],
        "tie_rule": TIE_RULE,
    }


def _heap_steps(learner: _Learner, budget: int, min_frequency: int, top: int) -> Iterator[dict[str, Any]]:
    for step in range(budget):
        best = learner.top(max(top, 1))
        if not best or best[0][1] < min_frequency:
            return
        yield _step(step, best, learner.pairs_with_count[best[0][1]] - 1, top)
        learner.merge(best[0][0])


def _subword_nmt_steps(
    word_counts: Mapping[str, int], budget: int, min_frequency: int, top: int, skip: int
) -> Iterator[dict[str, Any]]:
    """Steps from subword-nmt's own loop; the pairs shown are from its (pruned) statistics."""
    symbols_of = {word: word_symbols(word) for word in word_counts}
    for step, (pair, count, stats) in enumerate(
        _subword_nmt.steps(symbols_of, word_counts, budget, min_frequency)
    ):
        if step < skip:
            continue
        others = heapq.nlargest(max(top, 1), ((c, p) for p, c in stats.items() if c > 0 and p != pair))
        best = [(pair, count), *((p, c) for c, p in others)]
        n_tied = sum(1 for p, c in stats.items() if c == count and p != pair) if top > 1 else 0
        yield _step(step, best, n_tied, top)


def learn(
    corpus: str | Iterable[str] | Mapping[str, int],
    num_merges: int,
    min_frequency: int = 2,
    *,
    total_symbols: bool = False,
) -> list[Pair]:
    """The merges `subword-nmt learn-bpe -s num_merges --min-frequency min_frequency` writes."""
    steps = learn_steps(corpus, num_merges, min_frequency, total_symbols=total_symbols, top=1)
    return [step["pair"] for step in steps]


# ----- codes files -------------------------------------------------------------------------


def format_codes(merges: Iterable[Pair]) -> str:
    """subword-nmt's codes text: the version header, then one `left right` line per merge."""
    lines = [CODES_HEADER + "\n"]
    for i, (left, right) in enumerate(merges):
        for symbol in (left, right):
            if not symbol or " " in symbol or "\n" in symbol:
                raise ValueError(f"merge {i}: symbol {symbol!r} cannot be written (empty, space or newline)")
        lines.append(f"{left} {right}\n")
    return "".join(lines)


def parse_codes(text: str, source: str = "<string>", *, limit: int | None = None) -> list[Pair]:
    """Read codes text as subword-nmt does (lines split at `\\n` only); version 0.2 only.

    `limit`: read only the first `limit` merges (apply-bpe's -m), the lines after them
    unchecked, as subword-nmt reads them.
    """
    lines = text.rstrip("\n").split("\n")
    first = lines[0] if lines else ""
    if not first.startswith("#version:"):
        raise ValueError(f"{source}: no '#version: 0.2' header (version 0.1 codes are not supported)")
    version = re.sub(r"(\.0+)*$", "", first.split()[-1])
    if version != "0.2":
        raise ValueError(f"{source}: codes version {version} is not supported (only 0.2)")
    merges: list[Pair] = []
    wanted = lines[1:] if limit is None else lines[1 : 1 + max(limit, 0)]
    for lineno, line in enumerate(wanted, start=2):
        parts = line.strip("\r\n ").split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{source}:{lineno}: expected 'left right', got {line!r}")
        merges.append((parts[0], parts[1]))
    return merges


def write_codes(path: str | Path, merges: Iterable[Pair]) -> None:
    atomic_write_text(path, format_codes(merges))


def read_codes(path: str | Path) -> list[Pair]:
    data = Path(path).read_bytes()
    try:
        return parse_codes(data.decode("utf-8"), str(path))
    except UnicodeDecodeError as e:
        raise not_utf8(path, e.start, data[e.start : e.start + 4]) from None


# ----- applying ----------------------------------------------------------------------------


class Segmenter:
    """Applies merges as `subword-nmt apply-bpe` does: in each word, repeatedly merge every
    occurrence (left to right) of the pair that comes first in the merge list.

    `glossaries`: regexes (apply-bpe's --glossaries) for words never split; a word holding
    one is first cut around it (see _apply_bpe.py), and each piece is segmented alone.
    `vocabulary`: the units to keep (apply-bpe's --vocabulary, read by read_vocabulary with
    its threshold); any other unit is split back by undoing merges. Empty: no check, as in
    subword-nmt.
    `dropout`: BPE-dropout (Provilkov et al., 2019; apply-bpe's --dropout), each merge left
    out with that probability at each step, drawn as subword-nmt draws: one random() per
    adjacent pair at every step of every word, in text order, from `random.Random(seed)`
    (= subword-nmt after `random.seed(seed)`; None: seeded by the system, another run
    another result).
    """

    def __init__(
        self,
        merges: Iterable[Pair],
        separator: str | None = None,
        *,
        glossaries: Iterable[str] | None = None,
        vocabulary: Iterable[str] | None = None,
        dropout: float = 0.0,
        seed: int | None = None,
    ) -> None:
        check_dropout(dropout)
        merges = _checked_merges(merges)
        if separator is not None and not isinstance(separator, str):
            raise TypeError(f"separator must be a str such as '@@' or None, not {separator!r}")
        self.ranks: dict[Pair, int] = {}
        for rank, pair in enumerate(merges):
            self.ranks.setdefault(pair, rank)  # a repeated merge keeps its first rank
        self.separator = separator or ""
        self.glossaries, self._glossary_regex = compile_glossaries(glossaries)
        self.vocabulary = frozenset(vocabulary or ()) or None  # subword-nmt: `if vocab:`
        self._made_by = reverse_merges(merges) if self.vocabulary else {}
        self.dropout = dropout
        self._draw = random.Random(seed).random
        self._cache: dict[str, tuple[str, ...]] = {}

    def segment_word(self, word: str) -> tuple[str, ...]:
        """`lower` -> ('low', 'er') for merges that make them; no `</w>` in the output."""
        cached = None if self.dropout else self._cache.get(word)
        if cached is not None:
            return cached
        if self.glossaries:
            pieces = isolate_glossaries(word, self.glossaries)
            result = tuple(unit for piece in pieces for unit in self._encode(piece))
        else:
            result = self._encode(word)
        if not self.dropout:  # with dropout a word comes out otherwise each time
            self._cache[word] = result
        return result

    def _encode(self, segment: str) -> tuple[str, ...]:
        """One piece of a word, as subword-nmt's encode(): a glossary match or a single
        character stays whole, anything else is merged."""
        if len(segment) == 1 or (self._glossary_regex and self._glossary_regex.match(segment)):
            return (segment,)
        symbols = self._merge_with_dropout(segment) if self.dropout else self._merge(segment)
        units = (*symbols[:-1], symbols[-1][: -len(END_OF_WORD)])
        if self.vocabulary:
            return split_to_vocabulary(units, self._made_by, self.vocabulary, self.separator)
        return units

    def _merge(self, segment: str) -> tuple[str, ...]:
        ranks = self.ranks
        symbols = word_symbols(segment)
        while len(symbols) > 1:
            ranked = [(ranks[pair], pair) for pair in pairwise(symbols) if pair in ranks]
            if not ranked:
                break
            pair = min(ranked)[1]
            symbols = _merge_symbols(symbols, *pair)
        return symbols

    def _merge_with_dropout(self, segment: str) -> tuple[str, ...]:
        """subword-nmt's loop with dropout, draw for draw: each step draws for every adjacent
        pair (merge or not, before looking it up), keeps those that survive and are merges,
        and merges the best one at its surviving positions only."""
        ranks, draw, dropout = self.ranks, self._draw, self.dropout
        symbols = word_symbols(segment)
        while len(symbols) > 1:
            kept = [
                (ranks[pair], i, pair)
                for i, pair in enumerate(pairwise(symbols))
                if draw() > dropout and pair in ranks
            ]
            if not kept:
                break
            best = min(kept)[2]
            merged: list[str] = []
            start = 0
            for _, i, pair in kept:
                if pair != best or i < start:
                    continue  # another pair, or overlapping the last merge (`x x x` -> `xx x`)
                merged.extend(symbols[start:i])
                merged.append(best[0] + best[1])
                start = i + 2
            merged.extend(symbols[start:])
            symbols = tuple(merged)
        return symbols

    def apply_line(self, line: str) -> str:
        """One line: words segmented and joined by single spaces, non-final units marked with
        the separator; leading and trailing `\\r\\n ` kept as they were."""
        body = line.lstrip("\r\n ")
        out = line[: len(line) - len(body)]
        units: list[str] = []
        for word in words_of_line(line):
            pieces = self.segment_word(word)
            units.extend(piece + self.separator for piece in pieces[:-1])
            units.append(pieces[-1])
        out += " ".join(units)
        trailing = len(line) - len(line.rstrip("\r\n "))
        if trailing and trailing != len(line):
            out += line[-trailing:]
        return out

    def apply(self, text: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}; decode bytes first")
        return "".join(self.apply_line(line) for line in text.splitlines(keepends=True))


def apply(
    text: str,
    merges: Iterable[Pair],
    separator: str | None = None,
    *,
    glossaries: Iterable[str] | None = None,
    vocabulary: Iterable[str] | None = None,
    dropout: float = 0.0,
    seed: int | None = None,
) -> str:
    """Segment `text` with `merges`; `separator="@@"` gives subword-nmt's default output,
    None (or "") leaves the units of a word separated by spaces only. `glossaries`: as
    apply-bpe's --glossaries (Python regexes; ValueError if one does not compile).
    `vocabulary`: as --vocabulary, e.g. `read_vocabulary("vocab.txt", threshold=50)`.
    `dropout`, `seed`: as --dropout and --seed (see Segmenter)."""
    options = {"glossaries": glossaries, "vocabulary": vocabulary, "dropout": dropout, "seed": seed}
    return Segmenter(merges, separator, **options).apply(text)


def _checked_merges(merges: Iterable[Pair]) -> list[Pair]:
    """Each merge a pair of non-empty str, as parse_codes gives them: a tuple of one unit raised
    IndexError, and a str of codes ("he llo") was read as pairs of its characters."""
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Iterable):
        raise TypeError(
            f"merges must be a list of (left, right) pairs of str (parse_codes gives them), not {merges!r:.40}"
        )
    pairs = []
    for i, pair in enumerate(merges):
        if not (
            isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(x, str) and x for x in pair)
        ):
            raise ValueError(
                f"merge {i} is {pair!r:.40}; each merge is a (left, right) pair of non-empty str"
            )
        pairs.append((pair[0], pair[1]))
    return pairs


def check_dropout(dropout: float) -> None:
    """A probability, 0 to 1: subword-nmt takes any float, and above 1 or NaN drops every
    merge, below 0 none, without a word."""
    if isinstance(dropout, bool) or not isinstance(dropout, int | float) or not 0 <= dropout <= 1:
        raise ValueError(f"dropout must be a probability between 0 and 1, got {dropout!r}")
