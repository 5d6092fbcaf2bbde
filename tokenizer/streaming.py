"""Files, streamed: their text split exactly a block or a byte range at a time.

Counting reads files in blocks, so memory grows with the number of distinct chunks, not
with the corpus; big files are cut into byte ranges that processes (counting.py) or
cluster tasks (distributed.py) count on their own.

Streaming is exact: a window of text is split, and only chunks followed by at least
HOLD_BACK more chunks are kept; the rest is split again with the next block appended.
A split pattern decides a chunk by looking at most a couple of chunks ahead (true of
gpt2, gpt4, o200k: their lookaheads and `$` see one character past a run), so those
kept chunks are what splitting the whole document gives. A custom regex has no such bound
(`streams_exactly`): each of its files is split whole, as one window, never cut into ranges.
Ranges start at a newline that lies between two ASCII non-space characters, and the range
before checks that its own chunking has a boundary exactly there (else CutMismatch: the
caller counts that file serially).
"""

from __future__ import annotations

import glob
import os
from collections import _count_elements as _tally  # Counter.update's C loop, on a plain dict
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, count
from operator import itemgetter
from pathlib import Path

from .patterns import compile_pattern, is_named

BLOCK_SIZE = 1 << 16  # bytes read per block: its list of chunks takes ~15x that in memory, in each
# worker (1 << 18 made the 10 MB mixed training's peak PSS over all processes ~5 MB higher, no faster)
HOLD_BACK = 3  # chunks at a window's end that may still change when more text follows
RANGE_MIN_BYTES = 1 << 20  # ranges are at least this big: a smaller one costs more to start than to count
# processes one count or encode may start: the work is CPU-bound, so more than a big machine's
# cores gains nothing, and each is a forked Python with its own tables (`--workers 100000`
# forked until the system ran out of processes).
MAX_WORKERS = 256


def compile_splitter(pattern: str, unicode: str | None = None):
    """Compile a split pattern for counting: ValueError (not regex.error) if it is unusable.
    `unicode`: its Unicode tables (patterns.compile_pattern), None for the pattern's default."""
    try:
        regex = compile_pattern(pattern, unicode=unicode)
    except Exception as e:  # regex.error / re.error are not ValueErrors
        if isinstance(e, ValueError) and "pattern" in str(e):
            raise
        raise ValueError(f"invalid split pattern {pattern!r}: {e}") from None
    if getattr(regex, "groups", 0) or getattr(regex, "_groups", 0):
        raise ValueError(f"split pattern {pattern!r} has capturing groups; use non-capturing (?:...) groups")
    return regex


def streams_exactly(pattern: str) -> bool:
    """Whether a file can be split a block (and a byte range) at a time with this pattern: the
    named patterns decide a chunk within HOLD_BACK chunks of look-ahead. A custom regex has no
    such bound (`\\w+ (?=\\w+ \\w+ \\w+ \\w+!)|\\w+|...` decides a chunk four words later; so
    does an alternative that fails late): its files are split whole, one window each."""
    return is_named(pattern)


def check_workers(workers: object) -> None:
    """ValueError unless `workers` is None (the default) or an integer from 1 to MAX_WORKERS."""
    if workers is None:
        return
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(
            f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}; "
            f"one per core is the most that helps ({default_workers()} here)"
        )


# ----- inputs -------------------------------------------------------------------------------


def not_utf8(where: object, offset: int, bad: bytes) -> ValueError:
    """The error for text that is not UTF-8: where, the offset and bytes, and the fix."""
    shown = bad[:4].hex(" ").upper()
    hint = ""
    if offset == 0 and bad[:2] in (b"\xff\xfe", b"\xfe\xff"):
        hint = " (it starts with UTF-16's byte-order mark: iconv -f UTF-16 -t UTF-8)"
    return ValueError(
        f"{where}: not valid UTF-8 at byte offset {offset} ({shown}); convert it to UTF-8 first{hint}"
    )


