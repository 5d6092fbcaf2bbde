"""Import a Hugging Face `tokenizer.json`: byte-level BPE loaded exactly, or refused by name.

A Tokenizer is a split pattern, ranks and special tokens, nothing else; a tokenizer.json is a
pipeline (normalizer, pre-tokenizers, model, added tokens). We load a file only when that
pipeline gives the ids our encoder gives, and refuse it otherwise, naming the component, so
a file is never loaded as something else. What maps exactly, and why:

- model: `BPE` over GPT-2's byte alphabet, no byte_fallback, no subword prefix or suffix, no
  dropout. Ids become ranks: HF merges the listed pair of lowest priority, our encoder the
  pair whose bytes have the lowest rank; the two agree when every merge's result has a
  larger id than the merges before it and every token that two tokens join into is made by a
  merge (both checked here; trained files are built that way).
  `ignore_merges: true` takes a pre-token that is in the vocabulary whole, as our encoder (and
  tiktoken) does; `false` (or absent, HF's default) lets the merges alone decide, which can end
  elsewhere for a token the merges do not reach from its bytes: loaded with
  `chunk_lookup=False` (core.py), the merge loop without the whole-chunk lookup.
- normalizer: NFC, NFD, NFKC, NFKD or a `Sequence` of them, applied exactly
  (preparation.py: HF's older Unicode tables reproduced). HF finds an added token with
  `normalized: true` in the normalized text, we in the text as given: loaded only when
  normalization can neither change, make nor join any of its characters
  (preparation.changed_char: GPT-NeoX's runs of spaces under NFC), else refused naming it.
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
  `Digits` is the Isolated split of `\\p{N}+` (or of `\\p{N}` with individual_digits), with
  the numerals of Rust's Unicode (`_NUMERALS`).
  No pre-tokenizer step at all: the text is one chunk.
- added tokens become special tokens: HF matches every added token in the text, so ids
  equal HF's with allowed_special="all". Those that are not special (`"special": false`) are
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

import re
from typing import Any, NamedTuple

from .added_tokens import OPTIONS, AddedMatching, hidden_by_dropped
from .hf_conventions import (
    bytes_to_unicode,
    multi_char_fold,
    regex_from_oniguruma,
    word_escapes_from_oniguruma,
)
from .patterns import NO_SPLIT, PATTERNS
from .preparation import (
    CHUNK,
    NORMALIZATIONS,
    SEGMENT,
    Preparation,
    changed_char,
    check_step_count,
    unicode_checked,
)
from .regex_check import check_hf_split_regex
from .validate import TokenizerFileError, check_id, check_special_count, check_text, check_type

IGNORED_POST_PROCESSORS = ("TemplateProcessing", "ByteLevel", "RobertaProcessing", "BertProcessing")
# HF's Digits splits where Rust's char::is_numeric (categories N*) changes, at the Unicode of the
# Rust that built `tokenizers` (17.0 for 0.23), not Oniguruma's 16.0, which a pre-split's \p{N}
# has (preparation.py): 17.0's numerals beyond 16.0 are these 13, written as characters, which
# every engine (ours, `regex`, Oniguruma after an export) reads alike.
_NUMERALS = "\\p{N}\U00011de0-\U00011de9\U00016ff4-\U00016ff6"
_DIGITS = f"[{_NUMERALS}]+|[^{_NUMERALS}]+"
_DIGIT = f"[{_NUMERALS}]|[^{_NUMERALS}]+"
# tail-of-a-single_word-token x added-token-of-model.vocab comparisons (_check_dropped_matches): about
# a second of Python; real files have a few single_word tokens, so a few thousand comparisons
MAX_DROPPED_CHECKS = 2_000_000
# normalized=true x normalized=false added-token pairs _passes_matter compares; past it the two
# passes are taken without looking (exact either way, only slower): Llama 3's 256 specials are all
# normalized=false (no pairs), and a hostile file of 32,768 of each would take hours
MAX_PASS_CHECKS = 1_000_000


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
    special, added = _added_tokens(obj.get("added_tokens"), source, normalizers)
    _check_added_token_bytes(special, model["vocab"], source)
    _check_dropped_matches(list(special), added, model["vocab"], source)
    try:
        preparation = Preparation(normalizers, prefix_space, pre_splits, added or None) or None
    except ValueError as e:  # a Split's regex that our engine cannot compile
        raise TokenizerFileError(f"{source}: pre_tokenizer: {e}") from None
    chunk_lookup = _flag(model, "ignore_merges", False, source, "model")
    ranks = _ranks(model, special, source)
    _check_added_ids(special, model["vocab"], source)
    return HfTokenizer(ranks, pattern, special, preparation, chunk_lookup)


def _check_post_processor(post: Any, source: str) -> None:
    """Post-processors that only add tokens around the ids, alone or in a `Sequence` (Llama 3's
    is ByteLevel then TemplateProcessing), are ignored; any other is refused."""
    if post is None:
        return
    for step in _steps(post, "processors", source, "post_processor"):
        if not isinstance(step, dict) or step.get("type") not in IGNORED_POST_PROCESSORS:
            _refuse(source, "post_processor", _kind(step))


def _check_truncation_and_padding(obj: dict[str, Any], source: str) -> None:
    """HF's encode cuts the ids at `truncation`'s max_length and pads them to a `Fixed` length or a
    `pad_to_multiple_of`: ids we never give, so such a file is refused. Padding to the longest of
    a batch leaves a single encode alone."""
    truncation, padding = obj.get("truncation"), obj.get("padding")
    if truncation is not None:
        length = truncation.get("max_length") if isinstance(truncation, dict) else None
        _refuse(
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
        _refuse(
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
    steps = _steps(decoder, "decoders", source, "decoder")
    kinds = [step.get("type") if isinstance(step, dict) else None for step in steps]
    if kinds != ["ByteLevel"]:
        _refuse(
            source,
            "decoder",
            ", ".join(_kind(step) for step in steps) or "Sequence []",
            "HF's decode would give other text than the tokens' bytes (only ByteLevel's are)",
        )


def _steps(step: Any, key: str, source: str, where: str) -> list[Any]:
    """The steps of a `Sequence` (its list under `key`), or the step itself as the only one."""
    if not (isinstance(step, dict) and step.get("type") == "Sequence"):
        return [step]
    steps = step.get(key)
    if not isinstance(steps, list):
        _refuse(source, where, _kind(step))
    return steps


def _refuse(source: str, where: str, what: str, why: str = "") -> None:
    raise TokenizerFileError(
        f"{source}: {where} {what} is not supported{': ' + why if why else ''}; only byte-level BPE "
        "files whose every step our tokenizer reproduces exactly are loaded (see tokenizer/hf_import.py)"
    )


def _flag(step: dict[str, Any], key: str, default: bool, source: str, where: str) -> bool:
    """A true/false option: HF refuses any other value, where Python's truth read "false" as true."""
    value = step.get(key, default)
    if not isinstance(value, bool):
        raise TokenizerFileError(f"{source}: {where}.{key} is {repr(value)[:40]}; it must be true or false")
    return value


