"""Counting phase: streaming and parallel counts equal splitting the whole text at once."""

from __future__ import annotations

import gzip
import os
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tokenizer import counting, streaming
from tokenizer.cli import main as cli_main
from tokenizer.core import Tokenizer
from tokenizer.counting import count_chunks, load_counts, save_counts
from tokenizer.patterns import compile_pattern
from tokenizer.tables import MAX_HEADER_CHARS
from tokenizer.train import train

SPLIT_PATTERNS = ["gpt2", "gpt4", "o200k", r"\w+|[^\w\s]+|\s+(?!\S)|\s+$", r"\p{L}+|\p{N}"]


def corpus_file(name: str) -> Path:
    path = CORPORA / name
    if not path.exists():
        pytest.skip(f"corpus {name} not found at {path}")
    return path


def whole_text_counts(text: str, pattern: str) -> list[tuple[str, int]]:
    counts = Counter(compile_pattern(pattern).findall(text))
    counts.pop("", None)
    return list(counts.items())


@pytest.mark.parametrize("name", ["taylorswift.txt", "emoji_sequences.txt"])
@pytest.mark.parametrize("pattern", SPLIT_PATTERNS)
def test_streamed_blocks_equal_whole_text_on_corpora(name, pattern):
    path = corpus_file(name)
    want = whole_text_counts(path.read_text(encoding="utf-8"), pattern)
    got, _ = counting.count_range(path, 0, path.stat().st_size, pattern, block_size=1000)
    assert list(got.items()) == want  # same counts, same first-occurrence order


def assert_ranges_count_as_the_whole(path: Path, cuts: list[int], text: str) -> None:
    """The ranges between `cuts`, counted one by one, give the whole text's counts in order."""
    for pattern in ["gpt2", "gpt4", "o200k"]:
        total: Counter = Counter()
        for start, end in zip(cuts, cuts[1:], strict=False):
            part, _ = counting.count_range(path, start, end, pattern, block_size=5000)
            total.update(part)
        assert list(total.items()) == whole_text_counts(text, pattern), pattern


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("name", ["tinyshakespeare.txt", "udhr_sample.txt", "code_python.txt"])
def test_worker_ranges_equal_whole_text_on_corpora(name, newline, tmp_path):
    """Also with Windows line ends: their cut points are before a "\r" that follows a letter."""
    text = corpus_file(name).read_text(encoding="utf-8")[:400_000].replace("\n", newline)
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    cuts = counting.range_cuts(path, 8)
    assert len(cuts) > 4
    assert_ranges_count_as_the_whole(path, cuts, text)


# Texts built to stress the cut points: whitespace runs, newlines before letters, CRLF, marks.
stress_text = st.lists(
    st.sampled_from(
        [
            "a",
            "Ab",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\r",
            "b\r\n",
            "\n\n",
            "\t",
            ".",
            "...",
            "'s",
            "1234",
            "é",
            "\u00a0",
            "日本",
            "。",
            "\u3000",
            "한국",
            "😀",
            "x\ny",
        ]
    ),
    max_size=120,
).map("".join)


