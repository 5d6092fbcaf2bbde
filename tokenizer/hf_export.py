"""Export to a Hugging Face `tokenizer.json` that gives our ids with `tokenizers` (import: hf_import.py).

Our encoder (as tiktoken's) merges, inside each chunk, the adjacent pair whose *concatenated
bytes* have the lowest rank, and takes a chunk that is itself a token whole. HF's BPE model
merges the listed *pair* of lowest priority. Three choices make HF follow the ranks:

- merges are derived from the ranks, not copied from training: for each token, in rank
  order, every split into two tokens is listed (as HF's own tiktoken converter does). The
  encoder may reach a token through a split that training never made (`a bc` where
  training merged `ab c`, or a run like `aa aaa`), and HF merges only what is listed.
- `ignore_merges: true`: a pre-token that is in the vocabulary is taken whole, as our
  whole-chunk lookup does (BPE on its bytes need not end in that token).
- the split regex keeps only its matches (`Split` with `invert` and `removed`) when the
  pattern is not one of the named ones, because `findall` drops unmatched text while
  the usual `isolated` split keeps it; the named patterns match every character, so they
  use the conventional `isolated` form.

A preparation (preparation.py) is written as HF's own steps: the normalizations as HF's
normalizers of those names, the pre-splits as Splits before the pattern's, the prefix space as `ByteLevel(add_prefix_space=true)`, alone (with
`use_regex` for the gpt2 pattern) for SEGMENT, after the `Split` for CHUNK; the added tokens'
options (lstrip, rstrip, single_word, and `normalized` for the two passes) as they were read.
A special token is listed in model.vocab too (its id kept across gaps), except where one a
dropped single_word match can hide would be made there by HF's BPE: HF numbers those itself.
A space before the segment followed by a pattern other than gpt2's has no HF form and is refused. A tokenizer with
`chunk_lookup=False` gets `ignore_merges: false`.

Still not expressible: two splits of one token competing for the same symbol (`ab a ba`
for `aba`), where we take the leftmost and HF the one listed first; and tokens whose bytes
duplicate an earlier token (only the id the encoder uses is exported). A custom pattern holding
what Oniguruma (HF) reads otherwise than `regex` (ours) is refused, by the check the import runs
(hf_conventions.oniguruma_only: `^`/`$` are line anchors there, `&&` and `[` in a class set
operations, `(?i:ss)` also matches 'ß'); the named patterns agree on every code point (both
sides use Unicode 16.0 tables, as tiktoken does; see patterns.py).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

from ._bpe import cuts_at_token_lengths
from .added_tokens import hidden_by_dropped
from .core import Tokenizer
from .formats import atomic_write_text
from .hf_conventions import bytes_to_unicode, oniguruma_only, oniguruma_regex
from .patterns import NO_SPLIT, PATTERNS, resolve_pattern
from .preparation import SEGMENT, Preparation


def token_string(token: bytes) -> str:
    """Token bytes as a byte-level HF vocabulary string."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


