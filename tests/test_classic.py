"""Classic BPE against subword-nmt (the oracle), merge for merge and segment for segment."""

from __future__ import annotations

import codecs
import contextlib
import io
import re
import subprocess
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tokenizer import classic
from tokenizer.cli import main

learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")

MERGE_COUNTS = [100, 1000, 5000]


def corpus(name: str, limit: int | None = None, start: int = 0) -> str:
    """A corpus file, optionally `limit` characters from `start`, cut back to whole lines."""
    text = (CORPORA / name).read_text(encoding="utf-8")
    if limit is None:
        return text
    part = text[start : start + limit]
    return part[: part.rfind("\n") + 1]


def subword_nmt_learn(text: str, num_symbols: int, **kwargs) -> list[tuple[str, str]]:
    """Run subword-nmt's learn_bpe as its command line does (a codecs reader over the bytes)."""
    infile = codecs.getreader("utf-8")(io.BytesIO(text.encode("utf-8")))
    outfile = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        learn_bpe.learn_bpe(infile, outfile, num_symbols, **kwargs)
    header, *lines = outfile.getvalue().split("\n")
    assert header == "#version: 0.2"
    return [tuple(line.split(" ")) for line in lines if line]


def subword_nmt_apply(codes_path: Path, text: str, separator: str, merges: int = -1) -> str:
    with codecs.open(str(codes_path), encoding="utf-8") as codes:
        bpe = apply_bpe.BPE(codes, merges=merges, separator=separator)
    return "".join(bpe.process_line(line) for line in text.splitlines(keepends=True))


@pytest.fixture(scope="module")
def taylorswift() -> str:
    return corpus("taylorswift.txt")


@pytest.fixture(scope="module")
def gutenberg() -> str:
    return corpus("pg_en_medium.txt", 1_000_000)


@pytest.fixture(scope="module")
def reference_merges(taylorswift: str, gutenberg: str) -> dict[str, list[tuple[str, str]]]:
    # subword-nmt's merges for N symbols are the first N of a longer run (nothing in its loop
    # depends on the total), so one run of the largest count serves all counts.
    return {
        "taylorswift": subword_nmt_learn(taylorswift, max(MERGE_COUNTS)),
        "gutenberg": subword_nmt_learn(gutenberg, max(MERGE_COUNTS)),
    }


@pytest.mark.parametrize("num_merges", MERGE_COUNTS)
@pytest.mark.parametrize("name", ["taylorswift", "gutenberg"])
def test_merges_identical_to_subword_nmt(name, num_merges, reference_merges, taylorswift, gutenberg):
    text = {"taylorswift": taylorswift, "gutenberg": gutenberg}[name]
    expected = reference_merges[name][:num_merges]
    assert len(expected) == num_merges
    assert classic.learn(text, num_merges) == expected


def test_merge_count_prefix_matches_subword_nmt_run(taylorswift):
    # The shortcut in `reference_merges` assumes prefixes; check it once for real.
    assert subword_nmt_learn(taylorswift, 300) == classic.learn(taylorswift, 5000)[:300]


def test_min_frequency_stop_and_total_symbols_match_subword_nmt():
    text = corpus("tinyshakespeare.txt", 20_000)
    for kwargs in [{"min_frequency": 5}, {"min_frequency": 1}, {"total_symbols": True}]:
        expected = subword_nmt_learn(text, 1000, **kwargs)
        ours = classic.learn(text, 1000, **kwargs)
        assert ours == expected, kwargs
    assert len(classic.learn(text, 1000, min_frequency=5)) < 1000  # it did stop early


def test_dict_input_matches_subword_nmt(tmp_path):
    counts = classic.count_words(corpus("tinyshakespeare.txt", 50_000))
    dict_text = "".join(f"{word} {count}\n" for word, count in counts.items())
    infile = codecs.getreader("utf-8")(io.BytesIO(dict_text.encode("utf-8")))
    outfile = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        learn_bpe.learn_bpe(infile, outfile, 500, is_dict=True)
    expected = [tuple(line.split(" ")) for line in outfile.getvalue().split("\n")[1:] if line]
    assert classic.learn(classic.parse_word_counts(dict_text), 500) == expected