@settings(max_examples=80, deadline=None)
@given(text=stress_text, pattern=st.sampled_from(SPLIT_PATTERNS), block_size=st.integers(1, 16))
def test_streaming_is_exact_at_any_block_size(text, pattern, block_size, tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    got, n = counting.count_range(path, 0, path.stat().st_size, pattern, block_size=block_size)
    assert list(got.items()) == whole_text_counts(text, pattern)


def cjk_text() -> str:
    """The lines of the multilingual corpus that are mostly CJK ideographs (~0.5 MB): a text
    whose lines seldom start with an ASCII letter."""
    text = corpus_file("pg_multilingual.txt").read_text(encoding="utf-8")
    lines = [
        line for line in text.split("\n") if sum("\u4e00" <= c <= "\u9fff" for c in line) > len(line) / 2
    ]
    return "\n".join(lines)


def test_cjk_text_is_cut_into_ranges_that_count_as_the_whole(tmp_path):
    text = cjk_text()
    path = tmp_path / "cjk.txt"
    path.write_bytes(text.encode("utf-8"))
    cuts = counting.range_cuts(path, 8)
    assert len(cuts) > 6  # without the CJK rule: one range, one worker
    assert_ranges_count_as_the_whole(path, cuts, text)


@settings(max_examples=300, deadline=None)
@given(text=stress_text, pattern=st.sampled_from(["gpt2", "gpt4", "o200k"]))
def test_every_cut_point_is_a_chunk_boundary(text, pattern):
    """The cut rules (a newline between visible ASCII and a letter; before a "\r" after a
    letter) never split a chunk, and the text on either side splits as the whole does."""
    data = text.encode("utf-8")
    chunks = compile_pattern(pattern).findall(text)
    ends, pos = set(), 0
    for chunk in chunks:
        pos += len(chunk.encode("utf-8"))
        ends.add(pos)
    start = 0
    while (at := counting.find_cut(data[start:])) >= 0:
        assert start + at in ends
        left = data[: start + at].decode("utf-8")
        right = data[start + at :].decode("utf-8")
        split = compile_pattern(pattern).findall(left) + compile_pattern(pattern).findall(right)
        assert split == chunks
        start += at


@pytest.mark.parametrize("min_chunk_count", [1, 3])
def test_parallel_counts_equal_serial(tmp_path, monkeypatch, min_chunk_count):
    text = corpus_file("tinyshakespeare.txt").read_text(encoding="utf-8")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(text[:300_000], encoding="utf-8")
    b.write_text(text[300_000:600_000], encoding="utf-8")
    monkeypatch.setattr(counting, "RANGE_MIN_BYTES", 20_000)
    monkeypatch.setattr(counting, "RANGE_MAX_BYTES", 30_000)  # ~20 ranges: more than are in flight
    waited = []  # while_waiting runs once, and only while workers count
    serial, s_stats = count_chunks(
        [a, b], "gpt4", workers=1, min_chunk_count=min_chunk_count, while_waiting=lambda: waited.append(1)
    )
    assert waited == []
    parallel, p_stats = count_chunks(
        [a, b], "gpt4", workers=2, min_chunk_count=min_chunk_count, while_waiting=lambda: waited.append(2)
    )
    assert waited == [2]
    assert list(parallel.items()) == list(serial.items())
    assert type(parallel) is dict and type(serial) is dict
    assert {**p_stats, "workers": 1, "seconds": 0} == {**s_stats, "seconds": 0}
    assert p_stats["workers"] == 2 and "serial_fallback" not in p_stats
    whole = Counter(compile_pattern("gpt4").findall(text[:300_000]))
    whole.update(compile_pattern("gpt4").findall(text[300_000:600_000]))
    assert list(serial.items()) == [(k, n) for k, n in whole.items() if n >= min_chunk_count]


@settings(max_examples=200, deadline=None)
@given(text=stress_text, probe=st.integers(streaming.CUT_CONTEXT + 1, 24), start=st.integers(0, 40))
def test_cut_search_across_probes_finds_the_first_cut(text, probe, start, tmp_path_factory):
    """range_cuts reads on past its first probe; the overlapping reads miss no cut point (a rule
    reads up to 3 bytes either side of a newline: CUT_CONTEXT covers them)."""
    data = text.encode("utf-8")
    path = tmp_path_factory.mktemp("cuts") / "t.txt"
    path.write_bytes(data)
    at = counting.find_cut(data[start:]) if start < len(data) else -1
    with open(path, "rb") as f:
        assert streaming._next_cut(f, start, len(data), probe=probe) == (start + at if at >= 0 else -1)


def test_a_pattern_that_looks_across_cuts_falls_back_to_serial(tmp_path, monkeypatch):
    text = "One line.\nTwo words\nThree more words.\n" * 2000
    path = tmp_path / "lines.txt"
    path.write_text(text, encoding="utf-8")
    pattern = r"\n[A-Z][a-z]*|[^\n]+|\n"  # a chunk starts with the newline: every cut splits one
    monkeypatch.setattr(counting, "RANGE_MIN_BYTES", 5_000)
    counts, stats = count_chunks(path, pattern, workers=2)
    assert "serial_fallback" not in stats  # a custom pattern's files are never cut (streams_exactly)
    assert list(counts.items()) == whole_text_counts(text, pattern)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_custom_pattern_that_decides_a_chunk_words_later_counts_exactly(tmp_path, monkeypatch, workers):
    """Files were split a 64 KiB block at a time, trusting any pattern to settle a chunk within
    HOLD_BACK chunks: this one waits four words for a "!", and `count` wrote one chunk's count
    wrong (160,887 chunks for 160,886), exit 0. A custom pattern's file is now split whole."""
    rng = random.Random(1)  # a text where a block ends inside such a wait (seed 0 has none)
    groups = []
    while sum(map(len, groups)) < 400_000:
        words = " ".join(
            rng.choice(["alpha", "beta", "gamma", "delta", "eps"]) for _ in range(rng.randint(1, 9))
        )
        groups.append(words + rng.choice(["!", ".", " ", "\n"]))
    text = "".join(groups)
    path = tmp_path / "words.txt"
    path.write_text(text, encoding="utf-8")
    pattern = r"\w+ (?=\w+ \w+ \w+ \w+!)|\w+|\s|[^\w\s]"
    monkeypatch.setattr(counting, "RANGE_MIN_BYTES", 50_000)
    counts, _ = count_chunks(path, pattern, workers=workers)
    assert list(counts.items()) == whole_text_counts(text, pattern)


def test_documents_are_split_separately():
    counts, stats = count_chunks(["ab  ", "cd"], "gpt4")
    assert counts == {"ab": 1, "  ": 1, "cd": 1}  # joined: "ab", " ", " cd"
    assert stats["documents"] == 2 and stats["chunks"] == 3
    assert count_chunks(["ab ab", "ab ab"], "none")[0] == {"ab ab": 2}


def test_a_list_mixing_paths_and_text_says_so(tmp_path):
    """[Path("a.txt"), "b.txt"] said "corpus document 0: expected str, got PosixPath"."""
    (tmp_path / "a.txt").write_text("hello")
    with pytest.raises(ValueError, match="document 0 is a path among items that are not: .* not a mix"):
        count_chunks([tmp_path / "a.txt", "b.txt"], "gpt4")


def test_min_chunk_count_prunes_rare_chunks():
    counts, stats = count_chunks("the cat the dog the end", "gpt4", min_chunk_count=2)
    assert counts == {" the": 2}
    assert stats["pruned_chunks"] == 4 and stats["unique_chunks"] == 1


def test_invalid_utf8_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    good = "héllo wörld\n".encode() * 50
    path.write_bytes(good + b"\xc3\x28 tail")
    for block_size in (7, 1 << 16):
        with pytest.raises(ValueError, match=rf"bad.txt: not valid UTF-8 at byte offset {len(good)}"):
            counting.count_range(path, 0, path.stat().st_size, "gpt4", block_size=block_size)
    truncated = tmp_path / "cut.txt"
    truncated.write_bytes(good + "é".encode()[:1])
    with pytest.raises(ValueError, match=rf"cut.txt: not valid UTF-8 at byte offset {len(good)}"):
        count_chunks(truncated, "gpt4")


def test_a_count_table_with_a_lone_surrogate_is_refused_when_saved(tmp_path):
    """count_chunks(["a\\ud800b cd"]) counts it (extend reads such text as the encoder does), but
    save_counts wrote a table that load_counts then refused ("not a count table written by
    `count`"). It is refused when saved, naming the chunk, and no file is left behind."""
    counts, stats = count_chunks(["ok", "a\ud800b cd"], "gpt4")
    path = tmp_path / "c.counts"
    with pytest.raises(
        ValueError, match=r"the chunk '\\ud800b' holds a lone surrogate, U\+D800, .*count again"
    ):
        save_counts(path, counts, stats)
    assert not list(tmp_path.iterdir())


def test_count_table_round_trip_and_errors(tmp_path):
    counts, stats = count_chunks("Hello, world! Hello 日本 😀 \n\n", "gpt4")
    path = tmp_path / "c.counts"
    save_counts(path, counts, stats)
    loaded, meta = load_counts(path)
    assert list(loaded.items()) == list(counts.items())
    assert meta["pattern"] == stats["pattern"] and meta["bytes"] == stats["bytes"]
    with pytest.raises(ValueError, match="pattern"):
        save_counts(path, counts, {})
    (tmp_path / "plain.txt").write_text("not gzip")
    with pytest.raises(ValueError, match="corrupt count table"):
        load_counts(tmp_path / "plain.txt")
    other = tmp_path / "other.counts"
    other.write_bytes(gzip.compress(b'{"format": "something else"}\n'))
    with pytest.raises(ValueError, match="not a count table"):
        load_counts(other)
    broken = tmp_path / "broken.counts"
    broken.write_bytes(
        gzip.compress(b'{"format": "bpe-playground-counts", "version": 2, "pattern": "x"}\n["a", -1]\n')
    )
    with pytest.raises(ValueError, match="line 2"):
        load_counts(broken)


HEADER = b'{"format": "bpe-playground-counts", "version": 2, "pattern": "x"}\n'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" * 100_000 + b"\n", "line 1: corrupt count table (nested too deeply)"),
        (HEADER + b"[" * 100_000 + b"\n", "line 2: corrupt count table (nested too deeply)"),
        (HEADER + b'["a", ' + b"9" * 5000 + b"]\n", "line 2: corrupt count table (Exceeds the limit"),
        (HEADER + b'["a", true]\n', "line 2 is not a [chunk, count] pair"),
        (  # 'chunk counts must be integers from 1 to 2**63 - 1', naming no file, from the trainer
            HEADER + b'["ab", 18446744073709551616]\n',
            "line 2: the count 18446744073709551616 is over 2**63 - 1",
        ),
        (HEADER + b'["ab", 5]\n["ab", 9223372036854775805]\n', "line 3: the count 9223372036854775810"),
        (HEADER + b'["ab", 2]\n["x\\ud800y", 3]\n', "the chunk 'x\\ud800y' holds a lone surrogate"),
        (
            b'{"format": "bpe-playground-counts", "version": 2}\n',
            "'pattern' (and 'pattern_name') must be strings",
        ),
        (b'{"format": "bpe-playground-counts", "version": 2, "pattern": 5}\n', "must be strings"),
        (  # training took the name and said "counted with pattern 'gpt2', not 'gpt2'"
            b'{"format": "bpe-playground-counts", "version": 2, "pattern": "x", "pattern_name": "gpt2"}\n',
            "the header's pattern_name 'gpt2' is not the name of its pattern 'x'; count the corpus again",
        ),
        (
            b"a" * (MAX_HEADER_CHARS + 10),
            "the header line is over 1,048,576 characters",
        ),  # a gzip bomb's line
    ],
)
def test_hostile_count_tables_are_value_errors_naming_the_line(tmp_path, content, message):
    """Each was a RecursionError, TypeError or KeyError traceback, or a silently accepted count."""
    path = tmp_path / "hostile.counts"
    path.write_bytes(gzip.compress(content))
    with pytest.raises(ValueError, match=re.escape(f"{path}: ") + ".*" + re.escape(message)):
        load_counts(path)


