"""tokenizer/regex_check.py: a custom split regex is refused with a fix, or checked against a sample.

Each refusal is checked for what it says (the problem and the fix), on both engines the
library can compile with (the `regex` package, and the stdlib `re` translation the page uses).
"""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenizer import _re_probe, patterns, regex_check
from tokenizer._re_witness import repeat_texts
from tokenizer.patterns import PATTERNS
from tokenizer.regex_check import (
    LONG_PROBE_SECONDS,
    MAX_EXPANDED_ITEMS,
    MAX_GROUP_DEPTH,
    MAX_REGEX_CHARS,
    PROBE_SECONDS,
    RE_PROBE_SECONDS,
    check_split_regex,
)

# seconds a check may take at most: its probes' budgets (a regex that fails the long runs, such
# as .+0|0, quadratic on a 20,000-character run, uses all of it; the slowest runs doubled have
# a budget as large) and a second to spare
CHECK_SECONDS = PROBE_SECONDS + RE_PROBE_SECONDS + 2 * LONG_PROBE_SECONDS + 1.0


@pytest.fixture(params=["regex", "re"])
def engine(request, monkeypatch):
    """Runs the test with "auto" picking the `regex` package, then the stdlib translation."""
    if request.param == "regex" and not patterns.regex_importable():
        pytest.skip("the regex package is not installed")
    monkeypatch.setattr(patterns, "default_engine", lambda *a, **k: request.param)
    patterns._compile.cache_clear()
    yield request.param
    patterns._compile.cache_clear()


@pytest.mark.parametrize(
    "source, fragments",
    [
        ("(a", ["invalid regex", "missing )", "fix the syntax"]),
        ("a*", ["empty string", "at least one character"]),
        ("x|", ["empty string"]),
        ("(a)b", ["1 capturing group", "(?:...)"]),
        (r"\w+|(\s)(x)", ["2 capturing groups", "non-capturing"]),
        (r"(?P<word>\w+)", ["1 capturing group", "(?P<name>...)"]),
        ("", ["is empty", "'none'"]),
        ("gpt4", ["name of a built-in pattern", "(?:gpt4)"]),
        ("none", ["name of a built-in pattern"]),
        # it reads as a misspelled name: the tokenizer trained with it would not load
        ("gtp4", ["reads as a pattern name", "(?:gtp4)"]),
        ("GPT4", ["reads as a pattern name"]),
        ("a" * (MAX_REGEX_CHARS + 1), [f"at most {MAX_REGEX_CHARS:,}", "shorten"]),
        ("(" * (MAX_GROUP_DEPTH + 1) + "a" + ")" * (MAX_GROUP_DEPTH + 1), ["nests groups", "flatten"]),
        ("(?:ab|c){10000000}", ["expand to 30,000,000 items", "large fixed counts"]),
        ("(?:a{1000}){1000}", ["expand to 1,000,000"]),
        ("a{4000000000}", [f"at most {MAX_EXPANDED_ITEMS:,}"]),
        ("a{99999999999999999999}", ["expand to"]),
        # a \x{...} escape is no count: `regex` has no such escape, and says so
        (r"\x{110000}", ["incomplete escape", "fix the syntax"]),
        (r"\\x{1000000}{1000}", ["expand to"]),  # an escaped backslash, then x repeated
    ],
)
def test_refused_with_the_fix(engine, source, fragments):
    with pytest.raises(ValueError) as info:
        check_split_regex(source)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_a_regex_only_syntax_is_bounded_too():
    """`\\X` has no stdlib translation: its counts are bounded by their product."""
    if not patterns.regex_importable():
        pytest.skip("the regex package is not installed")
    assert check_split_regex(r"\X{2}|\s+") == []
    with pytest.raises(ValueError, match="expand to"):
        check_split_regex(r"\X{100}{100}{100}")


def test_hostile_regexes_are_refused_fast(engine):
    """Each would take seconds to minutes (or crash) inside regex.compile; refused in ms."""
    for source in ["(?:ab|c){10000000}", "[ab]{10000000}", "(?=a{10000000})b", "a{10000000,}"]:
        started = time.perf_counter()
        with pytest.raises(ValueError):
            check_split_regex(source)
        assert time.perf_counter() - started < 0.1, source