def check_corpus_file(path: Path) -> Path:
    """`path` if it is a regular file (symlinks followed) whose size is its length, else an
    error saying what it is."""
    if path.is_file():
        return _check_sized(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory; name its files or use a glob such as {path}/*.txt")
    if path.exists():  # /dev/zero never ends; a pipe cannot be cut into ranges or read twice
        raise ValueError(f"{path}: not a regular file (a device, pipe or socket); give text files")
    raise FileNotFoundError(f"corpus file not found: {path}")


def _check_sized(path: Path) -> Path:
    """Refuse a file that says it is empty but is not: /proc and /sys files report size 0 and
    are made as they are read. Corpora are counted in byte ranges of the size stat gives, so one
    trained as empty, silently."""
    try:
        if path.stat().st_size == 0:
            with path.open("rb") as f:
                if f.read(1):
                    raise ValueError(
                        f"{path}: reports a size of 0 but holds text (a /proc or /sys file?); "
                        f"copy it to a regular file first: cat {path} > corpus.txt"
                    )
    except OSError:
        pass  # unreadable: the reader says so, naming the file
    return path


def expand_inputs(paths_or_globs: Iterable[str | os.PathLike]) -> list[Path]:
    """Files named by paths or glob patterns, in the order given (each glob sorted).

    An existing file is taken as it is even if its name looks like a glob; a glob that matches
    no file, or a path that is not a file, is an error (a typo must not silently shrink a corpus).
    """
    if isinstance(paths_or_globs, (str, os.PathLike)):
        paths_or_globs = [paths_or_globs]
    files: list[Path] = []
    for item in paths_or_globs:
        if not isinstance(item, (str, os.PathLike)):
            raise ValueError(f"expected file paths or glob patterns, got {type(item).__name__}")
        text = os.fspath(item)
        if os.path.isfile(text):
            files.append(_check_sized(Path(text)))
        elif glob.has_magic(text):
            matches = _glob_files(text)
            if not matches:
                raise FileNotFoundError(f"no files match {text!r}")
            files.extend(_check_sized(Path(p)) for p in matches)
        else:
            check_corpus_file(Path(text))
    if not files:
        raise ValueError("no input files given")
    return files


def _glob_files(pattern: str) -> list[str]:
    """The files `pattern` matches, sorted; ValueError if it reaches one file twice. `**` follows
    symbolic links to folders, so a link to a folder above (`up -> ..`) matched every file again
    at each level (a 12-byte file counted 41 times), two such links took exponential time (the
    paths branch at each level), and a link to a sibling folder counted its files twice."""
    seen: dict[tuple[int, int], str] = {}
    for match in glob.iglob(pattern, recursive=True):  # lazy: a loop stops at its first repeat
        if not os.path.isfile(match):
            continue
        info = os.stat(match)
        first = seen.setdefault((info.st_dev, info.st_ino), match)
        if first != match:
            raise ValueError(
                f"{pattern!r} reaches the file {first} a second time, as {match}: through a symbolic "
                "link to a folder (a loop such as up -> ..?), its text would be counted twice; "
                "name the files or folders to read without the link"
            )
    return sorted(seen.values())


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# ----- splitting a stream ---------------------------------------------------------------------


def _split_window(regex, window: str, final: bool, tiles: bool = False) -> tuple[list[str], int]:
    """Chunks of `window` that more text cannot change, and where the unsettled rest begins.

    tiles: the pattern is known to match every character (the named ones), so its chunks
    tile the window and need not be summed to check it."""
    chunks = regex.findall(window)
    if final:
        return chunks, len(window)
    if len(chunks) <= HOLD_BACK:
        return [], 0  # wait for more text
    if tiles or sum(map(len, chunks)) == len(window):  # the chunks tile the window: the common case
        rest = len(window) - sum(map(len, chunks[-HOLD_BACK:]))
        del chunks[-HOLD_BACK:]
        return chunks, rest
    spans = chunk_spans(regex, window)
    if spans is None:
        return [], 0  # cannot locate the chunks: wait for the end of the document
    del spans[-HOLD_BACK:]
    return [window[a:b] for a, b in spans], spans[-1][1]


def chunk_spans(regex, text: str) -> list[tuple[int, int]] | None:
    """(start, end) of each chunk; None when the pattern skips text and cannot say where."""
    chunks = regex.findall(text)
    if sum(map(len, chunks)) == len(text):  # the chunks tile the text
        ends = list(accumulate(map(len, chunks)))
        return list(zip([0, *ends[:-1]], ends, strict=True))
    if hasattr(regex, "finditer"):
        return [m.span() for m in regex.finditer(text)]
    return None


def _utf8_cut(data: bytes) -> int:
    """Largest prefix length of `data` that does not end inside a UTF-8 sequence."""
    j = len(data) - 1
    while j >= 0 and len(data) - j <= 3 and data[j] & 0xC0 == 0x80:
        j -= 1
    if j >= 0 and data[j] >= 0xC0:
        need = 2 if data[j] < 0xE0 else 3 if data[j] < 0xF0 else 4
        if j + need > len(data):
            return j
    return len(data)


def decoded_blocks(
    path: Path, start: int, end: int, block_size: int, trim: bool = False
) -> Iterator[tuple[str, int]]:
    """Decode bytes [start, end) of a file block by block: yields (text, bytes consumed).

    trim: `end` may fall inside a character (a look-ahead read); stop before it.
    """
    with open(path, "rb") as f:
        f.seek(start)
        pos, pending = start, b""
        while pos < end:
            want = min(block_size, end - pos - len(pending))
            data = f.read(want) if want > 0 else b""
            at_end = len(data) < want or pos + len(pending) + len(data) >= end
            data = pending + data
            cut = len(data) if at_end and not trim else _utf8_cut(data)
            try:
                text = data[:cut].decode("utf-8")
            except UnicodeDecodeError as e:
                raise not_utf8(path, pos + e.start, data[e.start : e.start + 4]) from None
            pending = data[cut:]
            pos += cut
            yield text, cut
            if at_end:
                return


class CutMismatch(Exception):
    """A worker range did not start at a chunk boundary (pattern looks too far ahead)."""


def count_range(
    path: Path,
    start: int,
    end: int,
    pattern: str,
    block_size: int = BLOCK_SIZE,
    report: Callable[[int], None] | None = None,
    counts: dict[str, int] | None = None,
    after_block: Callable[[dict[str, int]], None] | None = None,
    unicode: str | None = None,
) -> tuple[dict[str, int], int]:
    """Count chunks of bytes [start, end) of a file whose chunking restarts at `start`.

    When `end` is not the end of the file, the chunking must have a boundary at `end`;
    text after it is read only to settle the last chunks. Counts are added to `counts`
    (new chunks after its keys) when given, so a serial caller needs no second table;
    after_block(counts) runs after each block (the serial caller's table cap).
    """
    regex = compile_splitter(pattern, unicode)
    tiles = is_named(pattern)  # every character is in some chunk (tests/test_patterns.py)
    size = path.stat().st_size
    if not streams_exactly(pattern):  # the whole file at once (or say it cannot be cut)
        if start > 0 or end < size:
            raise CutMismatch(f"{path}: a custom split pattern may look any distance ahead; count it whole")
        return _count_whole(path, regex, block_size, report, {} if counts is None else counts, after_block)
    counts = {} if counts is None else counts
    n_chunks = 0
    window = ""
    for text, consumed in decoded_blocks(path, start, end, block_size):
        window += text
        if report is not None:
            report(consumed)
        chunks, rest = _split_window(regex, window, final=False, tiles=tiles)
        _tally(counts, chunks)
        n_chunks += len(chunks)
        window = window[rest:]
        if after_block is not None:
            after_block(counts)
    if end >= size:
        chunks = regex.findall(window)
        _tally(counts, chunks)
        return counts, n_chunks + len(chunks)
    # Settle the tail: read past `end` until the chunks up to `end` are decided.
    boundary, extra = len(window), 1 << 16
    while True:
        stop = min(size, end + extra)
        text = window + "".join(t for t, _ in decoded_blocks(path, end, stop, block_size, trim=stop < size))
        spans = chunk_spans(regex, text)
        if spans is None:
            raise CutMismatch(f"{path}: cannot locate chunks of this pattern; count serially")
        if stop < size:
            del spans[-HOLD_BACK:]
        if stop >= size or (spans and spans[-1][1] >= boundary):
            break
        extra *= 4
    for a, b in spans:
        if a >= boundary:
            break
        if b > boundary:
            raise CutMismatch(f"{path}: a chunk spans byte {end}")
        chunk = text[a:b]
        counts[chunk] = counts.get(chunk, 0) + 1
        n_chunks += 1
    return counts, n_chunks


def _count_whole(path: Path, regex, block_size: int, report, counts: dict[str, int], after_block):
    """A file's chunks counted in one scan of its whole text: what a custom pattern needs. The
    matches are tallied as they come (a list of every chunk of a 200 MB file would take GBs)."""
    parts = []
    for text, consumed in decoded_blocks(path, 0, path.stat().st_size, block_size):
        parts.append(text)
        if report is not None:
            report(consumed)
    text = "".join(parts)
    del parts
    chunks = map(itemgetter(0), regex.finditer(text)) if hasattr(regex, "finditer") else regex.findall(text)
    seen = count()  # zip draws one number per chunk: what is left is how many there were
    _tally(counts, map(itemgetter(0), zip(chunks, seen, strict=False)))
    if after_block is not None:
        after_block(counts)
    return counts, next(seen)


def range_cuts(path: Path, parts: int) -> list[int]:
    """Byte offsets that split a file into about `parts` ranges at newline cut points."""
    size = path.stat().st_size
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, parts):
            target = max(size * k // parts, cuts[-1] + 1)
            cut = _next_cut(f, max(target - 1, 0), size * (k + 1) // parts)
            if cuts[-1] < cut < size:
                cuts.append(cut)
    cuts.append(size)
    return cuts


def _next_cut(f, pos: int, stop: int, probe: int = 1 << 20) -> int:
    """The first cut point after `pos` in one probe, or in more up to about `stop`; -1 if none.

    Scanning on past one probe matters for text with few cut points (CJK, verse): a skipped
    cut makes a range, and so a worker's partial table, several times the planned size."""
    while True:
        f.seek(pos)
        data = f.read(probe)
        at = find_cut(data)
        if at >= 0:
            return pos + at
        pos += probe - CUT_CONTEXT  # a cut's bytes may straddle the probe's end
        if len(data) < probe or pos >= stop:
            return -1


# Beyond ASCII, a cut is made only next to characters that are never whitespace in any Unicode
# version either flavour uses: CJK ideographs and Hangul syllables (letters, or unassigned: then
# punctuation to the patterns), and CJK and fullwidth punctuation. Without them, text in those
# scripts (whose lines seldom start with an ASCII letter) has no cut and one worker counts it.
CUT_LETTERS = ((0x4E00, 0x9FFF), (0xAC00, 0xD7A3))  # may follow the newline
CUT_SOLID = (*CUT_LETTERS, (0x3001, 0x303F), (0xFF01, 0xFF60))  # may precede it
CUT_CONTEXT = 8  # bytes a probe overlaps the next: a rule reads 3 bytes either side of a newline


def find_cut(data: bytes) -> int:
    r"""Index of the first cut point in `data` (-1 if none): just after a newline between a
    character that is not whitespace (visible ASCII, or CUT_SOLID) and a letter (ASCII, or
    CUT_LETTERS); or just before a carriage return that follows an ASCII letter. The second is
    what CRLF text has: before its "\n" is a "\r", so the first rule never holds there.

    Why each cut is a chunk boundary of every named pattern, whatever follows, and why the range
    ending there is split as the whole text is:
    - A newline after a character that is not whitespace starts its own whitespace run, or ends a
      punctuation run (` ?[^\s\p{L}\p{N}]+[\r\n]*`, o200k's `[\r\n/]*`), which stops at the
      letter; `\s+(?!\S)`, `\s*[\r\n]` and `\s+$` all take that newline alone, with the letter
      or with the end of the range after it. No alternative takes "\n" before a letter: the
      letter alternatives' optional prefix excludes "\r\n".
    - A letter run ends at "\r" as it ends at the end of the text, and no alternative continues
      an ASCII letter with "\r".
    The patterns have no lookbehind, so the range after a cut is split as the whole text is."""
    cut = -1
    i = data.find(b"\n", 1)
    while 0 < i < len(data) - 1:
        if _solid_before(data, i) and _letter_at(data, i + 1):
            cut = i + 1
            break
        i = data.find(b"\n", i + 1)
    stop = len(data) if cut < 0 else cut - 1  # only a carriage return before the newline's cut
    i = data.find(b"\r", 1, stop)
    while i > 0:
        if _is_ascii_letter(data[i - 1]):
            return i
        i = data.find(b"\r", i + 1, stop)
    return cut


def _is_ascii_letter(byte: int) -> bool:
    return 0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A


def _solid_before(data: bytes, i: int) -> bool:
    """Whether the character ending at byte i is visible ASCII or in CUT_SOLID."""
    byte = data[i - 1]
    if byte < 0x80:
        return 0x21 <= byte <= 0x7E
    return i >= 3 and _three_byte_char_in(data[i - 3 : i], CUT_SOLID)


def _letter_at(data: bytes, j: int) -> bool:
    """Whether the character starting at byte j is an ASCII letter or in CUT_LETTERS."""
    byte = data[j]
    if byte < 0x80:
        return _is_ascii_letter(byte)
    return _three_byte_char_in(data[j : j + 3], CUT_LETTERS)


def _three_byte_char_in(piece: bytes, ranges: tuple[tuple[int, int], ...]) -> bool:
    """Whether `piece` is one whole 3-byte UTF-8 character (every range here is) in `ranges`."""
    try:
        text = piece.decode("utf-8")
    except UnicodeDecodeError:  # cut off, or a continuation byte of a longer character
        return False
    return len(text) == 1 and any(a <= ord(text) <= b for a, b in ranges)