def merges_from_ranks(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Every split of every token into two tokens, ordered by the token's rank.

    Splits of one token are ordered by their parts' ranks (HF's converter does the same);
    the rank encoder gives them all the token's rank and merges the leftmost first.
    """
    merges: list[tuple[int, int, int, bytes, bytes]] = []
    cuts = cuts_at_token_lengths(ranks)
    for token, rank in ranks.items():
        for i in cuts(len(token)):
            left, right = token[:i], token[i:]
            left_rank, right_rank = ranks.get(left), ranks.get(right)
            if left_rank is not None and right_rank is not None:
                merges.append((rank, left_rank, right_rank, left, right))
    merges.sort()
    return [(left, right) for _, _, _, left, right in merges]


def pre_tokenizer(pattern: str, preparation: Preparation | None = None) -> dict[str, Any]:
    """HF's steps for our split `pattern` and the preparation's pre-splits and prefix space."""
    steps = [split_step(p) for p in (preparation.pre_splits if preparation else ())]
    last = _last_steps(pattern, preparation.prefix_space if preparation else None)
    if not steps:
        return last
    return {"type": "Sequence", "pretokenizers": steps + last.get("pretokenizers", [last])}


def split_step(pattern: str) -> dict[str, Any]:
    """HF's Split for a pattern: `isolated` for the named ones (they match every character),
    else the matches only (`removed` + invert), which is `findall`."""
    regex = resolve_pattern(pattern)
    if not regex:
        raise ValueError("the tokenizer's split pattern is empty")
    named = regex in PATTERNS.values()
    written = oniguruma_regex(regex)
    construct = oniguruma_only(written, anchors=not named)  # what the import refuses, refused here too
    if construct:
        raise ValueError(
            f"the split regex holds {construct}, which HF's Oniguruma reads otherwise (`$` and `^` are "
            "line anchors there), so HF tokenizers would split and encode otherwise: no tokenizer.json "
            "is written. The .json + .tiktoken pair keeps it exactly"
        )
    return {
        "type": "Split",
        "pattern": {"Regex": written},
        "behavior": "Isolated" if named else "Removed",
        "invert": not named,
    }


def _last_steps(pattern: str, prefix_space: str | None) -> dict[str, Any]:
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": prefix_space is not None,
        "trim_offsets": True,
        "use_regex": False,
    }
    if pattern == NO_SPLIT:
        return byte_level  # one sequence: merges may cross spaces
    if prefix_space == SEGMENT:
        if resolve_pattern(pattern) != PATTERNS["gpt2"]:
            raise ValueError(
                "a space before the text, then a split pattern other than gpt2's, has no HF form: HF's "
                "ByteLevel puts the space only before its own (gpt2) split or each chunk of a Split"
            )
        return {**byte_level, "use_regex": True}
    return {"type": "Sequence", "pretokenizers": [split_step(pattern), byte_level]}


def added_token_options(token: str, preparation: Preparation | None) -> dict[str, bool]:
    """HF's options of a special token: none, or those it was imported with (added_tokens.py),
    `normalized: false` for the ones HF finds in its first pass."""
    added = preparation.added if preparation else None
    if not added:
        return {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False}
    options = {option: token in getattr(added, option) for option in ("single_word", "lstrip", "rstrip")}
    # `first` is the exact normalized=false set where an option or the two passes were kept; else
    # (hf_import.py) it was not needed: every token found in the text as given, normalized=false
    exact = added.first or replace(added, not_special=frozenset())
    return {**options, "normalized": token not in added.first if exact else False}


def normalizer(preparation: Preparation | None) -> dict[str, Any] | None:
    """HF's normalizer for the preparation's normalizations (None without any)."""
    steps = [{"type": form} for form in (preparation.normalizers if preparation else ())]
    if len(steps) <= 1:
        return steps[0] if steps else None
    return {"type": "Sequence", "normalizers": steps}


def _check_special_clashes(tok: Tokenizer, vocab: dict[str, int]) -> None:
    """tokenizer.json keys its vocabulary by text, in GPT-2's byte alphabet, where '(' is the
    text of the byte token 40: a special token of that text has no place (ids cannot clash:
    the Tokenizer refuses that)."""
    for text in tok.special_tokens:
        if text in vocab:
            raise ValueError(
                f"special token {text!r} is the text of ordinary token {vocab[text]} in tokenizer.json's "
                "byte alphabet, which keys tokens by text; rename it (e.g. <|...|>) to export it"
            )


def _kept_out_of_vocab(tok: Tokenizer, size: int) -> set[str]:
    """The special tokens to keep out of model.vocab (of `size` tokens without them): none, unless
    one may start inside a single_word match HF drops (hidden_by_dropped). Listed there, a chunk
    of its text would come out of HF's BPE as it ("hello" single_word after a mark: "\u0301hello"
    is h, e, l, lo in HF's own file and ours, and was one id in the export), as hf_import refuses
    of a file. HF numbers the tokens model.vocab lacks from its size up, in file order: the
    tokens from there on (the last ids, one after the other) are kept out; ValueError if the
    hidden ones are not among them."""
    dropped = tok.preparation.added.single_word if tok.preparation and tok.preparation.added else ()
    hidden = [text for text in tok.special_tokens if any(hidden_by_dropped(text, d) for d in dropped)]
    if not hidden:
        return set()
    special = sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    largest_rank = max(tok.mergeable_ranks.values())
    for k, (_, first) in enumerate(special):  # from the most tokens kept out to the fewest
        run = [token_id for _, token_id in special[k:]]
        if first == size + k and first > largest_rank and run == list(range(first, first + len(run))):
            if all(tok.special_tokens[text] >= first for text in hidden):
                return {text for text, _ in special[k:]}
            break
    text = min(hidden, key=tok.special_tokens.__getitem__)
    raise ValueError(
        f"special token {text!r} (id {tok.special_tokens[text]}) has no place in a tokenizer.json: with "
        "single_word (HF drops a match beside a word character) it must stay out of model.vocab, where "
        "HF's BPE would make it, and HF numbers such tokens itself, one after the other from the "
        "vocabulary's size; give the special tokens from it on the last ids, or drop single_word"
    )


def to_hf_json(tok: Tokenizer) -> dict[str, Any]:
    """The `tokenizer.json` content (a dict) for `tok`."""
    try:  # first: a split HF cannot run alike is refused before the vocabulary is built
        pre = pre_tokenizer(tok.pattern, tok.preparation)
    except ValueError as e:
        raise ValueError(f"tokenizer {tok.name!r}: {e}") from None
    ranks = tok.mergeable_ranks
    vocab = {token_string(token): rank for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])}
    if len(set(vocab.values())) != len(vocab):
        raise ValueError(f"tokenizer {tok.name!r}: two tokens share a rank; HF needs one id per token")
    _check_special_clashes(tok, vocab)
    # HF numbers added tokens after the model's vocabulary unless the model has them: listing
    # them there keeps ids across gaps (cl100k_base has no 100256; <|endoftext|> is 100257).
    # Not those a dropped single_word match can hide: HF's BPE would make them there.
    outside = _kept_out_of_vocab(tok, len(vocab))
    vocab.update((text, token_id) for text, token_id in tok.special_tokens.items() if text not in outside)
    merges = [[token_string(left), token_string(right)] for left, right in merges_from_ranks(ranks)]
    added_tokens = [
        {
            "id": token_id,
            "content": content,
            **added_token_options(content, tok.preparation),
            "special": content not in tok.always_matched,
        }
        for content, token_id in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens,
        "normalizer": normalizer(tok.preparation),
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": tok.chunk_lookup,
            "vocab": vocab,
            "merges": merges,
        },
    }


def export_hf(tok: Tokenizer, path: str | os.PathLike) -> None:
    """Write `tok` as a Hugging Face `tokenizer.json` (atomically)."""
    atomic_write_text(path, json.dumps(to_hf_json(tok), ensure_ascii=False))