def test_a_count_table_that_is_a_pipe_or_device_is_refused_not_read(tmp_path):
    """`train --counts FIFO` blocked for ever waiting for a writer, and a table on a pipe was
    read twice by `train` (its pattern, then its counts): 'line 1: corrupt count table'."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for path in (tmp_path / "fifo", Path("/dev/zero"), Path("/dev/null")):
        with pytest.raises(
            ValueError, match=re.escape(f"{path}: not a regular file (a device, pipe or socket)")
        ):
            load_counts(path)
    with pytest.raises(ValueError, match="folder: is a directory, not a count table"):
        load_counts(tmp_path / "folder")


def test_a_count_table_that_expands_like_a_gzip_bomb_is_refused_before_memory_fills(tmp_path, monkeypatch):
    """A data line that never ends (2 MB of one letter, 2 KB gzipped) was read whole: a real bomb
    fills the memory. Real tables expand 3-4x, so they read as before."""
    import tokenizer.tables as tables

    monkeypatch.setattr(tables, "MIN_EXPANDED_BYTES", 1 << 16)
    bomb = tmp_path / "bomb.counts"
    bomb.write_bytes(gzip.compress(HEADER + b'["' + b"a" * (2 << 20)))
    with pytest.raises(
        ValueError, match=re.escape(f"{bomb}: expands to over 200 times its size after line 1")
    ):
        load_counts(bomb)
    table = tmp_path / "real.counts"
    counts, stats = count_chunks(corpus_file("taylorswift.txt"), "gpt4")
    save_counts(table, counts, stats)
    assert load_counts(table)[0] == counts


def test_count_table_is_compact(tmp_path):
    path = corpus_file("taylorswift.txt")
    counts, stats = count_chunks(path, "gpt4")
    table = tmp_path / "t.counts"
    save_counts(table, counts, stats)
    assert table.stat().st_size < path.stat().st_size / 3


def test_table_cap_changes_nothing_while_the_table_fits():
    path = corpus_file("tinyshakespeare.txt")
    exact, _ = count_chunks(path, "gpt4", workers=1)
    capped, stats = count_chunks(path, "gpt4", workers=1, max_chunks=len(exact))
    assert list(capped.items()) == list(exact.items())
    assert stats["max_chunks"] == len(exact) and stats["capped_chunks"] == 0


@pytest.mark.parametrize(
    "name,workers,max_chunks",
    [("tinyshakespeare.txt", 1, 3000), ("pg_en_medium.txt", 2, 20_000), ("udhr_sample.txt", 1, 5000)],
)
def test_table_cap_bounds_the_table_and_keeps_the_frequent_chunks(name, workers, max_chunks):
    """Serial counting caps after each block, parallel after each range: the table never ends
    longer than the cap, no count is above the truth, and the frequent chunks are all there."""
    path = corpus_file(name)
    exact, _ = count_chunks(path, "gpt4", workers=workers)
    capped, stats = count_chunks(path, "gpt4", workers=workers, max_chunks=max_chunks)
    assert len(exact) > max_chunks >= len(capped)
    assert stats["capped_chunks"] > 0 and stats["cap_floor"] >= 1
    assert all(n <= exact[chunk] for chunk, n in capped.items())
    top = sorted(exact, key=exact.__getitem__, reverse=True)[:50]
    assert all(chunk in capped for chunk in top)
    order = {chunk: i for i, chunk in enumerate(exact)}  # the most frequent keep their order
    kept = [chunk for chunk in capped if chunk in top]
    assert kept == sorted(kept, key=order.__getitem__)


def test_table_cap_on_documents_and_bad_values():
    docs = [f"doc {i} word{i} shared words here" for i in range(2000)]
    capped, stats = count_chunks(docs, "gpt4", max_chunks=100)
    assert len(capped) <= 100 and capped[" shared"] == 2000
    for bad in (0, 1, -5, 2.5, "10", True):
        with pytest.raises(ValueError, match="max_chunks must be an integer"):
            count_chunks("some text", "gpt4", max_chunks=bad)


def test_a_glob_that_reaches_a_file_twice_through_a_symlink_is_refused(tmp_path):
    """`count 'data/**/*.txt'` with a link data/a/up -> .. counted a 12-byte file 41 times (the
    glob followed the link until the path was too long); with a second link, data/b/also_a ->
    ../a, the glob's paths branched at every level and it ran for minutes."""
    (tmp_path / "data" / "a").mkdir(parents=True)
    (tmp_path / "data" / "b").mkdir()
    (tmp_path / "data" / "a" / "x.txt").write_text("hello world\n", encoding="utf-8")
    (tmp_path / "data" / "b" / "y.txt").write_text("other text\n", encoding="utf-8")
    every = str(tmp_path / "data" / "**" / "*.txt")
    assert streaming.expand_inputs([every]) == [
        tmp_path / "data" / "a" / "x.txt",
        tmp_path / "data" / "b" / "y.txt",
    ]
    (tmp_path / "data" / "a" / "up").symlink_to("..")
    (tmp_path / "data" / "b" / "also_a").symlink_to("../a")
    with pytest.raises(
        ValueError, match=r"reaches the file .*\.txt a second time, as .*: through a symbolic link"
    ):
        streaming.expand_inputs([every])
    x = str(tmp_path / "data" / "a" / "x.txt")  # named twice, a file is read twice, as before
    assert streaming.expand_inputs([x, x]) == [Path(x), Path(x)]