SLACK_SECONDS = (
    1.0  # beyond the probe budget: compiling, the other probes, a loaded 2-core CI box (0.3 failed once)
)
CATASTROPHIC = [r"(?:a|a)+b|\s+|\S", r"(?:a|aa)*b|\s+|\S", r"(?:\w|\w)+!|\S", r"(?:\d|\d)+x", "(?:[中]|中)+b"]
# catastrophic only on two alternating characters: every one-character run passes
CATASTROPHIC_ON_PAIRS = [r"(?:a|b|ab)+c|\s+|\S", r"(?:xy|x(?:y))+z|\s+|\S"]


@pytest.mark.parametrize("source", CATASTROPHIC)
def test_catastrophic_backtracking_is_refused_within_the_probe_budget(source):
    """Each took minutes on a run of 28 to 48 characters (`(?:a|a)+b`: 49 s on 28 'a's), in the
    check itself with a sample, then in training, a job or a server thread; never interruptible."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    started = time.perf_counter()
    with pytest.raises(ValueError, match="backtracks catastrophically: on 48 .* in a row"):
        check_split_regex(source)
    assert time.perf_counter() - started < PROBE_SECONDS + SLACK_SECONDS


@pytest.mark.parametrize("source", CATASTROPHIC_ON_PAIRS)
def test_backtracking_on_two_alternating_characters_is_refused_by_the_probes(source):
    """(?:a|b|ab)+c passed the one-character runs and then hung the Learn view on 'abab...'."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    started = time.perf_counter()
    with pytest.raises(
        ValueError, match=r"backtracks catastrophically: on '\w\w' repeated \(48 characters\)"
    ):
        check_split_regex(source)
    assert time.perf_counter() - started < PROBE_SECONDS + SLACK_SECONDS


# finish at once in `regex`, exponential in stdlib `re` (1.1-1.4 s on 24 characters), which the
# page's worker runs: they froze its encoder until the watchdog restarted it
CATASTROPHIC_IN_RE = [r"(?:a+)+b|\s+|\S", r"(?:a*)*b|\s+|\S", r"(?:[a-z]+)*[0-9]|\s+|\S"]


@pytest.mark.parametrize("source", CATASTROPHIC_IN_RE)
def test_backtracking_in_the_pages_re_is_refused_by_a_child_probe(source):
    if not patterns.regex_importable():
        pytest.skip("the child probe runs where the regex package is the engine")
    assert patterns.compile_pattern(source).findall("a" * 48 + "\0") is not None  # regex: at once
    started = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=r"catastrophically in Python's re \(the engine the page's encoder runs\): on 48 'a' in a row",
    ):
        check_split_regex(source)
    assert time.perf_counter() - started < PROBE_SECONDS + _re_probe.STARTUP_SECONDS


# polynomial: microseconds on 48 characters, minutes on a word of 100,000 (\w*x: each start scans
# the rest of the run, then \w takes one character; \w*\w*x tries every split as well)
POLYNOMIAL = [r"\w*x|\w|\s+|\S", r"\w*\w*x|\w|\s+|\S", r"[a-z]+[0-9]|[a-z]|\s+|\S"]