def test_lines_split_like_subword_nmt_command_line():
    # codecs (subword-nmt's reader) breaks lines at \x0c, \x1e, \x85, \u2028 too, keeping the
    # break character on the line; `strip('\r\n ')` then leaves it inside the word.
    text = "ab\x0cab ab\u2028abc abc\x1eab\r\nab\x85 x\tab ab\n" * 3
    assert classic.learn(text, 20, min_frequency=1) == subword_nmt_learn(text, 20, min_frequency=1)
    assert classic.count_words(text)["ab\x0c"] == 3


def test_tabs_inside_words_learn_subword_nmt_merges():
    # subword-nmt merges with a regex whose (?<!\S) guard also fires after the tab inside the
    # symbol 'de\t': at its 8th merge its counts part from the true ones ('de d</w>' was
    # learnt there). Found on C and JavaScript source (tabs), now followed merge for merge.
    text = "ded exx dede\td e\txx e\tx\n"
    expected = subword_nmt_learn(text, 10, min_frequency=1)
    assert classic.learn(text, 10, min_frequency=1) == expected
    assert [step["pair"] for step in classic.learn_steps(text, 10, 1, top=5)] == expected
    c_source = corpus("code_c.txt", 60_000)
    assert classic.learn(c_source, 400) == subword_nmt_learn(c_source, 400)


words = st.text(alphabet="abcde", min_size=1, max_size=8)
lines = st.lists(words, min_size=0, max_size=12).map(" ".join)
texts = st.lists(lines, min_size=1, max_size=12).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(text=texts, num_merges=st.integers(0, 40), min_frequency=st.integers(1, 3))
def test_merges_match_subword_nmt_on_tie_heavy_texts(text, num_merges, min_frequency):
    if not any(len(word) > 1 for word in text.split()):
        return  # subword-nmt crashes (max() of no pairs); we learn nothing
    assert classic.learn(text, num_merges, min_frequency) == subword_nmt_learn(
        text, num_merges, min_frequency=min_frequency
    )


def recount(word_counts: Counter[str], merges: list[tuple[str, str]]) -> Counter[tuple[str, str]]:
    """Pair counts after `merges`, recomputed from scratch (the trace's oracle)."""
    pairs: Counter[tuple[str, str]] = Counter()
    for word, count in word_counts.items():
        symbols = classic.word_symbols(word)
        for left, right in merges:
            symbols = classic._merge_symbols(symbols, left, right)
        for pair in pairwise(symbols):
            pairs[pair] += count
    return pairs


def obvious_learn(text: str, num_merges: int, min_frequency: int) -> list[tuple[str, str]]:
    """The algorithm as the paper states it: recount every pair, merge the best, repeat."""
    word_counts = classic.count_words(text)
    merges: list[tuple[str, str]] = []
    for _ in range(num_merges):
        counts = recount(word_counts, merges)
        if not counts:
            break
        count, pair = max((c, p) for p, c in counts.items())
        if count < min_frequency:
            break
        merges.append(pair)
    return merges


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(alphabet="aab\t\xa0 \n", max_size=120),
    num_merges=st.integers(0, 25),
    min_frequency=st.integers(1, 2),
)
def test_merges_equal_the_obvious_algorithm_with_any_whitespace_in_words(text, num_merges, min_frequency):
    # Tabs and no-break spaces stay inside words; here subword-nmt's regex merge can misfire
    # (see the module docstring), so the oracle is the plain recount-every-step algorithm.
    assert classic.learn(text, num_merges, min_frequency) == obvious_learn(text, num_merges, min_frequency)


def test_subword_nmt_regex_merge_quirk_next_to_a_tab():
    # With tabs inside words, subword-nmt's `(?<!\S)a b(?!\S)` merge also fires where a
    # symbol continues with a tab (`b\t`), after which its statistics count pairs that are
    # not there: it goes on to merge ('a', 'b\t'), which occurs once. Issue 8 asks for
    # subword-nmt's merges, so its loop is followed from there (the paper's algorithm stops).
    text = "\tb\t\t abab\t\t b\tb bb\tbbb \t\tab\t ab\taaa \taabba\n"
    algorithm = [("b", "\t"), ("a", "b"), ("b\t", "\t</w>")]
    assert obvious_learn(text, 30, 2) == algorithm
    assert (
        classic.learn(text, 30) == subword_nmt_learn(text, 30) == [*algorithm, ("a", "b\t"), ("ab", "ab\t")]
    )


