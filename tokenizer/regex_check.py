"""Checks of a custom split regex, before anything trains or encodes with it.

A split regex cuts the text into chunks and BPE never merges across chunks, so a custom one
can go wrong in ways that raise nothing later and only give a silently wrong tokenizer:

- a capturing group makes `findall` return the group instead of the whole match, so the
  chunks are no longer the text (`(a)b` on "ab" gives "a"; the "b" is gone);
- a regex that can match the empty string makes empty chunks;
- text the regex does not match at all is dropped: `\\w+` on "hello, world!" keeps "hello"
  and "world", so the tokenizer never sees ", " or "!" and decoding gives "helloworld".
  tiktoken does the same; a playground must say so.

`check_split_regex(source)` refuses the first two (and regexes that do not compile, or are
absurdly long) with a ValueError that says how to fix it; with `sample=` it also measures the
share of the sample the regex drops and returns it as a warning. It compiles through
`tokenizer.patterns.compile_pattern`, the function training and encoding use, so what passes
here compiles there; it is pure Python (the `regex` package when installed, else the stdlib
`re` translation), so the page runs the same checks under Pyodide.

Two more bounds keep the check itself fast and safe on hostile input: the nesting depth of
groups (parsers recurse once per level) and the size the regex would have once its counted
repeats are expanded (the `regex` package copies `x{n}` n times when it compiles:
`(?:ab|c){10000000}` takes minutes and can crash the process). Both are measured before
anything compiles. Then the regex runs on short hostile runs, where nested repeats take
exponential time: with `regex`, which can stop a match, and with the stdlib `re` translation
the page runs, in a child process (_re_probe.py), since `re` cannot be stopped. Last come long
runs (LONG_PROBE_CHARS) of each kind of character, of alternating kinds, and of the texts the
regex's own repeats consume (_re_witness.py: "foo " for (?:foo )*bar), where a repeat that
scans to the end of a run before it fails makes every start cost a scan: quadratic, seconds at
40 KB and hours at 1 MB. The slowest runs go again at twice the length; a time that more than
triples (a linear one doubles), or a doubled run over MAX_DOUBLED_SECONDS, is refused.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]

from . import _re_probe
from ._re_empty import EMPTY_MATCH_REASON
from ._re_portability import page_warnings, tiktoken_warnings
from ._re_translate import translate
from ._re_witness import repeat_texts
from .patterns import (
    NO_SPLIT,
    PATTERN_NAMES,
    PATTERNS,
    REGEX,
    compile_pattern,
    mistaken_name,
)

# characters: o200k's pattern, the longest built-in one, has 274; a hand-written split regex
# 7x longer is a mistake (a pasted corpus?), and compiling and translating a huge regex on
# every request or page load is work nobody asked for.
MAX_REGEX_CHARS = 2_000
# characters of a sample that are matched against the regex; enough to meet every kind of
# character a corpus has in its first pages, few enough to check in well under a second.
MAX_SAMPLE_CHARS = 256 * 1024
# nested groups: real split patterns nest 2 or 3 deep; every level is a few stack frames in
# each parser (re's, regex's, the translator), and Pyodide's stack is far smaller than CPython's.
MAX_GROUP_DEPTH = 50
# items of the regex with its counted repeats expanded (what `regex` builds): 100,000 compile
# in ~25 ms; o200k's pattern has ~200.
MAX_EXPANDED_ITEMS = 100_000
DROPPED_EXAMPLES = 5  # distinct dropped characters named in the warning
# Nested repeats that can match the same text in many ways ((?:a|a)+b, (?:a|aa)*b) take time
# exponential in the length of a run they cannot finish: 28 'a's took 49 s, and `regex` cannot
# be interrupted, so a check, a training or a server thread would hang. Before anything else
# matches it, the regex is run on runs of PROBE_CHARS of each character it names and of a few
# of each kind, PROBE_SECONDS for all of them (a sane regex needs well under 1 ms).
# Runs of two alternating characters too ((?:a|b|ab)+c splits "abab..." in 2**24 ways and passes
# every one-character run), for pairs of the regex's first MAX_PAIR_LITERALS literal characters.
PROBE_CHARS = 48
PROBE_SECONDS = 0.5
# The same runs in the page's stdlib `re`, in a child process (_re_probe.py): a sane regex needs
# a few ms for all of them there too; an exponential one never finishes 48 characters. The
# budget is the child's CPU time where it can be read (_re_probe.STARVED_SECONDS).
RE_PROBE_SECONDS = 0.25
PROBE_KINDS = "aA1 \t\n.,'-_é中🙂"  # letters, digits, spaces, punctuation, non-ASCII
MAX_PROBES = 64  # runs tried: the kinds plus the first literal characters of the regex
MAX_PAIR_LITERALS = 16  # literal characters whose pairs are tried: at most 240 runs of ~20 us each
# Polynomial backtracking passes those runs in microseconds and hangs on a long word: \w*\w*x
# tries every split of the rest of a word at each start (cubic; \w*x is quadratic: 0.7 s for
# 20,000 letters, minutes for a 100,000-letter word). So the one-character kinds are run again,
# LONG_PROBE_CHARS each, within LONG_PROBE_SECONDS for all: linear regexes (the named patterns,
# \p{L}+|\p{N}+|\s+|\S) take 0.003-0.09 s for all of them.
LONG_PROBE_CHARS = 20_000
LONG_PROBE_SECONDS = 1.0
# Runs of one kind miss a repeat over two kinds: \w+(?:\s\w+)*\. (a sentence) takes a run of
# letters or of spaces whole, but on "a a a ..." (prose with no full stop) every start scans the
# rest of the sentence and fails: 1.6 s for 5,000 characters in re, hours for a 1 MB text. So the
# long runs also alternate kinds (a word and a space, a letter and punctuation, digits and a comma,
# a line of spaces), and pair the regex's first few literal characters as the short probes do.
LONG_MIXED_UNITS = ("a ", "word ", "a.", "1,", "a-b ", " \n")
MAX_LONG_PAIR_LITERALS = 4  # 12 pairs of 20,000 characters: ~1 ms each for a linear regex
# A quadratic regex with a fast inner loop fits the budget: [ ]*x|\s|\S spent 0.36 s on 20,000
# spaces, and so passed, but 1.4 s on 40,000 and ~15 minutes on a 1 MB run. Backtracking costs at
# least ~1 ns a step, so any quadratic run spends over GROWTH_CHECK_SECONDS (CPU) at 20,000
# characters, where a linear one spends ~1-15 ms: such a run is tried again at twice the length,
# and refused when its time grows over MAX_GROWTH times (linear doubles it, quadratic quadruples
# it; the margin absorbs a busy machine's noise in CPU time).
GROWTH_CHECK_SECONDS = 0.03
GROWTH_CHECKS = 3  # the slowest runs doubled: the one a quadratic repeat slows, and two to spare
# CPU seconds a doubled run (2 * LONG_PROBE_CHARS) may take even when its time grows linearly:
# 2.5 s for 1,000,000 characters. [ ]{0,5000}x|\s|\S is linear, but tries up to 5,000 spaces at
# every one: ~9 s for 1 MB of spaces. The slowest honest regexes take ~0.03 s (\X; \S on
# punctuation, one match a character).
MAX_DOUBLED_SECONDS = 0.1
MAX_GROWTH = 3.0
# seconds for matching the sample (the built-in patterns take ~0.015 s on MAX_SAMPLE_CHARS): a
# regex that needs longer backtracks on this text, and the whole corpus would take forever.
SAMPLE_SECONDS = 5.0
# The long probes' and the sample's budgets are CPU time (_CpuBudget), spent within this many
# times as much wall time (more would keep a refusal waiting on a busy machine).
STARVED_FACTOR = 2
RAN_SHARE = 0.8  # a timed-out try that had the CPU this share of its timeout was not starved


def check_split_regex(source: str, *, sample: str | None = None) -> list[str]:
    """Raise ValueError (what is wrong, how to fix it) if `source` cannot be a split regex;
    return warnings (possibly none), e.g. the share of `sample` the regex would drop."""
    if not isinstance(source, str):
        raise TypeError(f"a split regex must be a str, not {type(source).__name__}")
    if not source:
        raise ValueError("the split regex is empty; write a regex, or choose the pattern 'none'")
    if len(source) > MAX_REGEX_CHARS:
        raise ValueError(
            f"the split regex is {len(source):,} characters long; at most {MAX_REGEX_CHARS:,} are "
            "allowed (the longest built-in pattern, o200k, has 274): shorten it"
        )
    if source in PATTERNS or source == NO_SPLIT:
        raise ValueError(
            f"{source!r} is the name of a built-in pattern, not a regex: choose it by name, "
            f"or write (?:{source}) to match that literal text"
        )
    if mistaken_name(source):  # the tokenizer made would refuse to load (patterns.check_pattern_name)
        raise ValueError(
            f"{source!r} reads as a pattern name, and no pattern has it (names: {', '.join(PATTERN_NAMES)}): "
            f"choose one by name, or write (?:{source}) to match only that literal text"
        )
    splitter = _checked_splitter(source, "the split regex")
    _check_backtracking(source, splitter)
    if sample is None:
        return []
    sample = sample[:MAX_SAMPLE_CHARS]
    coverage = _coverage_warnings(splitter, sample, source)  # first: it also bounds the regex's time
    return page_warnings(source) + tiktoken_warnings(source, splitter, sample) + coverage


def check_hf_split_regex(source: str) -> None:
    """A Hugging Face Split's regex, before it is wrapped into a split pattern: bounded (length,
    nesting, counted repeats), valid on its own (wrapped, "[abc" hid inside a longer class),
    never empty, and without capturing groups (our findall would return the groups: a crash).
    ValueError saying what and how to fix."""
    if len(source) > MAX_REGEX_CHARS:
        raise ValueError(
            f"the regex is {len(source):,} characters long; at most {MAX_REGEX_CHARS:,} are read"
        )
    _check_size(source)
    _checked_splitter(f"(?:{source})", f"the regex {_short(source)}")


def check_pre_split(source: str) -> None:
    """A pre-split read from our .json (preparation.pre_splits: mostly a HF Split's regex as
    hf_import wraps it, up to twice a regex's length): every check of a split regex but the
    length. A capturing group dropped the text outside it; deep or huge ones crashed or hung."""
    if len(source) > 3 * MAX_REGEX_CHARS:
        raise ValueError(
            f"the pattern is {len(source):,} characters long; at most {3 * MAX_REGEX_CHARS:,} are read"
        )
    _check_backtracking(source, _checked_splitter(source, f"the pattern {_short(source)}"))


def _checked_splitter(source: str, what: str):
    """The compiled regex, once its size is bounded and it has no capturing group (findall
    would return the groups' text, not whole matches); `what` names it in the ValueError."""
    _check_size(source)
    splitter = _compile(source)
    groups = _capturing_groups(source, splitter)
    if groups:
        raise ValueError(
            f"{what} has {groups} capturing group{'s' if groups > 1 else ''}: the split would keep "
            "only the groups' text, not the whole match; make every group non-capturing, (?:...) "
            "instead of (...) or (?P<name>...)"
        )
    return splitter


def check_backtracking(source: str) -> None:
    """Only the catastrophic-backtracking probe (for a pattern read from a Hugging Face
    tokenizer.json, whose own rules differ from a split regex's: its Split keeps whole matches
    whatever the groups). ValueError (what, how to fix) if it fails; source must compile."""
    _check_backtracking(source, compile_pattern(source))


def _compile(source: str):
    try:
        return compile_pattern(source)
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        reason = re.sub(r"^invalid split pattern .*?: ", "", str(e), count=1, flags=re.S)
        if reason == EMPTY_MATCH_REASON:
            raise ValueError(
                f"the split regex {_short(source)} can match the empty string, which would make "
                "empty chunks; make every alternative consume at least one character "
                "(x+ instead of x*, drop empty alternatives)"
            ) from None
        raise ValueError(f"invalid regex: {reason}; fix the syntax of {_short(source)}") from None


def _check_size(source: str) -> None:
    depth = _group_depth(source)
    if depth > MAX_GROUP_DEPTH:
        raise ValueError(
            f"the split regex nests groups {depth} deep; at most {MAX_GROUP_DEPTH} levels are allowed: "
            "flatten it"
        )
    items = _expanded_items(source)
    if items > MAX_EXPANDED_ITEMS:
        raise ValueError(
            f"the split regex's counted repeats expand to {items:,} items; at most "
            f"{MAX_EXPANDED_ITEMS:,} are allowed: use + or {{m,n}} with a small m instead of "
            "large fixed counts such as {10000}"
        )


def _group_depth(source: str) -> int:
    """Deepest nesting of '(' outside character classes (a '(' in an odd class may count: the
    bound is generous, so erring high is harmless)."""
    depth = deepest = 0
    in_class = False
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def _expanded_items(source: str) -> int:
    """The regex's size with each repeat counted min-count times (at least once).

    Measured on the stdlib translation's skeleton (classes reduced to one item, structure
    kept); a regex only the `regex` package understands is bounded by the product of all its
    counts instead, as if every repeat were nested in every other.
    """
    try:
        skeleton = translate(source, bmp_only=True, unicode=REGEX).skeleton
        return _items(sre_parser.parse(skeleton))
    except (ValueError, re.error, OverflowError, RecursionError):
        # escapes first, so the braces of \x{...}, \p{...} or \N{...} are not taken for counts
        unescaped = re.sub(r"\\(?:[xpPNo]\{[^}]*\}|.)", "e", source, flags=re.DOTALL)
        counts = [int(m) for m in re.findall(r"\{(\d+)(?:,\d*)?\}", unescaped)]
        return len(source) * math.prod(max(c, 1) for c in counts)


_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


def _items(items) -> int:
    total = 0
    for op, arg in items:
        if op in _REPEATS:
            low, _high, item = arg
            total += max(low, 1) * _items(item)
        elif op is sre_constants.SUBPATTERN:
            total += _items(arg[-1])
        elif op is sre_constants.ATOMIC_GROUP:
            total += _items(arg)
        elif op is sre_constants.BRANCH:
            total += sum(_items(branch) for branch in arg[1])
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            total += _items(arg[1])
        elif op is sre_constants.GROUPREF_EXISTS:
            total += sum(_items(branch) for branch in arg[1:] if branch is not None)
        else:
            total += 1
    return total


def _can_stop(splitter) -> bool:
    """Only the `regex` package can stop a match; the stdlib translation (Pyodide,
    TOKENIZER_NO_REGEX=1) cannot, so there only the child process's probe runs (none under
    Pyodide) and the sample runs unbounded."""
    return type(splitter).__module__ in ("_regex", "regex")


def _wall_bounded_findall(splitter, text: str, seconds: float) -> list[str] | None:
    """splitter.findall(text), or None when it takes longer than `seconds` (see _can_stop)."""
    if not _can_stop(splitter):
        return splitter.findall(text)
    try:
        return splitter.findall(text, timeout=max(seconds, 0.001))
    except TimeoutError:
        return None


def _bounded_findall(splitter, text: str, seconds: float) -> list[str] | None:
    """splitter.findall(text), or None when it needs more than `seconds` of CPU (see _can_stop)."""
    return _CpuBudget(seconds).findall(splitter, text)


class _CpuBudget:
    """Seconds of this thread's CPU time for a series of matches, within STARVED_FACTOR times
    as much wall-clock time.

    The `regex` package stops a match after a wall-clock timeout, but on a busy machine wall
    time says little: with the process niced at load 4 on 2 cores, `\\X` (whose long probes
    need ~0.2 s of CPU with a timeout set) was refused now and then as taking over a second, by
    train(regex=) and by the load of a saved tokenizer. So a match that timed out having had the CPU for less than RAN_SHARE of its timeout (the
    machine did not run us) is tried again from the start; a finished match is charged the
    CPU time it spent. A slow regex uses its budget in the first try on an idle machine and is
    refused as before; the wall-clock bound keeps a refusal on a busy one within twice the budget.
    (The short probes keep a wall-clock budget: they need microseconds, not a tenth of it.)"""

    def __init__(self, seconds: float) -> None:
        self.left = seconds
        self.wall_end = time.monotonic() + STARVED_FACTOR * seconds

    def findall(self, splitter, text: str) -> list[str] | None:
        if not _can_stop(splitter):
            return splitter.findall(text)
        while (wall := self.wall_end - time.monotonic()) > 0 and self.left > 0:
            timeout = max(min(self.left, wall), 0.001)
            started = time.thread_time()
            try:
                found = splitter.findall(text, timeout=timeout)
            except TimeoutError:
                if time.thread_time() - started >= RAN_SHARE * timeout:
                    return None  # it had the machine and did not finish: the regex is slow
                continue  # the machine did not run us: the same try again, from the start
            self.left -= time.thread_time() - started
            return found
        return None


def _check_backtracking(source: str, splitter) -> None:
    r"""The probes: short runs in `regex` and in the stdlib `re` translation (a child process),
    then long runs in `regex`. Where `regex` is not what runs (TOKENIZER_NO_REGEX=1), this
    process cannot stop a match, but the child can still be killed: (?:a+)+b|\s+|\S passed
    there with no probe at all, and then froze the command line on 34 a's."""
    stoppable = _can_stop(splitter)
    literals = [ch for ch in dict.fromkeys(source) if ch.isalnum() or ch in " -_'.,:;!?"]
    kinds = list(dict.fromkeys([*PROBE_KINDS, *literals]))[:MAX_PROBES]
    # After each run, a character no split regex expects, then every literal of the regex: a
    # literal the match needs is in the text (else `regex` fails at once without trying), but
    # not where the run ends.
    tail = "\0" + "".join(kinds)
    deadline = time.monotonic() + PROBE_SECONDS  # wall time: these runs take microseconds
    few = literals[:MAX_PAIR_LITERALS]
    pairs = [a + b for a in few for b in few if a != b]
    units = [*kinds, *pairs]
    runs = [unit * (PROBE_CHARS // len(unit)) + tail for unit in units]
    for unit, run in zip(units, runs, strict=True):
        if stoppable and _wall_bounded_findall(splitter, run, deadline - time.monotonic()) is None:
            raise _backtracks(source, unit)
    # The same runs with the stdlib `re` translation, which the page runs and which backtracks
    # differently ((?:a+)+b: at once in `regex`, exponential in `re`), in a child process.
    overrun = _re_probe.first_overrun(source, tuple(runs), RE_PROBE_SECONDS)
    if overrun is not None:
        engine = " in Python's re (the engine the page's encoder runs)"
        raise _backtracks(source, units[overrun], engine, RE_PROBE_SECONDS)
    if stoppable:
        _check_long_runs(source, splitter, tail, _long_units(source, literals))


def _long_units(source: str, literals: list[str]) -> list[tuple[str, str]]:
    """What the long runs are, as (lead, unit): the unit repeated after the lead. Each kind of
    character, a few alternations of kinds, the pairs of the regex's first literal characters,
    and what each of its repeats consumes ("foo " for (?:foo )*bar, which splits "foo foo ..." in
    quadratic time), after the text that reaches the repeat where it is not the regex's start
    ("q", then "xyw" repeated, for q(?:xyw|x(?:yw))+z: exponential): _re_witness."""
    few = literals[:MAX_LONG_PAIR_LITERALS]
    pairs = [a + b for a in few for b in few if a != b]
    bodies, leads = repeat_texts(source)
    units = dict.fromkeys([*PROBE_KINDS, *LONG_MIXED_UNITS, *pairs, *bodies])
    return list(dict.fromkeys([*(("", unit) for unit in units), *leads]))


def _check_long_runs(source: str, splitter, tail: str, units: list[tuple[str, str]]) -> None:
    """Polynomial backtracking: every unit repeated to LONG_PROBE_CHARS, within LONG_PROBE_SECONDS
    of CPU for all of them."""
    budget = _CpuBudget(LONG_PROBE_SECONDS)
    spent: dict[tuple[str, str], float] = {}  # the slowest run is named, not the one the budget ran out on
    for unit in units:
        before = budget.left
        seconds = _long_run(budget, splitter, unit, LONG_PROBE_CHARS, tail)
        spent[unit] = before - budget.left
        if seconds is None:
            raise _grows(source, max(spent, key=spent.__getitem__))
    # The slowest few runs again at twice the length, on a budget of their own: doubling every
    # run over GROWTH_CHECK_SECONDS on the same budget took \X (linear, ~15 ms a run) to 0.9 s
    # of its 1.0 s, a false refusal away on a busy machine.
    slowest = sorted(spent, key=spent.__getitem__, reverse=True)[:GROWTH_CHECKS]
    growth = _CpuBudget(LONG_PROBE_SECONDS)
    for unit in (unit for unit in slowest if spent[unit] > GROWTH_CHECK_SECONDS):
        doubled = _long_run(growth, splitter, unit, 2 * LONG_PROBE_CHARS, tail)
        if doubled is None or doubled > MAX_GROWTH * spent[unit]:
            raise _grows_faster(source, unit, spent[unit], doubled)
        if doubled > MAX_DOUBLED_SECONDS:
            raise _too_slow(source, unit, doubled)


def _long_run(budget: _CpuBudget, splitter, unit: tuple[str, str], chars: int, tail: str) -> float | None:
    """CPU seconds the splitter spent on unit = (lead, text): the lead, then the text repeated to
    `chars` characters; None when the budget ran out first."""
    before = budget.left
    lead, text = unit
    if budget.findall(splitter, lead + text * (chars // len(text)) + tail) is None:
        budget.left = 0.0  # a timeout used all that was left
        return None
    return before - budget.left


def _backtracks(source: str, unit: str, engine: str = "", seconds: float = PROBE_SECONDS) -> ValueError:
    return ValueError(
        f"the split regex {_short(source)} backtracks catastrophically{engine}: on {_run_name(unit)} "
        f"it did not finish in {seconds} s (the time grows exponentially with the run). Nested "
        "repeats that can match the same text in several ways, such as (?:a|a)+, (?:a|aa)*, (?:a+)+ "
        "or (?:a|b|ab)+, cause it: make the alternatives exclusive, or use possessive or atomic "
        "forms (a++, (?>...))"
    )


def _long_name(unit: tuple[str, str], chars: int | None = None) -> str:
    """A long run named in an error: "20,000 ' ' in a row", "'foo ' repeated (20,000 characters)",
    "'q', then 'xyw' repeated"; without the count when chars is None."""
    lead, text = unit
    size = f" ({chars:,} characters)" if chars else ""
    if lead:
        return f"{lead!r}, then {text!r} repeated{size}"
    if len(text) == 1:
        return f"{chars:,} {text!r} in a row" if chars else f"{text!r} in a row"
    return f"{text!r} repeated{size}"


def _grows(source: str, unit: tuple[str, str]) -> ValueError:
    run = _long_name(unit, LONG_PROBE_CHARS)
    return ValueError(
        f"the split regex {_short(source)} backtracks on long runs: {run} took over "
        f"{LONG_PROBE_SECONDS} s with the other runs probed (the time grows with a "
        "power of the run's length: a run of 100,000 characters, such as a long word or a sentence, would take minutes). At each start "
        "a repeat scans the rest of the run and fails (\\w*x without an x; \\w*\\w*x tries every "
        "split too), and what matches instead takes one character, so the scan starts over one "
        "character on: let that alternative take the run whole (\\w+ rather than \\w), or drop "
        "the repeat"
    )


def _grows_faster(source: str, unit: tuple[str, str], seconds: float, doubled: float | None) -> ValueError:
    run = _long_name(unit)
    longer = f"{doubled:.2f} s" if doubled is not None else f"over {LONG_PROBE_SECONDS} s"
    return ValueError(
        f"the split regex {_short(source)} backtracks on long runs: {run} took {seconds:.2f} s of CPU "
        f"at {LONG_PROBE_CHARS:,} characters and {longer} at {2 * LONG_PROBE_CHARS:,} (a linear regex "
        f"takes at most {MAX_GROWTH:g} times as long at twice the length): the time grows with a power "
        "of the run's length, so a run of 1,000,000 characters would take many minutes. At each start a repeat "
        "scans the rest of the run and fails ([ ]*x without an x), and what matches instead takes "
        "one character, so the scan starts over one character on: let that alternative take the "
        "run whole (\\s+ rather than \\s), or drop the repeat"
    )


def _too_slow(source: str, unit: tuple[str, str], seconds: float) -> ValueError:
    run = _long_name(unit)
    per_mb = seconds * 1_000_000 / (2 * LONG_PROBE_CHARS)
    return ValueError(
        f"the split regex {_short(source)} is too slow on long runs: {2 * LONG_PROBE_CHARS:,} characters "
        f"of {run} took {seconds:.2f} s of CPU, so 1,000,000 would take ~{per_mb:.0f} s (at most "
        f"{MAX_DOUBLED_SECONDS * 1_000_000 / (2 * LONG_PROBE_CHARS):g} s are allowed). At every character "
        "it tries a long stretch ahead and fails, such as a large counted repeat ([ ]{0,5000}x) "
        "or a lookahead that scans far: lower the count, or let what matches instead take the run whole"
    )


def _run_name(unit: str) -> str:
    """How a probe run is named in the error: "48 'a' in a row", "'ab' repeated (48 characters)"."""
    if len(unit) == 1:
        return f"{PROBE_CHARS} {unit!r} in a row"
    return f"{unit!r} repeated ({PROBE_CHARS} characters)"


def _capturing_groups(source: str, splitter) -> int:
    """Capturing groups of the compiled regex: the `regex` package's count, or the count of
    the stdlib translation (which keeps every group, so findall means the same)."""
    groups = getattr(splitter, "groups", None)  # regex.Pattern
    if isinstance(groups, int):
        return groups
    return re.compile(translate(source, bmp_only=True, unicode=REGEX).source).groups


def _coverage_warnings(splitter, sample: str, source: str) -> list[str]:
    """One warning if the chunks do not add up to the sample: the dropped share and characters.

    The chunks are disjoint substrings of the sample, so the sample's characters minus the
    chunks' characters is exactly the multiset of dropped characters, wherever they were.
    """
    chunks = _bounded_findall(splitter, sample, SAMPLE_SECONDS)
    if chunks is None:
        raise ValueError(
            f"the split regex {_short(source)} did not finish on the first {len(sample):,} "
            f"characters of the corpus in {SAMPLE_SECONDS:g} s (the built-in patterns take ~0.02 s "
            f"on {MAX_SAMPLE_CHARS:,}): it backtracks catastrophically on this text, and the whole corpus would "
            "take far longer. Make the alternatives of repeated groups exclusive, or use "
            "possessive or atomic forms (a++, (?>...))"
        )
    dropped = Counter(sample)
    dropped.subtract(Counter("".join(chunks)))
    lost = +dropped  # drops zero counts
    total = sum(lost.values())
    if not total:
        return []
    examples = ", ".join(repr(ch) for ch, _ in lost.most_common(DROPPED_EXAMPLES))
    return [
        f"the split regex does not match {total / len(sample):.1%} of the sample ({total:,} of "
        f"{len(sample):,} characters, most often {examples}): text it does not match is left out "
        "silently, by training and by encode (decode gives the text without it); add a catch-all "
        r"alternative such as |\s+|\S at the end to keep every character"
    ]


def _short(source: str, limit: int = 60) -> str:
    return repr(source if len(source) <= limit else source[:limit] + "...")