@pytest.mark.parametrize("source", POLYNOMIAL)
def test_backtracking_that_grows_with_a_power_of_the_run_is_refused(source):
    """A 100,000-letter word held the command line for minutes (the sample had no long word, so
    the sample check passed); runs of LONG_PROBE_CHARS show it in about a second."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    assert patterns.compile_pattern(source).findall("a" * 48 + "\0x1") is not None  # 48: at once
    with pytest.raises(ValueError, match=r"backtracks on long runs: 20,000 '\w' in a row took over 1.0 s"):
        check_split_regex(source)


# polynomial on two kinds of character in turn, linear on a run of either: a sentence with no
# full stop, words and spaces with no x, a pair of the regex's literals without the c
ALTERNATING = [r"\w+(?:\s\w+)*\.|\w+|\s+|\S", r"(?:\s|\w)*x|\w+|\s+|\S", r"(?:ab)*c|\S"]


@pytest.mark.parametrize(
    "source",
    [
        *ALTERNATING,
        # runs of the regex's own words: no run of one kind, of two, or of a pair of its literals
        # feeds the repeat; (?:foo )*bar split "foo foo ..." in 3.7 s at 40,000 characters
        r"(?:foo )*bar|\w+|\s+|\S",
        r"(?:\w+, )+x|\w+|\s+|\S",
        # the word is not the body's first alternative: 'foo foo ...' took 4.2 s at 40,000
        r"(?:x|foo )+y|\w+|\s+|\S",
    ],
)
def test_backtracking_on_long_runs_the_gate_missed_is_refused(source):
    r"""Each passed the gate and then took seconds at 40,000 characters (hours at 1 MB): 'a a a ...'
    (prose without a full stop) held \w+(?:\s\w+)*\. for 1.6 s on 5,000 characters in re, as its
    long runs were of one kind. The long probes now also run alternating kinds and what each
    repeat's body matches ("foo ", "0, ")."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    with pytest.raises(ValueError, match=r"backtracks on long runs: '.+' repeated \(20,000 characters\)"):
        check_split_regex(source)


@pytest.mark.parametrize(
    "source, run",
    [
        (r"q(?:xyw|x(?:yw))+z|\s+|\S", "'q', then 'xyw' repeated"),  # exponential after the q
        (r"<a (?:bc|b(?:c))+>|\w+|\s+|\S", "'<a ', then 'bc' repeated"),
    ],
)
def test_backtracking_on_a_repeat_reached_after_other_text_is_refused(source, run):
    r"""q(?:xyw|x(?:yw))+z|\s+|\S passed the gate and then took 1.7 s on "q" + 24 "xyw" (doubling
    with each one more): every probe run of "xyw" failed at once for want of the q. The long
    probes now also run each repeat's body after a text that leads to it."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    with pytest.raises(ValueError, match=f"backtracks on long runs: {run}"):
        check_split_regex(source)


def test_each_repeat_after_other_text_gives_that_lead():
    assert repeat_texts(r"q(?:xyw|x(?:yw))+z|\s+|\S")[1] == [("q", "xyw")]
    assert repeat_texts(r"ab(?:c(?:de)+f)+g")[1] == [("ab", "cdef"), ("abc", "de")]
    assert repeat_texts(r"(?:foo )*bar|\w+")[1] == []  # the regex's start: the plain runs have it


def test_each_repeat_gives_a_text_its_body_matches():
    assert repeat_texts(r"(?:foo )*bar|\w+")[0] == ["foo "]
    assert repeat_texts(r"(?:[^a-z]b)+c|(?:x{3}y)+")[0] == ["xxxy", " b"]  # longest first
    assert repeat_texts(r"(?:\w+, )+x")[0][0][1:] == ", "
    assert repeat_texts(r"(?:x|foo )+y")[0] == ["foo "]  # each alternative; "x" alone is a kind's run
    assert repeat_texts(r"\w+|\s+|\S")[0] == []  # one-character bodies: the kinds' runs have them
    assert repeat_texts(r"[[:alpha:]]+") == ([], [])  # only the regex package reads it: nothing


ORDINARY = [
    r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+",
    r"\w+|\s+|\S",
    *(PATTERNS[n] for n in ("gpt2", "gpt4", "o200k")),
]


@pytest.mark.parametrize("source", ORDINARY)
def test_ordinary_regexes_pass_every_probe(engine, source):
    """The probes' false refusals stay at zero: what a user would write, and the named patterns'
    own regexes given as custom ones."""
    assert check_split_regex(source, sample="Hello, world! It's 2024.\n\t  naïve 日本語 🙂") == []


@pytest.mark.parametrize(
    "source, message",
    [
        (r"[ ]*x|\s|\S", r"' ' in a row took [\d.]+ s of CPU at 20,000 characters and over 1.0 s at 40,000"),
        (r"[ ]*x|    |\s|\S", r"' ' in a row took [\d.]+ s of CPU at 20,000 characters and .* at 40,000"),
        # no alternative at all: every start scans the rest of a run of a's (2.5 s at 40,000)
        (r"a+$", r"backtracks on long runs: .*'a' in a row"),
    ],
)
def test_a_quadratic_regex_within_the_long_probes_budget_is_refused(source, message):
    r"""[ ]*x|\s|\S spent 0.36 s of the long probes' 1.0 s on 20,000 spaces and passed; it took
    1.4 s on 40,000 and ~15 minutes on 1 MB of spaces (with four spaces taken at a time, 0.09 s,
    then 2.2 s on 100,000). Doubling the run shows the growth."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    with pytest.raises(ValueError, match=message):
        check_split_regex(source)


