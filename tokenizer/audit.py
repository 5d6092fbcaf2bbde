"""Audit a vocabulary: which tokens are pieces of characters, can never be produced, never occur.

`audit(tok)` looks at every mergeable id (the 256 bytes, every merge, and later ids whose
bytes repeat an earlier token's; special tokens are left out) and reports:

* partial_utf8: ids whose bytes are not valid UTF-8 on their own (a piece of a character,
  e.g. the first two bytes of "你");
* unreachable: ids that encoding their own bytes does not give back as that single id.
  For a token that is valid UTF-8 that is `encode_ordinary(text) == [id]`, which holds
  exactly when the split pattern leaves the text in one chunk and the text's bytes rank as
  this id: a whole chunk that is a token is looked up before any merging (as tiktoken
  does), while two or more chunks (or a dropped character) give two or more ids, or other
  ones. For a partial-UTF-8 token, which text can only reach from inside a longer chunk,
  it is BPE on its bytes alone, the merge loop without that lookup (tiktoken's
  `_educational.bpe_encode`). A later id that repeats an earlier token's bytes is always
  unreachable: the encoder uses the earlier one.
* unused (only with corpus_texts): ids never emitted when encoding the texts, special
  tokens' text being ordinary text (tiktoken's disallowed_special=()): candidates for the
  under-trained "glitch tokens" of Land & Bartolo (2024);
* duplicates: [id the encoder uses, later id] for each later id with the same bytes;
* longest: the LONGEST_SHOWN longest tokens by byte length; equal lengths go by id, lower first;
* by_script: how many ids carry each label of tokenizer.unicode_script (the Unicode script
  of the text, or Partial UTF-8, Mixed, Whitespace, Digits, Common), most first, then by
  name; the counts add up to the number of mergeable ids.
Every list of ids is in ascending order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from .core import Tokenizer
from .stats import as_texts
from .unicode_script import token_script

LONGEST_SHOWN = 20  # the "top 20 by byte length"


def mergeable_ids(tok: Tokenizer) -> list[int]:
    """Every id that stands for bytes (not a special token), ascending."""
    return sorted({*tok.mergeable_ranks.values(), *tok.duplicate_ids})


def is_reachable(tok: Tokenizer, token_id: int, token: bytes) -> bool:
    """Whether encoding `token` (its text, or its bytes if not UTF-8) gives exactly [token_id]."""
    if tok.mergeable_ranks.get(token) != token_id:
        return False  # a later duplicate: the encoder uses the earlier id
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return tok.bpe_merge(token) == [token_id]  # the merge loop, no lookup
    if tok.preparation is not None or not tok.chunk_lookup:  # a HF file's: no whole-chunk shortcut
        return tok.encode_ordinary(text) == [token_id]
    return tok.split(text) == [text]


def unused_ids(tok: Tokenizer, texts: str | Iterable[str]) -> list[int]:
    """Mergeable ids that encoding `texts` (special tokens as ordinary text; one str is one
    text) never emits."""
    seen: set[int] = set()
    for text in as_texts(texts):
        seen.update(tok.encode_ordinary(text))
    return [i for i in mergeable_ids(tok) if i not in seen]


def audit(tok: Tokenizer, *, corpus_texts: str | Iterable[str] | None = None) -> dict[str, Any]:
    """The audit of `tok` as a JSON-ready dict (see the module docstring for each key)."""
    if not isinstance(tok, Tokenizer):  # else "'NoneType' object has no attribute ..."
        raise TypeError(f"audit takes a Tokenizer (get_encoding, Tokenizer.load), got {type(tok).__name__}")
    ids = mergeable_ids(tok)
    tokens = [tok.decode_single_token_bytes(i) for i in ids]
    partial = []
    for i, token in zip(ids, tokens, strict=True):
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            partial.append(i)
    scripts = Counter(map(token_script, tokens))
    result: dict[str, Any] = {
        "n_vocab": tok.n_vocab,
        "partial_utf8": partial,
        "unreachable": [i for i, t in zip(ids, tokens, strict=True) if not is_reachable(tok, i, t)],
    }
    if corpus_texts is not None:
        result["unused"] = unused_ids(tok, corpus_texts)
    result["duplicates"] = [[first, later] for later, first in sorted(tok.duplicate_ids.items())]
    by_length = sorted(zip(ids, tokens, strict=True), key=lambda it: (-len(it[1]), it[0]))
    result["longest"] = [i for i, _ in by_length[:LONGEST_SHOWN]]
    result["by_script"] = dict(sorted(scripts.items(), key=lambda kv: (-kv[1], kv[0])))
    return result
