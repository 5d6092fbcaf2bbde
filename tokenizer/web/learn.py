"""The Learn view's back end: a whole step-through training run, computed at once.

The page (web/learn.js) sends one request and gets every step back, so Step, Back and Play
are instant and the worker is busy once. Nothing here re-implements training: byte-level
steps come from the heap trainer's `trace` (tokenizer.train), classic steps from
`classic.learn_steps`; tests check both against a full recount at every step.

Payload (JSON):
- `vocab`: the display text of every token id the steps mention. Byte mode: ids 0..255 are
  the bytes, merge i makes id 256+i; a token that is not valid UTF-8 on its own shows its
  bytes, e.g. `<E4 BD>` (as the comparison panels do). Classic mode: the symbols
  (characters, `x</w>` at a word's end, merged symbols), in order of first use.
- `steps[i]`: merge i (0-based): `pair` and `id` (ids into `vocab`), `count`, `tied`,
  `tied_with` (a few pairs that lost the tie), `rule` (the tie rule's words, None when the
  count alone decided), `top` ([left, right, count], the best pairs BEFORE the merge).
- `view`: the corpus (its first VIEW_BYTES) as pieces: a plain string is text that no merge
  can touch (classic: the spaces and line breaks between words; byte mode: text a custom
  pattern skips); `[text, cuts]` is one chunk (byte mode) or word (classic) whose units
  (UTF-8 bytes, or characters) are separated by boundaries, `cuts[j]` being the step that
  removed the boundary after unit j (-1: never). After k merges the tokens of a piece are
  the runs between boundaries with cut < 0 or cut >= k, and the token made by merge k-1 is
  the one holding a boundary with cut == k-1. That is one int per unit for the whole run,
  instead of a rendering per step (`render` below is the same rule in Python).

`{action: "render", step: k}` returns the tokens at step k instead (for tests and callers
without a JS side). The trace ranks every live pair at every step (_heap_trace.TraceView.trace_step),
so byte-level runs are capped at TRACE_BUDGET (distinct chunk bytes x merges); the
response says when the cap applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import classic
from ..core import Tokenizer
from ..counting import chunk_spans, count_chunks
from ..patterns import NO_SPLIT, PATTERNS, compile_pattern, is_named
from ..regex_check import check_split_regex
from ..train import DEFAULT_MIN_FREQUENCY, DEFAULT_PATTERN, DEFAULT_TIE_BREAK, TIE_BREAKS, learn_merges

MAX_CORPUS_BYTES = 100 * 1024
MAX_MERGES = 2000
DEFAULT_MERGES = 200  # what a request without num_merges learns (the page's field starts there)
TRACE_BUDGET = 40_000_000  # distinct chunk bytes x merges: 1-2 s of tracing in CPython, 2-5 s in Pyodide
VIEW_BYTES = 4_000  # the part of the corpus the page re-renders at every step
MODES = ("bytes", "classic")
RULES = {
    "first": "first occurrence in the current text",
    "lexical": "smallest ids (lexical)",
    "classic": classic.TIE_RULE,
}
ACTIONS = ("train", "render")


@dataclass
class Request:
    corpus: str
    mode: str
    pattern: str
    tie_break: str
    num_merges: int
    min_frequency: int
    action: str
    step: int | None


def parse_request(request: Any) -> Request:
    """Validate a request from the page; every problem is a ValueError fit to show the user."""
    if not isinstance(request, dict):
        raise ValueError("a learn request must be an object")
    corpus = request.get("corpus", "")
    if not isinstance(corpus, str):
        raise ValueError("corpus must be a string")
    if not corpus.strip():
        raise ValueError("the corpus is empty: type or pick some text to learn from")
    try:
        size = len(corpus.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError("the corpus holds a lone surrogate and is not valid Unicode text") from None
    if size > MAX_CORPUS_BYTES:
        raise ValueError(
            f"the corpus is {size:,} bytes; the Learn view takes at most {MAX_CORPUS_BYTES:,} "
            "(use the Train panel for bigger corpora)"
        )
    mode = request.get("mode", "bytes")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    pattern = request.get("pattern", DEFAULT_PATTERN)
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("pattern must be a pattern name, a regex or 'none'")
    if pattern != NO_SPLIT and pattern not in PATTERNS and not is_named(pattern):
        check_split_regex(pattern)  # (?:a|a)+b hung on a run of 40 a's; a capturing group dropped text
    tie_break = request.get("tie_break", DEFAULT_TIE_BREAK)
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    num_merges = _int(request.get("num_merges", DEFAULT_MERGES), "num_merges", 0, MAX_MERGES)
    min_frequency = _int(request.get("min_frequency", DEFAULT_MIN_FREQUENCY), "min_frequency", 1, None)
    action = request.get("action", "train")
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
    step = request.get("step")
    if step is not None:
        step = _int(step, "step", 0, MAX_MERGES)
    return Request(corpus, mode, pattern, tie_break, num_merges, min_frequency, action, step)


def _int(value: Any, name: str, low: int, high: int | None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def handle(request: dict) -> dict:
    """The worker's `learn` op: a whole traced run (action "train") or the tokens at one step."""
    req = parse_request(request)
    result = _learn_bytes(req) if req.mode == "bytes" else _learn_classic(req)
    if req.action == "render":
        k = len(result["steps"]) if req.step is None else min(req.step, len(result["steps"]))
        return {"step": k, "tokens": render(result, k)}
    return result