@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_trace_counts_equal_full_recount_at_every_step(text):
    word_counts = classic.count_words(text)
    done: list[tuple[str, str]] = []
    for step in classic.learn_steps(text, 30, min_frequency=1, top=5):
        counts = recount(word_counts, done)
        ranked = sorted(((c, p) for p, c in counts.items() if c > 0), reverse=True)
        assert step["step"] == len(done)
        assert step["top_pairs"] == [(p, c) for c, p in ranked[:5]]
        assert (step["pair"], step["count"]) == step["top_pairs"][0]
        assert step["n_tied"] == sum(1 for c, _ in ranked if c == step["count"]) - 1
        assert step["tied_with"] == [p for c, p in ranked[1:5] if c == step["count"]]
        done.append(step["pair"])


@settings(max_examples=60, deadline=None)
@given(text=texts, k=st.integers(0, 30))
def test_segmenting_with_the_first_k_merges_renders_the_corpus_at_step_k(text, k):
    # What the Learn view relies on: apply(merges[:k]) shows the training words as they
    # stand after k merges.
    merges = classic.learn(text, k, min_frequency=1)
    segmenter = classic.Segmenter(merges)
    for word in classic.count_words(text):
        symbols = classic.word_symbols(word)
        for left, right in merges:
            symbols = classic._merge_symbols(symbols, left, right)
        assert segmenter.segment_word(word) == (*symbols[:-1], symbols[-1].removesuffix("</w>"))


def test_trace_of_the_seed_sentence():
    steps = list(classic.learn_steps("nation station ration", 3, top=3))
    # 'a t', 't i', 'i o', 'o n</w>' all occur 3 times: the lexically largest, 't i', wins.
    assert steps[0]["pair"] == ("t", "i") and steps[0]["count"] == 3
    assert steps[0]["tied_with"] == [("o", "n</w>"), ("i", "o")]
    assert steps[0]["n_tied"] == 3
    assert [s["pair"] for s in steps] == classic.learn("nation station ration", 3)


@pytest.fixture(scope="module")
def codes_file(tmp_path_factory, taylorswift) -> Path:
    path = tmp_path_factory.mktemp("classic") / "codes.txt"
    classic.write_codes(path, classic.learn(taylorswift, 2000))
    return path


@pytest.mark.parametrize("separator", ["@@", None])
def test_apply_identical_to_subword_nmt_on_held_out_text(codes_file, separator):
    held_out = corpus("tinyshakespeare.txt", 40_000) + corpus("pg_en_medium.txt", 40_000, start=3_000_000)
    held_out += corpus("udhr_sample.txt", 10_000) + "  lead  and trail \n\n   \nend"
    merges = classic.read_codes(codes_file)
    expected = subword_nmt_apply(codes_file, held_out, separator or "")
    assert classic.apply(held_out, merges, separator) == expected
    if separator:
        assert "@@ " in expected


def test_codes_file_format_round_trips_and_reads_subword_nmt_output(tmp_path, taylorswift):
    merges = classic.learn(taylorswift, 300)
    path = tmp_path / "codes.txt"
    classic.write_codes(path, merges)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#version: 0.2\n") and text.count("\n") == 301
    assert classic.read_codes(path) == merges
    outfile = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        learn_bpe.learn_bpe(codecs.getreader("utf-8")(io.BytesIO(taylorswift.encode())), outfile, 300)
    assert outfile.getvalue() == text
    assert [p.name for p in tmp_path.iterdir()] == ["codes.txt"]  # no temp file left behind


@pytest.mark.parametrize(
    "text, problem",
    [
        ("a b\n", "header"),
        ("#version: 0.1\na b\n", "version 0.1"),
        ("#version: 0.2\na b\nabc\n", ":3"),
    ],
)
def test_bad_codes_raise_value_error(text, problem):
    with pytest.raises(ValueError, match=problem):
        classic.parse_codes(text, "codes.txt")


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="num_merges"):
        classic.learn("a b", -1)
    with pytest.raises(ValueError, match="min_frequency"):
        classic.learn("a b", 5, min_frequency=0)
    with pytest.raises(ValueError, match=":2"):
        classic.parse_word_counts("low 5\nlower five\n")
    with pytest.raises(ValueError, match="cannot be written"):
        classic.format_codes([("a b", "c")])
    assert classic.learn("a b c", 10) == []  # no pairs: nothing to learn (subword-nmt crashes)