def _kind(step: Any) -> str:
    return repr(step.get("type")) if isinstance(step, dict) else repr(step)[:40]


def _model(model: Any, source: str) -> dict[str, Any]:
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE":
        _refuse(source, "model", _kind(model), "only BPE models are")
    if "vocab" not in model:  # it said "model 'BPE' is not supported: only BPE models are"
        raise TokenizerFileError(f"{source}: model has no 'vocab' (an object mapping tokens to ids)")
    if _flag(model, "byte_fallback", False, source, "model"):
        _refuse(source, "model option", "byte_fallback", "a byte-level BPE has every byte already")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            _refuse(source, f"model option {key}", repr(model[key]))
    if model.get("dropout") not in (None, 0, 0.0):
        _refuse(source, "model option dropout", repr(model["dropout"]), "BPE dropout is random")
    check_type(model["vocab"], dict, source, "model.vocab", "an object mapping tokens to ids")
    return model


def _normalizers(normalizer: Any, source: str) -> tuple[str, ...]:
    """The Unicode normalizations a normalizer (or a Sequence of them) applies, in order."""
    if normalizer is None:
        return ()
    steps = _steps(normalizer, "normalizers", source, "normalizer")
    check_step_count(len(steps), source, "normalizer")
    forms = tuple(step.get("type") if isinstance(step, dict) else None for step in steps)
    others = [_kind(step) for step, form in zip(steps, forms, strict=True) if form not in NORMALIZATIONS]
    if others:
        _refuse(
            source,
            "normalizer",
            ", ".join(others),
            f"it changes the text in a way not reproduced here (only {', '.join(NORMALIZATIONS)} are)",
        )
    if forms and not unicode_checked():
        _refuse(
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
        _refuse(source, "pre_tokenizer", "None", "without ByteLevel the vocabulary is not byte-level")
    steps = _steps(pre, "pretokenizers", source, "pre_tokenizer")
    if not steps:
        _refuse(source, "pre_tokenizer", _kind(pre))
    check_step_count(len(steps) - 1, source, "pre_tokenizer")  # the splits before ByteLevel
    *splits, last = steps
    if not isinstance(last, dict) or last.get("type") != "ByteLevel":
        _refuse(source, "pre_tokenizer", _kind(last), "the last step must be ByteLevel")
    patterns = [_split_pattern(step, source) for step in splits]
    use_regex = _flag(last, "use_regex", True, source, "pre_tokenizer ByteLevel")
    if use_regex:
        patterns.append("gpt2")
    # The last split is our pattern; the steps before it split first (preparation.py's pre_splits).
    # ByteLevel's space goes before each piece its own split gets (or the segment), else
    # before each chunk of the Split before it.
    prefix_space = None
    if _flag(last, "add_prefix_space", True, source, "pre_tokenizer ByteLevel"):
        prefix_space = CHUNK if splits and not use_regex else SEGMENT
    return (patterns[-1] if patterns else NO_SPLIT), prefix_space, tuple(patterns[:-1])


def _split_pattern(step: Any, source: str) -> str:
    kind = step.get("type") if isinstance(step, dict) else None
    if kind == "Digits":
        return _DIGIT if step.get("individual_digits") else _DIGITS
    if kind != "Split":
        _refuse(source, "pre_tokenizer", _kind(step))
    spec = step.get("pattern")
    if isinstance(spec, dict) and isinstance(spec.get("Regex"), str) and spec["Regex"]:
        regex = regex_from_oniguruma(spec["Regex"])
        # Oniguruma's own constructs first: BLOOM's nested class `[^(\s|[.,!?])]` is valid there
        # and read as "unbalanced parenthesis" by our engine, which said "fix the syntax".
        construct = _oniguruma_only(spec["Regex"], anchors=regex not in PATTERNS.values())
        if construct:
            _refuse(source, "pre_tokenizer Split regex with", construct, "Oniguruma gives it another meaning")
        try:
            regex = word_escapes_from_oniguruma(regex)  # \w is another set there ("²", not ZWJ)
            check_hf_split_regex(regex)
        except ValueError as e:
            raise TokenizerFileError(f"{source}: pre_tokenizer Split: {e}") from None
    elif isinstance(spec, dict) and isinstance(spec.get("String"), str) and spec["String"]:
        regex = re.escape(spec["String"])
    else:
        _refuse(source, "pre_tokenizer Split pattern", repr(spec)[:60])
    behavior, invert = step.get("behavior"), _flag(step, "invert", False, source, "pre_tokenizer Split")
    if behavior == "Removed" and invert:
        return regex  # keeps the matches only: findall
    if behavior == "Isolated" and not invert:
        named = next((name for name, r in PATTERNS.items() if r == regex), None)
        return named or f"(?:{regex})|(?:(?!(?:{regex}))[\\s\\S])+"
    _refuse(source, "pre_tokenizer Split with", f"behavior={behavior!r}, invert={invert}")
    raise AssertionError  # _refuse always raises


def _oniguruma_only(regex: str, anchors: bool = True) -> str | None:
    """The first construct whose meaning is Oniguruma's own: `^` and `$` are line anchors there
    (Ruby syntax: "x$" matches before every newline), `X{1,3}+` is `(?:X{1,3})+` (no possessive),
    `&&` in a class an intersection and `[` in a class a nested class (literals for us), and
    `(?i:ss)` also matches "ß" (hf_conventions.multi_char_fold). The
    named patterns' `\\s++$` is safe (anchors=False): the possessive run takes every newline."""
    depth, i = 0, 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 1
        elif depth and (ch == "[" or regex.startswith("&&", i)):
            return f"{regex[i : i + 2] if ch == '&' else ch!r} in a character class"
        elif ch == "[":
            depth, i = 1, i + (2 if regex.startswith("[^", i) else 1)
            i += regex[i : i + 1] == "]"  # a ] first in a class is a literal
            continue
        elif ch == "]" and depth:
            depth = 0
        elif ch in "^$" and not depth and anchors:
            return f"the anchor {ch!r}"
        elif ch == "{" and not depth and (interval := re.match(r"\{\d*,?\d*\}\+", regex[i:])):
            return f"{interval.group()!r} (a repeated interval; a possessive one is (?>X{interval.group()[:-1]}))"
        i += 1
    folded = multi_char_fold(regex)
    return (
        folded
        and f"{folded!r} (case-insensitive letters there also match the one character they fold to, 'ß' for 'ss')"
    )


def _added_tokens(
    added: Any, source: str, normalizers: tuple[str, ...]
) -> tuple[dict[str, int], AddedMatching]:
    """The added tokens' ids, and HF's options for finding them (added_tokens.py)."""
    if added is not None:
        check_type(added, list, source, "added_tokens", 'a list of {"content": ..., "id": ...} objects')
        check_special_count(len(added), source, "added_tokens")
    special: dict[str, int] = {}
    first: list[str] = []  # normalized=false: HF finds these first, then the others between them
    not_special: list[str] = []  # special=false: HF matches them in any text
    options: dict[str, list[str]] = {option: [] for option in OPTIONS}
    for i, token in enumerate(added or []):
        where = f"{source}: added_tokens[{i}]"
        if not isinstance(token, dict) or not isinstance(token.get("content"), str) or not token["content"]:
            raise TokenizerFileError(f"{where}: needs a non-empty string 'content' and an 'id'")
        check_text(token["content"], f"{where} ({token['content']!r})")
        special_flag = _flag(token, "special", False, source, f"added_tokens[{i}]")
        if not special_flag:
            not_special.append(token["content"])
        normalized = _flag(token, "normalized", not special_flag, source, f"added_tokens[{i}]")
        if not normalized:
            first.append(token["content"])
        flags = [option for option in OPTIONS if _flag(token, option, False, source, f"added_tokens[{i}]")]
        if flags and normalized and normalizers:
            _refuse(
                source,
                f"added_tokens[{i}] ({token['content']!r}) option",
                f"{flags[0]}=true with normalized=true and the normalizer {', '.join(normalizers)}",
                "HF looks at its neighbours in the normalized text, where whitespace and word "
                "characters may differ; save it with normalized=false",
            )
        for option in flags:
            options[option].append(token["content"])
        changed = changed_char(normalizers, token["content"]) if normalizers and normalized else None
        if changed is not None:
            _refuse(
                source,
                f"added_tokens[{i}] ({token['content']!r}) option",
                f"normalized=true with the normalizer {', '.join(normalizers)}",
                f"HF looks for it in the normalized text, where {changed!r} may be changed, made or "
                "joined to a neighbour; save it with normalized=false",
            )
        if token["content"] in special:
            raise TokenizerFileError(f"{where}: {token['content']!r} is listed twice")
        special[token["content"]] = check_id(token.get("id"), f"{where}.id")
    not_special_set = frozenset(not_special)
    if not any(options.values()):  # HF's two passes (added_tokens.py) only where they matter
        first = first if _passes_matter(list(special), set(first)) else []
        return special, AddedMatching(first=frozenset(first), not_special=not_special_set)
    sets = {k: frozenset(v) for k, v in options.items()}
    return special, AddedMatching(**sets, first=frozenset(first), not_special=not_special_set)


def _check_added_ids(special: dict[str, int], vocab: dict[str, Any], source: str) -> None:
    """HF does not take an added token's id from the file (it warns): one that model.vocab lacks
    gets model.vocab's size, or one past the last such token's; one it has keeps that id and
    moves no other (`tokenizers` 0.23: after "<a>" at 500 there, "<x>" is its size, not 501). A
    file that says otherwise gave its own ids here and HF's there, without a word: refused,
    naming HF's id; so is one where HF's id is a token's of model.vocab (HF never finds that)."""
    largest, owners = -1, None  # the largest id HF gave an added token that model.vocab lacks
    for i, (token, file_id) in enumerate(special.items()):  # file order: "listed twice" is refused
        if token in vocab:
            continue  # _ranks checked that model.vocab gives it the file's id
        hf_id = largest = max(len(vocab), largest + 1)
        owners = owners or {token_id: token for token, token_id in vocab.items()}
        if file_id != hf_id or hf_id in owners:
            why = (
                f"model.vocab's id of {owners[hf_id]!r}, where Hugging Face tokenizers puts it (model.vocab's "
                "size): give the tokens of model.vocab the ids below its size"
                if file_id == hf_id
                else f"but Hugging Face tokenizers gives it id {hf_id} when it loads the file (an added token not "
                "in model.vocab takes the next id after model.vocab's size and the added tokens not in it "
                f"before it): set its id to {hf_id}, or load the file in tokenizers and save it again"
            )
            raise TokenizerFileError(f"{source}: added_tokens[{i}] ({token!r}) has id {file_id}, {why}")


def _check_dropped_matches(
    tokens: list[str], matching: AddedMatching, vocab: dict[str, Any], source: str
) -> None:
    """A single_word match HF drops is ordinary text to its BPE, and so is any added token that
    starts inside it (the scan went past its start): where model.vocab also has that token, HF's
    BPE can give its id there ("cxab", "xa" single_word, "ab": c, x, ab); ours keeps that id for
    the special token: refused. So is a file with too many such pairs to check (real files have
    a few single_word tokens; 65,536 of them beside as many tokens took hours)."""
    in_vocab = [token for token in tokens if token in vocab]
    work = sum(map(len, matching.single_word)) * len(in_vocab)
    if work > MAX_DROPPED_CHECKS:
        _refuse(
            source,
            "added_tokens with",
            f"{len(matching.single_word):,} single_word tokens beside {len(in_vocab):,} of model.vocab",
            f"checking that HF's BPE makes none of them where a match is dropped takes {work:,} "
            f"steps, more than the {MAX_DROPPED_CHECKS:,} allowed",
        )
    for i, token in enumerate(tokens):
        if token not in vocab:
            continue
        for dropped in matching.single_word:
            if hidden_by_dropped(token, dropped):
                _refuse(
                    source,
                    f"added_tokens[{i}] ({token!r}), a token of model.vocab (id {vocab[token]}), with",
                    f"single_word=true on {dropped!r}",
                    "where HF drops that match (a word character beside it) its BPE can make the first "
                    "from its bytes, which ours does not; save it without single_word",
                )


def _check_added_token_bytes(special: dict[str, int], vocab: dict[str, Any], source: str) -> None:
    """HF's ByteLevel decoder reads a token whose every character is in GPT-2's byte alphabet as
    those bytes, added tokens too: "naïve" decodes as "na\ufffdve" there, and "Ġthe" (also
    model.vocab's token for b" the") is what HF gives for " the" too. We give an added token its
    text, so one whose alphabet bytes are not its UTF-8 is refused; so is one that is a single
    byte of model.vocab (ours needs every byte as an ordinary token)."""
    to_byte = {ch: b for b, ch in bytes_to_unicode().items()}
    for i, token in enumerate(special):
        if not all(ch in to_byte for ch in token):
            continue  # a space, a CJK character...: HF's decoder gives its UTF-8
        data = bytes(to_byte[ch] for ch in token)
        where = f"added_tokens[{i}] ({token!r})"
        if data != token.encode("utf-8"):
            also = f", and model.vocab's token for those bytes (id {vocab[token]})" if token in vocab else ""
            _refuse(
                source,
                where,
                f"as the bytes {data!r}{also}",
                "every character of it is in the byte-level alphabet, so HF decodes it as those "
                "bytes, not as its text",
            )
        if token in vocab and len(data) == 1:
            _refuse(
                source,
                where,
                f"as model.vocab's single byte {data!r} (id {vocab[token]})",
                "our byte-level encoder needs every byte as an ordinary token",
            )


def _passes_matter(tokens: list[str], first: set[str]) -> bool:
    """HF finds the normalized=false added tokens first and the others only in the text between
    them; we find all at once (leftmost, then longest) unless told otherwise. The two agree
    unless a token found later contains one found first, or the two can overlap (an end of one
    is a start of the other)."""
    if (len(tokens) - len(first)) * len(first) > MAX_PASS_CHECKS:
        return True
    for later in tokens:
        if later in first:
            continue
        for token in first:
            ends = range(1, min(len(token), len(later)))
            if token in later or any(later[-k:] == token[:k] or token[-k:] == later[:k] for k in ends):
                return True
    return False


def _ranks(model: dict[str, Any], special: dict[str, int], source: str) -> dict[bytes, int]:
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
            _refuse(source, "model.vocab token", repr(token), "it is not in the byte-level alphabet")
        if data in ranks:
            raise TokenizerFileError(f"{source}: model.vocab has the bytes {data!r} twice")
        ranks[data] = rank
    made = _check_merge_order(model.get("merges", []), model["vocab"], source)
    _check_every_token_is_made(model["vocab"], made, special, source)
    return ranks


def _check_merge_order(merges: Any, vocab: dict[str, int], source: str) -> set[int]:
    """HF's merge priority must agree with the ids (our ranks): each merge makes a larger id.
    Returns the ids the merges make."""
    if not isinstance(merges, list):
        raise TokenizerFileError(f"{source}: model.merges must be a list")
    last, made_ids = -1, set()
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
            _refuse(
                source,
                f"model.merges[{i}]",
                f"{merge!r} (id {made} after id {last})",
                "merges out of id order rank differently in our encoder",
            )
        last = max(last, made)
        made_ids.add(made)
    return made_ids


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
