"""Import a Hugging Face `tokenizer.json`: byte-level BPE loaded exactly, or refused by name.

A Tokenizer is a split pattern, ranks and special tokens, nothing else; a tokenizer.json is a
pipeline (normalizer, pre-tokenizers, model, added tokens). We load a file only when that
pipeline gives the ids our encoder gives, and refuse it otherwise, naming the component, so
a file is never loaded as something else. What maps exactly, and why:

- model: `BPE` over GPT-2's byte alphabet, no byte_fallback, no subword prefix or suffix, no
  dropout (null, or a number HF's f32 reads as 0: 1e-300; at 1 HF skips every merge, between
  0 and 1 it skips them at random: refused, _check_dropout). Ids become ranks: HF merges the listed pair of lowest priority, our encoder the
  pair whose bytes have the lowest rank; the two agree when every merge's result has a
  larger id than the merges before it, every token that two tokens join into is made by a
  merge, and by the very pair our encoder joins into it (all three checked here; trained and
  converted files are built that way).
  `ignore_merges: true` takes a pre-token that is in the vocabulary whole, as our encoder (and
  tiktoken) does; `false` (or absent, HF's default) lets the merges alone decide, which can end
  elsewhere for a token the merges do not reach from its bytes: loaded with
  `chunk_lookup=False` (core.py), the merge loop without the whole-chunk lookup.
- normalizer: NFC, NFD, NFKC, NFKD or a `Sequence` of them, applied exactly
  (preparation.py: HF's older Unicode tables reproduced). HF finds an added token with
  `normalized: true` in the normalized text, we in the text as given: loaded only when
  normalization can neither change, make nor join any of its characters
  (preparation.changed_char: GPT-NeoX's runs of spaces under NFC), else refused naming it.
  One with `normalized: false` that is also a token of model.vocab HF's BPE makes (by a merge,
  or whole with ignore_merges where the split can make it one chunk, _chunk_reach.py: never
  Llama 3's "<|endoftext|>") is refused where normalization can make its text from text
  without it (preparation.made_by_normalizing: NFD makes "the" from "thé"): HF's BPE gives its id
  there, ours has no special token in its ranks (hf_added.check_made_by_normalizer).
- pre-tokenizer: steps that split, then `ByteLevel` (which maps bytes to the alphabet). The
  last splitting step is the pattern; the ones before it are pre-splits (preparation.py), each
  run on every piece of the one before, as HF does. `ByteLevel(add_prefix_space=true)` puts a
  space before each piece it is given that lacks one: the text between added tokens when it
  is alone, each piece before its own gpt2 split, each chunk when it follows a split
  (preparation.py's SEGMENT and CHUNK, checked with `tokenizers` in the tests).
  `ByteLevel(use_regex=true)` splits with GPT-2's regex (the `gpt2` pattern: tests/test_hf_import.py compares the ids with `tokenizers` on real text). A
  `Split` with `Removed` + invert keeps only the matches: exactly `findall`. A `Split`
  with `Isolated` keeps the text between matches too: `R|(?:(?!R)[\\s\\S])+` finds the same
  pieces (a gap is a run of positions where R cannot start), and the named patterns match
  everything, so they are kept by name. A Split's `\\w`, `\\W`, `\\b`, `\\B` are written out
  as Oniguruma's word class (hf_conventions.py: "²" is a word character there, ZWJ is not).
  Its \\x{41} and \\x7 (Oniguruma's code point and short hex escapes) are written as characters
  both engines read alike; \\xe9 (a UTF-8 byte there) and the other forms are refused.
  `Digits` is the Isolated split of `\\p{N}+` (or of `\\p{N}` with individual_digits), with
  the numerals of Rust's Unicode (`_NUMERALS`).
  No pre-tokenizer step at all: the text is one chunk.
- added tokens become special tokens: HF matches every added token in the text, so ids
  equal HF's with allowed_special="all". Each needs the seven fields HF requires (id, content,
  single_word, lstrip, rstrip, normalized, special): HF refuses a file whose entry lacks one. Those that are not special (`"special": false`) are
  matched whatever the caller allows, by `encode` and `encode_ordinary` alike (the
  Preparation's `added.not_special`, added_tokens.py), as HF matches them in any text; their
  ids equal HF's with the defaults. One HF's ByteLevel decoder reads as
  other bytes than its text (every character in the alphabet: "naïve", "Ġthe") is refused.
  HF looks for the `normalized: false` ones first and the others between them, we for all at
  once (leftmost, then longest), except in a file where a token of the second kind contains
  or overlaps one of the first (only there the two orders can differ): there added_tokens.py
  takes HF's two passes.
  lstrip, rstrip and single_word (RoBERTa's, BART's and Longformer's `<mask>` has lstrip) are
  reproduced by added_tokens.py (the whitespace a token takes in gives no ids; single_word
  drops a match beside a word character; HF's two passes kept), saved as the Preparation's
  `added`. Refused: such an option on a `normalized: true` token under a normalizer (HF
  looks at its neighbours in the normalized text: NFKC makes "①" the word character "1"),
  single_word on a token that is, holds or overlaps an added token model.vocab also has (where
  HF drops the match its BPE can make that token, ours not). A text HF panics on
  (added_tokens.py) raises ValueError.
- post-processors that only add tokens around the ids (TemplateProcessing, ByteLevel,
  RobertaProcessing, BertProcessing, or a `Sequence` of them, as Llama 3's) are ignored: ids
  equal HF's `encode(text, add_special_tokens=False)`.
- decoder: `ByteLevel` (alone or the only step of a `Sequence`): decode gives the tokens'
  bytes, as HF's `decode(ids, skip_special_tokens=False)`. Any other decoder gives other text:
  refused. A file without one is loaded and decodes as with ByteLevel (HF would join the
  tokens' alphabet strings with spaces: "HelloĠworld" as "Hello Ġworld", no one's text).
- `truncation` and `padding` (other than BatchLongest's, which leaves one text alone) change
  what encode gives: refused.

Refused: other normalizers (Lowercase, Replace, Prepend, Strip, BertNormalizer, Precompiled,
...: they change the text in ways not reproduced here), `Metaspace` and other pre-tokenizers
(Whitespace, BertPreTokenizer, ...), other Split behaviours, WordPiece/Unigram/WordLevel models.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any, NamedTuple

from ._bpe import RanksWithout, bpe_merge, bpe_parts, cuts_at_token_lengths
from ._chunk_reach import can_be_chunk
from ._hf_steps import flag, kind, refuse, sequence_steps
from .formats import LONG_TOKEN
from .hf_added import (
    check_added_ids,
    check_added_token_bytes,
    check_dropped_matches,
    check_made_by_normalizer,
    read_added_tokens,
)
from .hf_conventions import (
    bytes_to_unicode,
    hex_escapes_from_oniguruma,
    oniguruma_only,
    regex_from_oniguruma,
    word_escapes_from_oniguruma,
)
from .patterns import NO_SPLIT, PATTERNS
from .preparation import (
    CHUNK,
    NORMALIZATIONS,
    SEGMENT,
    Preparation,
    check_step_count,
    unicode_checked,
)
from .regex_check import check_hf_split_regex
from .validate import TokenizerFileError, check_id, check_type

IGNORED_POST_PROCESSORS = ("TemplateProcessing", "ByteLevel", "RobertaProcessing", "BertProcessing")
# HF's Digits splits where Rust's char::is_numeric (categories N*) changes, at the Unicode of the
# Rust that built `tokenizers` (17.0 for 0.23), not Oniguruma's 16.0, which a pre-split's \p{N}
# has (preparation.py): 17.0's numerals beyond 16.0 are these 13, written as characters, which
# every engine (ours, `regex`, Oniguruma after an export) reads alike.
_NUMERALS = "\\p{N}\U00011de0-\U00011de9\U00016ff4-\U00016ff6"
_DIGITS = f"[{_NUMERALS}]+|[^{_NUMERALS}]+"
_DIGIT = f"[{_NUMERALS}]|[^{_NUMERALS}]+"


class HfTokenizer(NamedTuple):
    """The parts of a Tokenizer with the same ids as a tokenizer.json (readers.hf_parts wraps them)."""

    ranks: dict[bytes, int]
    pattern: str
    special_tokens: dict[str, int]
    preparation: Preparation | None
    chunk_lookup: bool


def parse_hf(obj: Any, source: str = "tokenizer.json") -> HfTokenizer:
    """A byte-level BPE `tokenizer.json` (as a dict), checked step by step (module docstring)."""
    if not isinstance(obj, dict):
        raise TokenizerFileError(f"{source}: expected a JSON object at the top level")
    model = _model(obj.get("model"), source)
    normalizers = _normalizers(obj.get("normalizer"), source)
    _check_post_processor(obj.get("post_processor"), source)
    _check_truncation_and_padding(obj, source)
    _check_decoder(obj.get("decoder"), source)
    pattern, prefix_space, pre_splits = _pattern(obj.get("pre_tokenizer"), source)
    special, added = read_added_tokens(obj.get("added_tokens"), source, normalizers)
    check_added_token_bytes(special, model["vocab"], source)
    check_dropped_matches(list(special), added, model["vocab"], source)
    try:
        preparation = Preparation(normalizers, prefix_space, pre_splits, added or None) or None
    except ValueError as e:  # a Split's regex that our engine cannot compile
        raise TokenizerFileError(f"{source}: pre_tokenizer: {e}") from None
    chunk_lookup = flag(model, "ignore_merges", False, source, "model", nullable=True)
    cut_out = [token for token in special if not (added and token in added.single_word)]
    ranks, made = _ranks(model, special, source, cut_out)
    check_added_ids(special, model["vocab"], source)
    bpe_makes = {
        token
        for token in special
        if token in model["vocab"]
        and (model["vocab"][token] in made or (chunk_lookup and _taken_whole(token, pattern, prefix_space)))
    }
    check_made_by_normalizer(obj.get("added_tokens"), bpe_makes, normalizers, source)
    return HfTokenizer(ranks, pattern, special, preparation, chunk_lookup)


def _taken_whole(token: str, pattern: str, prefix_space: str | None) -> bool:
    """Whether ignore_merges can take `token` whole: some chunk's byte-level string is it. Not for
    a token with a character outside GPT-2's alphabet (no chunk's string has one), nor for one the
    split never makes one chunk (_chunk_reach.py: Llama 3's cuts "<|endoftext|>" in three)."""
    alphabet = set(bytes_to_unicode().values())
    return all(ch in alphabet for ch in token) and can_be_chunk(token, pattern, prefix_space)


def _check_post_processor(post: Any, source: str) -> None:
    """Post-processors that only add tokens around the ids, alone or in a `Sequence` (Llama 3's
    is ByteLevel then TemplateProcessing), are ignored; any other is refused."""
    if post is None:
        return
    for step in sequence_steps(post, "processors", source, "post_processor"):
        if not isinstance(step, dict) or step.get("type") not in IGNORED_POST_PROCESSORS:
            refuse(source, "post_processor", kind(step))


def _check_truncation_and_padding(obj: dict[str, Any], source: str) -> None:
    """HF's encode cuts the ids at `truncation`'s max_length and pads them to a `Fixed` length or a
    `pad_to_multiple_of`: ids we never give, so such a file is refused. Padding to the longest of
    a batch leaves a single encode alone."""
    truncation, padding = obj.get("truncation"), obj.get("padding")
    if truncation is not None:
        length = truncation.get("max_length") if isinstance(truncation, dict) else None
        refuse(
            source,
            "truncation",
            f"(max_length {length!r})",
            "HF's encode cuts the ids there; save the file without it (tokenizer.no_truncation())",
        )
    if padding is None:
        return
    longest = isinstance(padding, dict) and padding.get("strategy") == "BatchLongest"
    if not longest or padding.get("pad_to_multiple_of") is not None:
        strategy = padding.get("strategy") if isinstance(padding, dict) else padding
        refuse(
            source,
            "padding",
            repr(strategy)[:40],
            "HF's encode pads the ids with it; save the file without it (tokenizer.no_padding())",
        )


def _check_decoder(decoder: Any, source: str) -> None:
    """Our decode is the bytes of the ids, HF's `ByteLevel` decoder's (alone or the one step of a
    `Sequence`); another decoder (Metaspace, BPEDecoder, Replace, Strip, ...) gives other text,
    so it is refused. None is loaded (module docstring)."""
    if decoder is None:
        return
    steps = sequence_steps(decoder, "decoders", source, "decoder")
    kinds = [step.get("type") if isinstance(step, dict) else None for step in steps]
    if kinds != ["ByteLevel"]:
        refuse(
            source,
            "decoder",
            ", ".join(kind(step) for step in steps) or "Sequence []",
            "HF's decode would give other text than the tokens' bytes (only ByteLevel's are)",
        )


def _model(model: Any, source: str) -> dict[str, Any]:
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE":
        refuse(source, "model", kind(model), "only BPE models are")
    if "vocab" not in model:  # it said "model 'BPE' is not supported: only BPE models are"
        raise TokenizerFileError(f"{source}: model has no 'vocab' (an object mapping tokens to ids)")
    _check_model_field_types(model, source)
    if flag(model, "byte_fallback", False, source, "model", nullable=True):
        refuse(source, "model option", "byte_fallback", "a byte-level BPE has every byte already")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            refuse(source, f"model option {key}", repr(model[key]))
    _check_dropout(model.get("dropout"), source)
    check_type(model["vocab"], dict, source, "model.vocab", "an object mapping tokens to ids")
    return model


def _check_model_field_types(model: dict[str, Any], source: str) -> None:
    """HF refuses a file whose model fields have another type ("unk_token": 1, "fuse_unk": "x",
    "dropout": "a" or 2.0), also those a byte-level BPE never uses (unk_token, fuse_unk), which we
    loaded: refused too, naming the field, so whatever loads here loads there."""
    for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
        value = model.get(key)
        if value is not None and not isinstance(value, str):
            raise TokenizerFileError(
                f"{source}: model.{key} is {repr(value)[:40]}; it must be a string or null"
            )
    flag(model, "fuse_unk", False, source, "model", nullable=True)
    dropout = model.get("dropout")
    number = isinstance(dropout, (int, float)) and not isinstance(dropout, bool)
    if dropout is not None and not (number and 0 <= _as_f32(dropout) <= 1):
        raise TokenizerFileError(
            f"{source}: model.dropout is {repr(dropout)[:40]}; it must be a number from 0 to 1 or null"
        )


def _as_f32(value: float) -> float:
    """The number HF reads for `value`: model.dropout is an f32 there (the nearest one, infinite
    past its range), so 1e-300 is 0 and 0.99999999 is 1."""
    try:
        return struct.unpack("<f", struct.pack("<f", float(value)))[0]
    except OverflowError:  # past the f32's range, or an int past the float's (10**400)
        return math.inf if value > 0 else -math.inf


def _check_dropout(dropout: float | None, source: str) -> None:
    """HF skips each merge when a random f32 in [0, 1) is below model.dropout (its f32, _as_f32;
    _check_model_field_types checked the range). At 0 (or null) nothing is skipped: loaded.
    Between 0 and 1 the ids change from one encode to the next: refused. At 1 every merge is
    skipped, every time (and ignore_merges' whole-word lookup with them): one token per byte,
    deterministic, but an encoder without merges is not one we have: refused, saying so."""
    if dropout is None or _as_f32(dropout) == 0:
        return
    fix = "set it to null to use the merges"
    if _as_f32(dropout) == 1:
        why = f"HF then skips every merge and gives one token per byte, which our encoder does not reproduce; {fix}"
        refuse(source, "model option dropout", repr(dropout), why)
    why = f"HF then skips each merge at random, so its ids change from one encode to the next; {fix}"
    refuse(source, "model option dropout", repr(dropout), why)


def _normalizers(normalizer: Any, source: str) -> tuple[str, ...]:
    """The Unicode normalizations a normalizer (or a Sequence of them) applies, in order."""
    if normalizer is None:
        return ()
    steps = sequence_steps(normalizer, "normalizers", source, "normalizer")
    check_step_count(len(steps), source, "normalizer")
    forms = tuple(step.get("type") if isinstance(step, dict) else None for step in steps)
    others = [kind(step) for step, form in zip(steps, forms, strict=True) if form not in NORMALIZATIONS]
    if others:
        refuse(
            source,
            "normalizer",
            ", ".join(others),
            f"it changes the text in a way not reproduced here (only {', '.join(NORMALIZATIONS)} are)",
        )
    if forms and not unicode_checked():
        refuse(
            source,
            "normalizer",
            ", ".join(forms),
            "this Python's Unicode tables are newer than the ones checked against HF "
            "(run scripts/gen_hf_normalization.py)",
        )
    return forms


def _pattern(pre: Any, source: str) -> tuple[str, str | None, tuple[str, ...]]:
    """The split pattern of the pre-tokenizer's last splitting step, where ByteLevel puts a space
    (None without add_prefix_space) and the patterns of the splitting steps before it, in order
    (preparation.py; see the module docstring)."""
    if pre is None:
        refuse(source, "pre_tokenizer", "None", "without ByteLevel the vocabulary is not byte-level")
    steps = sequence_steps(pre, "pretokenizers", source, "pre_tokenizer")
    if not steps:
        refuse(source, "pre_tokenizer", kind(pre))
    check_step_count(len(steps) - 1, source, "pre_tokenizer")  # the splits before ByteLevel
    *splits, last = steps
    if not isinstance(last, dict) or last.get("type") != "ByteLevel":
        refuse(source, "pre_tokenizer", kind(last), "the last step must be ByteLevel")
    patterns = [_split_pattern(step, source) for step in splits]
    use_regex = flag(last, "use_regex", True, source, "pre_tokenizer ByteLevel")
    if use_regex:
        patterns.append("gpt2")
    # The last split is our pattern; the steps before it split first (preparation.py's pre_splits).
    # ByteLevel's space goes before each piece its own split gets (or the segment), else
    # before each chunk of the Split before it.
    prefix_space = None
    if flag(last, "add_prefix_space", True, source, "pre_tokenizer ByteLevel"):
        prefix_space = CHUNK if splits and not use_regex else SEGMENT
    return (patterns[-1] if patterns else NO_SPLIT), prefix_space, tuple(patterns[:-1])


def _split_pattern(step: Any, source: str) -> str:
    step_type = step.get("type") if isinstance(step, dict) else None  # not `kind`, the function
    if step_type == "Digits":
        return _DIGIT if step.get("individual_digits") else _DIGITS
    if step_type != "Split":
        refuse(source, "pre_tokenizer", kind(step))
    spec = step.get("pattern")
    if isinstance(spec, dict) and isinstance(spec.get("Regex"), str) and spec["Regex"]:
        try:  # \x{41} and \x7 first: "{41}+" read as a repeated interval, "\x7" as bad syntax
            written = hex_escapes_from_oniguruma(spec["Regex"])
        except ValueError as e:
            raise TokenizerFileError(f"{source}: pre_tokenizer Split: {e}") from None
        regex = regex_from_oniguruma(written)
        # Oniguruma's own constructs first: BLOOM's nested class `[^(\s|[.,!?])]` is valid there
        # and read as "unbalanced parenthesis" by our engine, which said "fix the syntax".
        construct = oniguruma_only(written, anchors=regex not in PATTERNS.values())
        if construct:
            refuse(source, "pre_tokenizer Split regex with", construct, "Oniguruma gives it another meaning")
        try:
            regex = word_escapes_from_oniguruma(regex)  # \w is another set there ("²", not ZWJ)
            check_hf_split_regex(regex)
        except ValueError as e:
            raise TokenizerFileError(f"{source}: pre_tokenizer Split: {e}") from None
    elif isinstance(spec, dict) and isinstance(spec.get("String"), str) and spec["String"]:
        regex = re.escape(spec["String"])
    else:
        refuse(source, "pre_tokenizer Split pattern", repr(spec)[:60])
    behavior, invert = step.get("behavior"), flag(step, "invert", False, source, "pre_tokenizer Split")
    if behavior == "Removed" and invert:
        return regex  # keeps the matches only: findall
    if behavior == "Isolated" and not invert:
        named = next((name for name, r in PATTERNS.items() if r == regex), None)
        return named or f"(?:{regex})|(?:(?!(?:{regex}))[\\s\\S])+"
    refuse(source, "pre_tokenizer Split with", f"behavior={behavior!r}, invert={invert}")
    raise AssertionError  # _refuse always raises


def _ranks(
    model: dict[str, Any], special: dict[str, int], source: str, cut_out: list[str]
) -> tuple[dict[bytes, int], set[int]]:
    """model.vocab's tokens as bytes -> rank (the added tokens left out), and the ids the merges
    make. `cut_out`: the added tokens matched wherever they occur (before any split or merge)."""
    to_byte = {ch: b for b, ch in bytes_to_unicode().items()}
    special_ids = {token_id: token for token, token_id in special.items()}
    ranks: dict[bytes, int] = {}
    owner: dict[int, str] = {}  # id -> the vocab token that has it
    for token, rank in model["vocab"].items():
        check_id(rank, f"{source}: model.vocab[{token!r}]")
        if owner.setdefault(rank, token) != token:  # else decode(id) picked one of them silently
            raise TokenizerFileError(
                f"{source}: model.vocab gives {owner[rank]!r} and {token!r} the same id {rank}; give each its own"
            )
        if token in special:
            if special[token] != rank:
                raise TokenizerFileError(
                    f"{source}: added token {token!r} has id {special[token]} but model.vocab gives it {rank}"
                )
            continue
        if rank in special_ids:
            raise TokenizerFileError(
                f"{source}: model.vocab[{token!r}] has id {rank}, which added token "
                f"{special_ids[rank]!r} uses; give each its own id"
            )
        try:
            data = bytes(to_byte[ch] for ch in token)
        except KeyError:
            refuse(source, "model.vocab token", repr(token), "it is not in the byte-level alphabet")
        if data in ranks:
            raise TokenizerFileError(f"{source}: model.vocab has the bytes {data!r} twice")
        ranks[data] = rank
    made, listed = _check_merge_order(model.get("merges", []), model["vocab"], source)
    _check_every_token_is_made(model["vocab"], made, special, source)
    _check_merges_bpe_makes(model["vocab"], made, listed, special, cut_out, source)
    return ranks, made


def _check_merge_order(
    merges: Any, vocab: dict[str, int], source: str
) -> tuple[set[int], set[tuple[str, str]]]:
    """HF's merge priority must agree with the ids (our ranks): each merge makes a larger id.
    Returns the ids the merges make and the pairs they list."""
    if not isinstance(merges, list):
        raise TokenizerFileError(f"{source}: model.merges must be a list")
    last, made_ids, listed = -1, set(), set()
    for i, merge in enumerate(merges):
        if isinstance(merge, str):
            merge = merge.split(" ")
        if not (isinstance(merge, list) and len(merge) == 2 and all(isinstance(x, str) for x in merge)):
            raise TokenizerFileError(f"{source}: model.merges[{i}] is not a pair of tokens")
        unknown = next((part for part in merge if part not in vocab), None)
        if unknown is not None:  # HF refuses the file ("out of vocabulary"); we loaded it
            raise TokenizerFileError(
                f"{source}: model.merges[{i}] {merge!r} names {unknown!r}, which model.vocab lacks; "
                "each merge joins two tokens of the vocabulary"
            )
        made = vocab.get(merge[0] + merge[1])
        if made is None:
            raise TokenizerFileError(
                f"{source}: model.merges[{i}] makes {merge[0] + merge[1]!r}, which model.vocab lacks"
            )
        if made < last:
            refuse(
                source,
                f"model.merges[{i}]",
                f"{merge!r} (id {made} after id {last})",
                "merges out of id order rank differently in our encoder",
            )
        last = max(last, made)
        made_ids.add(made)
        listed.add((merge[0], merge[1]))
    return made_ids, listed


def _check_merges_bpe_makes(
    vocab: dict[str, int],
    made: set[int],
    listed: set[tuple[str, str]],
    special: dict[str, int],
    cut_out: list[str],
    source: str,
) -> None:
    """Each token a merge makes must be listed with the pair our encoder joins into it.

    Ours (as tiktoken) joins any two adjacent tokens whose bytes are a token, and those two are
    always the ones BPE leaves of the token's bytes with every other token (_joined_into); HF
    joins only listed pairs. A file listing 'abc d' for "abcd" but not 'ab cd', where 'cd'
    ranks below 'ab', gave "abcd" one id in ours and two in HF. Trained files list that pair
    (training joins adjacent tokens) and converted ones list every split, so only a token with
    an unlisted split into two tokens is run through BPE. The alphabet's characters stand
    for bytes one to one, so the vocabulary's strings are split and joined as their bytes.
    A token holding an added token of `cut_out` is never in a chunk: the added token is
    matched first (model.vocab's "ined" beside the added token "in")."""
    pieces = {token: rank for token, rank in vocab.items() if token not in special}
    cuts = cuts_at_token_lengths(pieces)  # type: ignore[arg-type]: str slices as bytes slices
    for token, rank in pieces.items():
        if rank not in made:
            continue
        for i in cuts(len(token)):
            split = token[:i], token[i:]
            if split not in listed and split[0] in pieces and split[1] in pieces:
                break
        else:
            continue  # every split into two tokens is listed, the one BPE makes too
        parts = _joined_into(token, rank, pieces)
        if len(parts) == 2 and (parts[0], parts[1]) not in listed and not _holds_any(token, cut_out):
            raise TokenizerFileError(
                f"{source}: model.vocab[{repr(token)[:40]}] (id {rank}): our encoder joins {parts[0]!r} "
                f"and {parts[1]!r} into it (the merges before it make that pair from its bytes), but "
                f"model.merges lacks '{parts[0]} {parts[1]}', so HF never does and the ids would "
                "differ; add that merge (a trained file has it), or remove the token"
            )


def _holds_any(token: str, added: list[str]) -> bool:
    """Whether a vocabulary string's bytes hold the UTF-8 of one of the `added` tokens."""
    table = {ch: b for b, ch in bytes_to_unicode().items()}
    data = bytes(map(table.__getitem__, token))
    return any(text.encode("utf-8") in data for text in added)


def _joined_into(token: str, rank: int, pieces: dict[str, int]) -> list[str]:
    """What BPE leaves of a vocabulary string with every token but itself: the two tokens our
    encoder joins into it wherever it does (else more parts: it never does). Not only the ranks
    below its own: with 'a aabb' (id 259) listed before 'aa a' (id 260), ours makes "aaa" first
    and then joins 'aaa bb' into 259 ("aaaaabbb"), which HF never does. The token itself can only
    be made by the last merge (it spans the whole string), so BPE with every rank, stopped when
    two parts are left, is BPE without it."""
    if len(token) <= LONG_TOKEN:
        return bpe_parts(token, pieces.get)
    table = bytes_to_unicode()  # a long one: its bytes, which BPE merges with a heap
    to_byte = {ch: b for b, ch in table.items()}
    ranks = {bytes(map(to_byte.__getitem__, t)): r for t, r in pieces.items()}
    token_of = {r: t for t, r in ranks.items()}
    ids = bpe_merge(bytes(map(to_byte.__getitem__, token)), RanksWithout(ranks, rank=rank))
    return ["".join(map(table.__getitem__, token_of[i])) for i in ids]


def _check_every_token_is_made(
    vocab: dict[str, int], made: set[int], special: dict[str, int], source: str
) -> None:
    """A token that no merge makes but two other tokens join into: HF never makes it from them,
    our encoder (rank-based, as tiktoken) would, so the ids would differ (a file without its
    merges list). One that no two tokens join into is out of reach of both."""
    pieces = {token for token in vocab if token not in special}
    lengths = sorted({len(token) for token in pieces})  # cut only there: a long token costs no more
    for token, rank in vocab.items():
        if rank in made or token in special:
            continue
        cuts = (n for n in lengths if n < len(token))
        if any(token[:cut] in pieces and token[cut:] in pieces for cut in cuts):
            raise TokenizerFileError(
                f"{source}: model.vocab[{repr(token)[:40]}] (id {rank}) is made by no merge in model.merges: HF "
                "never makes it from its pieces, where our encoder would; add its merge, or remove it"
            )