# ----- byte level --------------------------------------------------------------------------


def token_text(token: bytes) -> str:
    """What the page shows for a token: its text, or its bytes when it is not UTF-8 on its own."""
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        return "<" + " ".join(f"{b:02X}" for b in token) + ">"


def _learn_bytes(req: Request) -> dict:
    compile_pattern(req.pattern)  # a bad regex fails here, with the pattern's own message
    counts, stats = count_chunks(req.corpus, req.pattern)
    distinct = sum(len(chunk.encode("utf-8")) for chunk in counts) or 1
    limit = min(req.num_merges, max(TRACE_BUDGET // distinct, 1))
    trace: list[dict[str, Any]] = []
    result = learn_merges(
        counts, limit, tie_break=req.tie_break, min_frequency=req.min_frequency, trace=trace.append
    )
    vocab = [bytes([b]) for b in range(256)]
    for left, right in result.merges:
        vocab.append(vocab[left] + vocab[right])
    steps = [
        {
            "pair": list(t["pair"]),
            "id": t["new_id"],
            "count": t["count"],
            "tied": t["rule"] != "count",
            "tied_with": [list(p) for p in t["tied_with"]],
            "rule": RULES[t["rule"]] if t["rule"] != "count" else None,
            "top": [[p[0], p[1], c] for p, c in t["top_pairs"]],
        }
        for t in trace
    ]
    stop_reason = result.stop_reason
    capped = stop_reason is None and limit < req.num_merges
    if capped:
        stop_reason = (
            f"capped at {limit} merges for a corpus this size ({distinct:,} distinct chunk bytes): "
            "each step ranks every pair"
        )
    return {
        "mode": "bytes",
        "pattern": req.pattern,
        "tie_break": req.tie_break,
        "min_frequency": req.min_frequency,
        "num_merges": req.num_merges,
        "vocab": [token_text(t) for t in vocab],
        "steps": steps,
        "stop_reason": stop_reason,
        "capped": capped,
        "stats": {
            "bytes": stats["bytes"],
            "chunks": stats["chunks"],
            "unique_chunks": stats["unique_chunks"],
        },
        # A custom regex that does not match some of the corpus leaves it out of training, as
        # `train` does (it warns); the page says how much, so the result is not taken for the corpus's.
        "dropped_bytes": stats["bytes"] - sum(len(chunk.encode("utf-8")) * n for chunk, n in counts.items()),
        "view": _bytes_view(req.corpus, req.pattern, result.merges),
    }


def _bytes_view(corpus: str, pattern: str, merges: list[tuple[int, int]]) -> dict:
    """The pieces of the corpus's first VIEW_BYTES (see the module docstring)."""
    if pattern == NO_SPLIT:
        spans = [(0, len(corpus))]
    else:
        splitter = compile_pattern(pattern)
        spans = chunk_spans(splitter, corpus)
        if spans is None:  # a custom pattern that skips text and cannot say where: chunks only
            spans, pos = [], 0
            for chunk in splitter.findall(corpus):
                start = corpus.find(chunk, pos)
                spans.append((start, start + len(chunk)))
                pos = start + len(chunk)
    pieces: list[Any] = []
    words: dict[str, list[int]] = {}  # distinct chunk -> cuts, replayed once
    pos = budget = 0
    truncated = False
    for start, end in spans:
        if budget >= VIEW_BYTES:
            truncated = True
            break
        if start > pos:
            pieces.append(corpus[pos:start])
        chunk = corpus[start:end]
        cuts = words.get(chunk)
        if cuts is None:
            cuts = words[chunk] = _replay([list(chunk.encode("utf-8"))], merges, _next_id)[0]
        data_len = len(chunk.encode("utf-8"))
        if budget + data_len > VIEW_BYTES:  # one huge chunk (pattern "none"): show its start
            chunk = _utf8_prefix(chunk, VIEW_BYTES - budget)
            data_len = len(chunk.encode("utf-8"))
            cuts = cuts[: max(data_len - 1, 0)]
            truncated = True
        pieces.append([chunk, cuts])
        budget += data_len
        pos = end
        if truncated:
            break
    else:
        if pos < len(corpus):
            pieces.append(corpus[pos:])
    return {"pieces": pieces, "truncated": truncated}


def _utf8_prefix(text: str, max_bytes: int) -> str:
    return text.encode("utf-8")[:max_bytes].decode("utf-8", "ignore")


def _next_id(step: int, left: Any, right: Any) -> int:
    return 256 + step


# ----- classic -----------------------------------------------------------------------------


def _learn_classic(req: Request) -> dict:
    symbols: dict[str, int] = {}

    def sid(symbol: str) -> int:
        return symbols.setdefault(symbol, len(symbols))

    word_counts = classic.count_words(req.corpus)
    for word in word_counts:
        for symbol in classic.word_symbols(word):
            sid(symbol)
    steps = []
    merges: list[tuple[str, str]] = []
    for t in classic.learn_steps(word_counts, req.num_merges, req.min_frequency, top=10):
        left, right = t["pair"]
        merges.append((left, right))
        steps.append(
            {
                "pair": [sid(left), sid(right)],
                "id": sid(left + right),
                "count": t["count"],
                "tied": t["n_tied"] > 0,
                "n_tied": t["n_tied"],
                "tied_with": [[sid(a), sid(b)] for a, b in t["tied_with"]],
                "rule": RULES["classic"] if t["n_tied"] > 0 else None,
                "top": [[sid(a), sid(b), c] for (a, b), c in t["top_pairs"]],
            }
        )
    stop_reason = None
    if len(steps) < req.num_merges:
        stop_reason = (
            f"no pair occurs {req.min_frequency} or more times"
            if req.min_frequency > 1
            else "no pairs left: every word is a single symbol"
        )
    return {
        "mode": "classic",
        "min_frequency": req.min_frequency,
        "num_merges": req.num_merges,
        "vocab": list(symbols),
        "steps": steps,
        "stop_reason": stop_reason,
        "capped": False,
        "stats": {"words": sum(word_counts.values()), "unique_words": len(word_counts)},
        "view": _classic_view(req.corpus, merges),
    }


def _classic_view(corpus: str, merges: list[tuple[str, str]]) -> dict:
    """Lines split as subword-nmt reads them; words are pieces, spaces and line ends are text."""
    raw: list[Any] = []
    size = 0
    truncated = False
    for line in corpus.splitlines(keepends=True):
        if size >= VIEW_BYTES:
            truncated = True
            break
        size += len(line.encode("utf-8"))
        body = line.strip("\r\n ")
        lead = len(line) - len(line.lstrip("\r\n "))
        if not body:
            raw.append(line)
            continue
        if lead:
            raw.append(line[:lead])
        for i, word in enumerate(body.split(" ")):
            if i:
                raw.append(" ")
            if word:
                raw.append((word,))
        if lead + len(body) < len(line):
            raw.append(line[lead + len(body) :])
    distinct = list(dict.fromkeys(p[0] for p in raw if isinstance(p, tuple)))
    units = [list(classic.word_symbols(word)) for word in distinct]
    cuts = dict(zip(distinct, _replay(units, merges, _joined), strict=True))
    pieces: list[Any] = []
    for p in raw:
        if isinstance(p, tuple):
            pieces.append([p[0], cuts[p[0]]])
        elif pieces and isinstance(pieces[-1], str):
            pieces[-1] += p
        else:
            pieces.append(p)
    return {"pieces": pieces, "truncated": truncated}


def _joined(step: int, left: str, right: str) -> str:
    return left + right


# ----- replaying merges on the shown words ------------------------------------------------


def _replay(words: list[list[Any]], merges: list[tuple[Any, Any]], made) -> list[list[int]]:
    """For each word (a list of unit symbols), the step that removed each boundary (-1: never).

    Merges are applied in order, each to all its occurrences left to right without overlap,
    exactly as training does. A linked list of symbols per word and an index pair ->
    (word, position) make every merge touch only its own occurrences (pattern "none" makes
    one word of the whole corpus). A symbol keeps the position of its first unit.
    """
    cuts = [[-1] * max(len(w) - 1, 0) for w in words]
    value = [list(w) for w in words]
    nxt = [[*range(1, len(w)), -1] for w in words]
    prv = [[-1, *range(len(w) - 1)] for w in words]
    where: dict[tuple[Any, Any], list[tuple[int, int]]] = {}
    for wi, w in enumerate(words):
        for i in range(len(w) - 1):
            where.setdefault((w[i], w[i + 1]), []).append((wi, i))
    for step, (left, right) in enumerate(merges):
        spots = where.pop((left, right), None)
        if not spots:
            continue
        new = made(step, left, right)
        for wi, i in sorted(set(spots)):
            val, nx, pv = value[wi], nxt[wi], prv[wi]
            j = nx[i]
            if val[i] != left or j < 0 or val[j] != right:
                continue  # merged away earlier in this step, or by an earlier merge
            cuts[wi][j - 1] = step
            val[i] = new
            val[j] = None
            after = nx[j]
            nx[i] = after
            if after >= 0:
                pv[after] = i
                where.setdefault((new, val[after]), []).append((wi, i))
            before = pv[i]
            if before >= 0:
                where.setdefault((val[before], new), []).append((wi, before))
    return cuts


# ----- tokens at a step --------------------------------------------------------------------


def _units(mode: str, text: str) -> list[Any]:
    return list(text.encode("utf-8")) if mode == "bytes" else list(text)


def render(result: dict, k: int) -> list[Any]:
    """The view's pieces after k merges: text pieces as they are, words as lists of
    [token id, token text, newest]; the same rule as web/learn.js (see the module docstring)."""
    steps, vocab, mode = result["steps"], result["vocab"], result["mode"]
    symbol_id = {symbol: i for i, symbol in enumerate(vocab)} if mode == "classic" else {}
    out: list[Any] = []
    for piece in result["view"]["pieces"]:
        if isinstance(piece, str):
            out.append(piece)
            continue
        text, cuts = piece
        units = _units(mode, text)
        tokens = []
        start = 0
        for j in range(len(units)):
            if j == len(units) - 1 or cuts[j] < 0 or cuts[j] >= k:
                inner = cuts[start:j]
                last = max(inner, default=-1)
                part = units[start : j + 1]
                if mode == "bytes":
                    tid = steps[last]["id"] if last >= 0 else part[0]
                    shown = vocab[tid]
                else:
                    shown = "".join(part) + (classic.END_OF_WORD if j == len(units) - 1 else "")
                    tid = symbol_id[shown] if last < 0 else steps[last]["id"]
                tokens.append([tid, shown, k > 0 and last == k - 1])
                start = j + 1
        out.append(tokens)
    return out


# ----- adopting the result -----------------------------------------------------------------


def to_tokenizer(request: dict) -> Tokenizer:
    """The worker's `learn_adopt` op: the first `step` merges (default: all) as a Tokenizer.

    Byte mode only. Classic BPE works on characters with `</w>` glued to a word's last one
    and splits words at spaces; a byte-level tokenizer has neither an end-of-word symbol nor
    that split, so classic merges cannot be turned into byte-level ranks that segment the
    same way, and the page says so instead of offering an approximation.
    """
    req = parse_request(request)
    if req.mode != "bytes":
        raise ValueError(
            "classic BPE (characters + </w>, words split at spaces) is not byte-level, so it "
            "cannot join the byte-level comparison; learn in byte-level mode to use the result"
        )
    compile_pattern(req.pattern)
    counts, _ = count_chunks(req.corpus, req.pattern)
    k = req.num_merges if req.step is None else min(req.step, req.num_merges)
    result = learn_merges(counts, k, tie_break=req.tie_break, min_frequency=req.min_frequency)
    name = f"learned-{req.pattern if len(req.pattern) <= 12 else 'regex'}-{len(result.merges)}"
    return Tokenizer.from_merges(
        result.merges,
        req.pattern,
        name=name,
        metadata={
            "trainer": "learn view",
            "training": {
                "pattern": req.pattern,
                "tie_break": req.tie_break,
                "min_frequency": req.min_frequency,
                "merges": len(result.merges),
            },
        },
    )