def test_cli_learn_then_apply(tmp_path, capsys, monkeypatch, taylorswift):
    source = tmp_path / "in.txt"
    source.write_text(taylorswift, encoding="utf-8")
    codes = tmp_path / "codes.txt"
    assert main(["classic", "learn", "--merges", "500", str(source), "-o", str(codes)]) == 0
    assert classic.read_codes(codes) == classic.learn(taylorswift, 500)

    sample = "Taylor Swift's lowest-charting re-recordings\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(sample.encode("utf-8")), encoding="utf-8"))
    assert main(["classic", "apply", "--codes", str(codes), "--separator", "@@"]) == 0
    assert capsys.readouterr().out == subword_nmt_apply(codes, sample, "@@")

    out = tmp_path / "out.txt"
    assert main(["classic", "apply", "--codes", str(codes), str(source), "-o", str(out), "-s", ""]) == 0
    assert out.read_text(encoding="utf-8") == classic.apply(taylorswift, classic.read_codes(codes))
    # subword-nmt's default separator is @@: `apply-bpe -c codes < in` runs unchanged (it gave
    # the units without any mark, silently other output)
    assert main(["classic", "apply", "--codes", str(codes), str(source), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == subword_nmt_apply(codes, taylorswift, "@@")
    for m in (0, 1, 37, 499, 500, 10_000, -1, -5):  # apply-bpe's -m: the first m merges (-1: all)
        assert main(["classic", "apply", "-c", str(codes), str(source), "-o", str(out), "-m", str(m)]) == 0
        assert out.read_text(encoding="utf-8") == subword_nmt_apply(codes, taylorswift, "@@", merges=m), m

    assert main(["classic", "apply", "--codes", str(source), str(source)]) == 2
    assert "header" in capsys.readouterr().err


SUBWORD_NMT = "import sys; from subword_nmt.subword_nmt import main; sys.exit(main())"  # its console script


def test_cli_apply_splits_stdin_as_the_subword_nmt_command_does(tmp_path, capsys, monkeypatch):
    """The `subword-nmt` command (the README's `= subword-nmt apply-bpe -c codes.txt`, and
    subword-nmt's own documented usage) wraps stdin in a codecs reader, as its files: lines
    break as str.splitlines breaks them and keep their \\r. Only the legacy `python -m
    subword_nmt.apply_bpe` reads stdin with universal newlines, and following it made
    `classic apply -c codes -s @@ < text` differ from the command: 'v@@ t@@ \\x0b@@ x' where
    it gives 'v@@ t@@ \\x0bx' for 'vt\\x0bx', and CRLF lines lost their \\r."""
    text = "hello\x00world tab\there\r\nline\u2028sep vt\x0bx ff\x0cx fs\x1cx nel\x85x\rlast \u2029p\n\n end"
    codes = tmp_path / "codes.txt"
    codes.write_text("#version: 0.2\nv t\nh e\nx </w>\ne l\n", encoding="utf-8")
    want = subprocess.run(
        [sys.executable, "-c", SUBWORD_NMT, "apply-bpe", "-c", str(codes)],
        input=text.encode("utf-8"),
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    assert "t@@ \x0bx" in want and "\r\n" in want
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    assert main(["classic", "apply", "-c", str(codes), "-s", "@@"]) == 0
    assert capsys.readouterr().out == want
    source = tmp_path / "in.txt"  # a file is read the same way (subword-nmt's -i: codecs too)
    source.write_bytes(text.encode("utf-8"))
    assert main(["classic", "apply", "-c", str(codes), "-s", "@@", str(source)]) == 0
    assert capsys.readouterr().out == want == subword_nmt_apply(codes, text, "@@")


def test_cli_takes_subword_nmts_own_spellings(tmp_path, capsys, monkeypatch, taylorswift):
    """`learn-bpe -s N < in > codes` and `-i in -o codes`/`--symbols`: learn wanted INPUT and
    -o, and knew neither -i nor --symbols, so a subword-nmt user's command failed."""
    text = taylorswift[:50_000]

    def stdin(data: str) -> None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data.encode("utf-8")), encoding="utf-8"))

    stdin(text)
    assert main(["classic", "learn", "-s", "300"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == [" ".join(pair) for pair in subword_nmt_learn(text, 300)]
    source, codes = tmp_path / "in.txt", tmp_path / "codes.txt"
    source.write_text(text, encoding="utf-8")
    assert main(["classic", "learn", "--symbols", "300", "-i", str(source), "-o", str(codes)]) == 0
    assert codes.read_text(encoding="utf-8") == out
    assert main(["classic", "apply", "-c", str(codes), "-i", str(source), "-s", "@@"]) == 0
    assert capsys.readouterr().out == subword_nmt_apply(codes, text, "@@")
    assert main(["classic", "apply", "-c", str(codes), "-i", str(source), str(source)]) == 2
    assert "as INPUT or as --input, not both" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [[], ["--min-frequency", "3", "-t"]])
def test_cli_learn_verbose_writes_learn_bpes_lines_and_takes_num_workers(
    tmp_path, capsys, taylorswift, extra
):
    """`learn-bpe -v` (each merge with its frequency on stderr) and `--num-workers N` were
    'unrecognized arguments'; -v now writes subword-nmt's lines, word for word."""
    text = taylorswift[:40_000]
    source = tmp_path / "in.txt"
    source.write_text(text, encoding="utf-8")
    infile = codecs.getreader("utf-8")(io.BytesIO(text.encode("utf-8")))
    outfile, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr):
        learn_bpe.learn_bpe(
            infile,
            outfile,
            400,
            verbose=True,
            min_frequency=int(extra[1]) if extra else 2,
            total_symbols=bool(extra),
        )
    want = re.findall(r"pair \d+: .*? \(frequency \d+\)", stderr.getvalue())  # tqdm's bar shares a line
    assert len(want) > 100
    assert main(["classic", "learn", "-s", "400", "-i", str(source), "-v", "--num-workers", "2", *extra]) == 0
    out, err = capsys.readouterr()
    assert out == outfile.getvalue()
    assert [line for line in err.splitlines() if line.startswith("pair ")] == want