@pytest.mark.parametrize("source", [*ORDINARY, r"\X"])
def test_ordinary_regexes_grow_linearly_when_their_runs_are_doubled(monkeypatch, source):
    r"""The growth check is no false refusal: run on the slowest runs over 5 ms (\X: ~15 ms each),
    it passes linear regexes (their time doubles, within 2-3%)."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    monkeypatch.setattr(regex_check, "GROWTH_CHECK_SECONDS", 0.005)
    assert check_split_regex(source) == []


@pytest.mark.parametrize(
    "source", [r"\w*x|\w+|\s+|\S", r"\p{L}+|\p{N}+|\s+|\S", r"[a-z]+[0-9]|[a-z]+|\s+|\S"]
)
def test_a_repeat_that_fails_once_per_run_passes(source):
    """The same repeats, but what matches instead takes the whole run: one scan per run, linear."""
    assert check_split_regex(source) == []


def test_the_child_probe_passes_sane_regexes_and_says_when_it_cannot_probe(monkeypatch):
    runs = ("a" * 48 + "\0", "ab" * 24 + "\0")
    assert _re_probe.first_overrun(r"\w+|\s+|\S", runs, 5.0) is None
    assert _re_probe.first_overrun(r"\s+|(?:a|a)+b|\S", runs, 0.3) == 0
    assert _re_probe.first_overrun(r"\s+|(?:ab|a(?:b))+c|\S", ("x",) + runs, 0.3) == 2  # the pair run
    assert _re_probe.first_overrun(r"[a", runs, 5.0) is None  # re refuses it: nothing to probe
    monkeypatch.setattr(_re_probe.sys, "platform", "emscripten")  # Pyodide: no processes
    _re_probe.first_overrun.cache_clear()
    assert _re_probe.first_overrun(r"\s+|(?:a|a)+b|\S", runs, 0.3) is None


def test_the_child_probe_charges_cpu_time_not_a_busy_machines_wall_time(monkeypatch):
    """The child's runs were given 0.25 s of wall time, so on a machine too busy to run it a
    sane regex could be refused as backtracking. The budget is now the child's CPU time: a child
    that gets none is waited for up to STARVED_SECONDS, then refused all the same."""
    assert abs(_re_probe._cpu_seconds(os.getpid()) - time.process_time()) < 0.1
    assert _re_probe._cpu_seconds(-1) is None  # no such process: the wall-clock budget is used
    runs = ("a" * 48 + "\0",)
    monkeypatch.setattr(_re_probe, "_cpu_seconds", lambda pid: 0.0)  # as if never run
    monkeypatch.setattr(_re_probe, "STARVED_SECONDS", 1.5)
    _re_probe.first_overrun.cache_clear()
    started = time.monotonic()
    assert _re_probe.first_overrun(r"\s+|(?:a|a)+b|\S", runs, 0.2) == 0
    assert time.monotonic() - started >= 1.4  # waited for the CPU it was not given
    assert _re_probe.first_overrun(r"\w+|\s+|\S", runs, 0.2) is None
    _re_probe.first_overrun.cache_clear()


def test_a_regex_slow_on_the_sample_alone_is_refused(monkeypatch):
    """Runs of one or two characters do not trip it, 'xyw' repeated does: the sample's bound
    catches it. (The long probes' run of what the repeat matches, 'xyw', now refuses it first;
    without that run, as for a regex only the `regex` package reads, the sample still does.)"""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    monkeypatch.setattr(regex_check, "SAMPLE_SECONDS", 0.2)
    source = r"(?:xyw|x(?:yw))+z|\s+|\S"
    with pytest.raises(ValueError, match="'xyw' repeated"):
        check_split_regex(source)
    monkeypatch.setattr(regex_check, "repeat_texts", lambda source: ([], []))
    assert check_split_regex(source) == []
    with pytest.raises(ValueError, match="did not finish on the first 81 characters of the corpus in 0.2 s"):
        check_split_regex(source, sample="xyw" * 27)


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_builtin_patterns_pass_and_cover_everything(engine, name):
    sample = "Hello, world! It's 2024.\n\t  naïve 日本語 🙂 <|x|>"
    assert check_split_regex(PATTERNS[name], sample=sample) == []


def test_dropped_text_is_a_warning_with_share_and_characters(engine):
    (warning,) = check_split_regex(r"\w+", sample="hello, world!")
    assert "23.1% of the sample" in warning and "3 of 13 characters" in warning
    assert "',', ' ', '!'" in warning or all(repr(c) in warning for c in ", !")
    assert r"|\s+|\S" in warning
    assert check_split_regex(r"\w+|\s+|\S", sample="hello, world!") == []
    assert check_split_regex(r"\w+") == []  # no sample, nothing to measure
    assert check_split_regex(r"\w+", sample="") == []


def test_dropped_astral_and_lookaround(engine):
    (warning,) = check_split_regex(r"\p{L}+", sample="héllo 🙂")
    assert "2 of 7 characters" in warning and "'🙂'" in warning
    # a lookahead match: the counted characters are the dropped ones, not positions
    (warning,) = check_split_regex(r"a(?=b)", sample="ac ab")
    assert "4 of 5 characters" in warning


def test_type_is_checked():
    with pytest.raises(TypeError, match="must be a str"):
        check_split_regex(5)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(source=st.text(alphabet="ab()[]{}|*+?\\^$.:,0123456789PLw<>=!#", max_size=40))
def test_any_source_is_a_value_error_or_passes(source):
    """Fuzzing: never an exception other than ValueError, never slow (.+0|0 took the long
    probe's whole second, which a 1.0 s bound here failed by 0.7 ms)."""
    started = time.perf_counter()
    try:
        warnings = check_split_regex(source, sample="ab ba (a{1})")
    except ValueError as e:
        assert str(e)
    else:
        assert isinstance(warnings, list)
    assert time.perf_counter() - started < CHECK_SECONDS, source


class _Starved:
    """A compiled regex on a machine too busy to run us for a while: the first try of the first
    long run sleeps through its whole timeout (wall time passes, no CPU time is spent) and
    reports a timeout, as the `regex` package does when the process was not scheduled; every
    other try runs."""

    __module__ = "regex"  # what regex_check takes for a regex it can stop

    def __init__(self, compiled) -> None:
        self.compiled, self.starved = compiled, False

    def findall(self, text, timeout=None):
        if len(text) > 1000 and not self.starved:
            self.starved = True
            time.sleep(timeout + 0.01)
            raise TimeoutError("regex timed out")
        return self.compiled.findall(text, timeout=timeout)


def test_a_busy_machine_does_not_refuse_a_linear_regex(monkeypatch):
    r"""The probes' budgets were wall-clock time: on a loaded machine (the fuzzers at nice, load
    4 on 2 cores) `\X`, whose probes need ~0.04 s, was refused 5 times in a run as 'backtracks on
    long runs: 20,000 'a' in a row took over 1.0 s', by train(regex=) and by Tokenizer.load of a
    saved tokenizer. Only CPU time spent matching counts now; a slow regex is still refused."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    real = regex_check._checked_splitter
    monkeypatch.setattr(regex_check, "_checked_splitter", lambda *a: _Starved(real(*a)))
    warnings = check_split_regex(r"\X", sample="some text, 日本語 🙂\n" * 100)
    assert [
        w for w in warnings if "playground page" not in w and "tiktoken" not in w
    ] == []  # no coverage warning
    with pytest.raises(ValueError, match="backtracks on long runs"):
        check_split_regex(r"\w*\w*x|\s+|\S")  # cubic: it spends the CPU budget, and is refused


@pytest.mark.parametrize("source", [r"\X", r"[[:alpha:]]+|[^[:alpha:]]", r"[\p{Emoji}]+|\s+|."])
def test_a_regex_the_page_cannot_run_is_warned_of_before_training(source):
    """A tokenizer trained with a split the page's stdlib-re translation refuses (\\X, POSIX
    classes, \\p{Emoji}) worked in Python and failed only when the page loaded it."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package runs these")
    warnings = check_split_regex(source, sample="hello world 123")
    assert any("the playground page cannot run this split regex" in w for w in warnings), warnings
    assert not any("playground page" in w for w in check_split_regex(r"\p{L}+|\s+|\S", sample="hello"))


