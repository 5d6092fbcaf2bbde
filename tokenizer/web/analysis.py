"""The page's "know your tokenizer" views, worker side: audit, stats and parity, sweep, diff.

The figures are the library's own (tokenizer.audit, tokenizer.stats, tokenizer.vocab_diff),
so the page shows exactly what `python -m tokenizer audit|stats|diff --json` prints; this
module only shapes them for the page, which must never receive a huge list at once:

- an audit's lists can be long (on a short text, nearly every id of o200k is "unused"), so
  `audit_summary` sends the counts and the short lists only, keeps the whole result on the
  tokenizer object, and `audit_page` sends one page of one list, filtered by a search;
- a token travels as [id, hex of its bytes]; the page renders it as the panels do.

The audit without a corpus depends on the tokenizer alone and takes seconds for o200k, so it is
computed once per tokenizer; "unused" depends on the text and is recomputed for each.
"""

from __future__ import annotations

import time
from typing import Any

from ..audit import audit, unused_ids
from ..core import Tokenizer
from ..stats import check_languages, language_rows, sweep, text_stats, udhr_sections, well_formed
from ..vocab_diff import diff

AUDIT_LISTS = ("partial_utf8", "unreachable", "unused", "duplicates")  # the lists audit_page pages
INPUT_NAME = "input"  # the "file" of the page's results: the text in the input box


def _audit(tok: Tokenizer) -> dict[str, Any]:
    """audit(tok) without a corpus, cached on the tokenizer (the tokenizer never changes)."""
    cached = getattr(tok, "_playground_audit", None)
    if cached is None:
        cached = audit(tok)
        tok._playground_audit = cached
    return cached


def _row(tok: Tokenizer, token_id: int) -> list[Any]:
    return [token_id, tok.decode_single_token_bytes(token_id).hex()]


def audit_summary(tok: Tokenizer, text: str | None) -> dict[str, Any]:
    """Counts, the longest tokens and the scripts; with `text`, unused ids against it.

    The whole result (exactly audit(tok, corpus_texts=[text])) stays on the tokenizer for
    audit_page; `result` in the answer is that dict without its long lists.
    """
    t = time.perf_counter()
    result = dict(_audit(tok))
    if text is not None:
        result["unused"] = unused_ids(tok, [text])
    tok._playground_last_audit = result
    return {
        "result": {k: v for k, v in result.items() if k not in AUDIT_LISTS},
        "counts": {key: len(result[key]) for key in AUDIT_LISTS if key in result},
        "mergeable": sum(result["by_script"].values()),
        "longest": [_row(tok, i) for i in result["longest"]],
        "ms": (time.perf_counter() - t) * 1000,
    }


def audit_page(tok: Tokenizer, key: str, query: str, offset: int, limit: int) -> dict[str, Any]:
    """One page of one list of the last audit_summary: rows [id, hex] (a duplicate: [id, hex,
    the id the encoder uses instead]), only tokens whose bytes contain the query's UTF-8."""
    result = getattr(tok, "_playground_last_audit", None)
    if result is None or key not in result or key not in AUDIT_LISTS:
        raise ValueError(f"no audit list {key!r} for {tok.name}: run the audit first")
    if key == "duplicates":
        rows = [[later, first] for first, later in result[key]]
    else:
        rows = [[i] for i in result[key]]
    if query:
        q = well_formed(query).encode("utf-8")  # a lone surrogate as the panels show it, U+FFFD
        rows = [r for r in rows if q in tok.decode_single_token_bytes(r[0])]
    page = [_row(tok, r[0]) + r[1:] for r in rows[offset : offset + limit]]
    return {"total": len(rows), "rows": page}


def stats(toks: dict[str, Tokenizer], text: str, udhr: str | None) -> dict[str, Any]:
    """`stats --json` for the input text (file "input"); with a UDHR-style text, the languages."""
    out: dict[str, Any] = {
        "results": [
            {"tokenizer": name, "file": INPUT_NAME, **text_stats(tok, text)} for name, tok in toks.items()
        ]
    }
    if udhr:
        sections = udhr_sections(udhr, source="the UDHR text")
        check_languages(sections, source="the UDHR text")
        out["languages"] = [
            row for name, tok in toks.items() for row in language_rows(tok, sections, name=name)
        ]
    return out


def default_sizes(tok: Tokenizer) -> list[int]:
    """Powers of two from the smallest size keeping every byte, then the full vocabulary."""
    top = max(tok.mergeable_ranks.values()) + 1
    low = max(tok.mergeable_ranks[bytes([b])] for b in range(256)) + 1
    return [v for v in (1 << k for k in range(8, 32)) if low <= v < top] + [top]


def sweep_rows(tok: Tokenizer, text: str, sizes: list[int] | None, *, name: str) -> dict[str, Any]:
    """`stats --sweep` rows for the input text (default_sizes when none given), and its bytes."""
    sizes = sizes or default_sizes(tok)
    return {"sweep": sweep(tok, [text], sizes, name=name), "bytes": len(well_formed(text).encode("utf-8"))}


def vocab_diff(a: Tokenizer, b: Tokenizer) -> dict[str, Any]:
    """`diff A B --json`."""
    return diff(a, b)