def test_cli_apply_refuses_codes_and_text_both_on_stdin(capsys, monkeypatch):
    """`classic apply --codes - < codes.txt` read the codes from stdin, then the text from the
    same, now empty, stdin: an empty output and exit 0."""
    codes = "#version: 0.2\nt h\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(codes.encode("utf-8")), encoding="utf-8"))
    assert main(["classic", "apply", "--codes", "-"]) == 2
    assert "--codes - and INPUT both read stdin" in capsys.readouterr().err


@pytest.mark.parametrize(
    "call, error, fragment",
    [
        (lambda: classic.learn(b"low lower", 5), TypeError, "decode bytes first"),
        (
            lambda: classic.learn(["low lower", None], 5),
            TypeError,
            "corpus line 1: expected str, got NoneType",
        ),
        (lambda: classic.learn(None, 5), TypeError, "not NoneType"),
        (lambda: classic.learn({"low": "5"}, 5), ValueError, "'low' has count '5'"),
        (lambda: classic.learn({"low": True}, 5), ValueError, "'low' has count True"),
        (lambda: classic.learn("low lower", None), ValueError, "num_merges must be an integer"),
        (lambda: classic.learn("low lower", 1.5), ValueError, "num_merges must be an integer"),
        (
            lambda: classic.learn("low lower", 5, min_frequency=1.5),
            ValueError,
            "min_frequency must be an integer",
        ),
        (lambda: classic.apply(None, [("l", "o")]), TypeError, "text must be a str, not NoneType"),
        (lambda: classic.apply("low", [("l",)]), ValueError, "merge 0 is ('l',)"),
        (lambda: classic.apply("low", "lo w</w>"), TypeError, "merges must be a list of"),
        (lambda: classic.apply("low", [(1, 2)]), ValueError, "merge 0 is (1, 2)"),
        (lambda: classic.apply("low", [("l", "o")], separator=5), TypeError, "separator must be a str"),
    ],
)
def test_hostile_arguments_are_named_errors_not_crashes(call, error, fragment):
    """classic.learn(b"low lower", 5) and learn(["low", None], 5) raised AttributeError ('int' object
    has no attribute 'strip'), apply(None, ...) AttributeError, apply("low", [("l",)]) IndexError,
    apply("low", "lo w</w>") read the string as pairs of its characters (IndexError), a count "5"
    failed deep in the learner; each is now a TypeError or ValueError naming the argument."""
    with pytest.raises(error, match=re.escape(fragment)):
        call()
    assert classic.learn("low lower lowest", np.int64(2)) == classic.learn("low lower lowest", 2)


def test_cli_learn_negative_merges_names_the_flag(tmp_path, capsys):
    """`classic learn -s -3 corpus.txt` said "num_merges must be an integer >= 0", a keyword the
    user never typed, and only after reading the whole corpus; the error names --merges, before
    any input is read (the missing file below is never opened)."""
    assert main(["classic", "learn", "-s", "-3", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert "--merges must be an integer >= 0" in err and "num_merges" not in err