class _SlowLinear:
    """A compiled regex that spends 1.25 us of CPU a character on a long run: linear, 25 ms a
    20,000-character run, like a slow but honest regex (\\X takes ~15 ms) on a busy machine."""

    __module__ = "regex"  # what regex_check takes for a regex it can stop
    US_PER_CHAR = 1.25

    def __init__(self, compiled) -> None:
        self.compiled = compiled

    def findall(self, text, timeout=None):
        if len(text) > 1000:
            need = len(text) * self.US_PER_CHAR / 1e6
            end = time.thread_time() + min(need, timeout)
            while time.thread_time() < end:
                pass
            if need > timeout:
                raise TimeoutError("regex timed out")
        return self.compiled.findall(text, timeout=timeout)


def test_a_slow_linear_regex_is_not_refused_by_the_growth_check(monkeypatch):
    """Doubling every long run over GROWTH_CHECK_SECONDS on the long probes' own budget tripled
    what a slow linear regex spent (25 ms a run: 0.5 s, then 1.5 s) and refused it; only the
    slowest runs are doubled now, on a budget of their own."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    real = regex_check._checked_splitter
    monkeypatch.setattr(regex_check, "_checked_splitter", lambda *a: _SlowLinear(real(*a)))
    monkeypatch.setattr(regex_check, "GROWTH_CHECK_SECONDS", 0.02)
    assert check_split_regex(r"[^ ]+| +") == []


def test_without_the_regex_package_the_child_still_probes(monkeypatch):
    r"""Under TOKENIZER_NO_REGEX=1 (the stdlib `re` translation runs, and cannot be stopped here)
    every probe was skipped: (?:a+)+b|\s+|\S passed, then froze the command line on 34 a's. The
    child process's probe of the short runs needs no `regex`; it refuses it now."""
    monkeypatch.setattr(patterns, "default_engine", lambda *a, **k: "re")
    patterns._compile.cache_clear()
    try:
        assert not regex_check._can_stop(patterns.compile_pattern(r"\w+|\s+|\S"))  # re: no timeout
        with pytest.raises(ValueError, match=r"catastrophically in Python's re .*: on 48 'a' in a row"):
            check_split_regex(r"(?:a+)+b|\s+|\S")
        assert check_split_regex(r"\w+|\s+|\S") == []
    finally:
        patterns._compile.cache_clear()


@pytest.mark.parametrize("source", [r"[ ]{0,5000}x|\s|\S", r"[ ]{0,2000}x|\s|\S"])
def test_a_linear_regex_too_slow_for_a_megabyte_is_refused(source):
    r"""[ ]{0,2000}x|\s|\S grows linearly, so the growth check passed it, but tries 2,000 spaces
    at every space: 3.6 s for 1 MB of spaces ({0,5000}: ~9 s). The doubled run's time bounds it."""
    if not patterns.regex_importable():
        pytest.skip("only the regex package can stop a match")
    with pytest.raises(ValueError, match=r"too slow on long runs: 40,000 characters of ' ' in a row took"):
        check_split_regex(source)