def test_a_count_table_with_a_damaged_byte_is_a_value_error_naming_it(tmp_path):
    """One byte flipped inside a table's deflate stream raised zlib.error ('invalid distance
    too far back') as a traceback from `train --counts`; a cut-off table already said 'corrupt'."""
    counts, stats = count_chunks(corpus_file("taylorswift.txt"), "gpt4")
    table = tmp_path / "t.counts"
    save_counts(table, counts, stats)
    data = table.read_bytes()
    damaged = tmp_path / "damaged.counts"
    errors = set()
    for at in range(200, 260):
        damaged.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])
        with pytest.raises(ValueError, match=re.escape(f"{damaged}: ")) as caught:
            load_counts(damaged)
        errors.add("corrupt count table" in str(caught.value) or "line" in str(caught.value))
    assert errors == {True}


def test_cli_count_takes_a_custom_regex_as_train_does(tmp_path, capsys):
    """`train --regex R` is how a custom split is given (the README: --pattern takes a name only),
    but `count FILE --regex R -o c` failed with 'unrecognized arguments: --regex' (exit 2): count
    knew only --pattern, where a regex was read as one. Both spellings now count the same table."""
    src = tmp_path / "swift.txt"
    src.write_text((CORPORA / "taylorswift.txt").read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    regex = r"\p{L}+|\p{N}+|\s+|\S"
    table = tmp_path / "swift.counts"
    assert cli_main(["count", str(src), "--regex", regex, "-q", "-o", str(table)]) == 0
    out = tmp_path / "swift"
    assert (
        cli_main(["train", "--counts", str(table), "--regex", regex, "-v", "300", "-q", "-o", str(out)]) == 0
    )
    assert Tokenizer.load(out).merges == train(src.read_text(), 300, regex=regex).merges
    assert cli_main(["count", str(src), "--pattern", regex, "-q", "-o", str(tmp_path / "old.counts")]) == 0
    assert load_counts(tmp_path / "old.counts")[0] == load_counts(table)[0]
    capsys.readouterr()
    assert cli_main(["count", str(src), "--pattern", "gpt2", "--regex", regex, "-o", str(table)]) == 2
    assert "not both" in capsys.readouterr().err


# ----- a str corpus that names a file ---------------------------------------------------------


def test_a_str_naming_a_file_warns_at_the_callers_line(tmp_path, monkeypatch):
    """train("corpus.txt", ...) learns the 10 characters of the name: a warning says so and how
    to read the file, pointing at the user's line (not at a line inside the package)."""
    monkeypatch.chdir(tmp_path)
    Path("corpus.txt").write_text("hello world " * 50)
    with pytest.warns(UserWarning, match=r"pathlib\.Path\('corpus\.txt'\)") as caught:
        tok = train("corpus.txt", 260)
    assert caught[0].filename == __file__
    assert tok.decode(tok.encode("corpus.txt")) == "corpus.txt"  # still the text, as documented
    with pytest.warns(UserWarning, match="strs name files") as caught:
        count_chunks(["corpus.txt", "corpus.txt"])
    assert caught[0].filename == __file__


@pytest.mark.parametrize(
    "corpus",
    ["hello world", "corpus.txt\n", ["corpus.txt", "some text"], ["missing.txt"], [], "", "x" * 5000],
)
def test_no_warning_for_text_that_names_no_file(corpus, tmp_path, monkeypatch, recwarn):
    monkeypatch.chdir(tmp_path)
    Path("corpus.txt").write_text("hello")
    count_chunks(corpus)
    assert not [w for w in recwarn if "names a file" in str(w.message) or "name files" in str(w.message)]


def test_a_path_corpus_reads_the_file_without_warning(tmp_path, recwarn):
    path = tmp_path / "corpus.txt"
    path.write_text("hello world")
    counts, _ = count_chunks(path)
    assert counts == {"hello": 1, " world": 1}
    assert not recwarn.list
