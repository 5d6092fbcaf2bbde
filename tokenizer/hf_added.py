"""A tokenizer.json's `added_tokens`: which are special, their ids as HF numbers them, HF's
options for finding them in the text (added_tokens.py reproduces the finding), and the checks
that refuse a file where our matches could differ from HF's (hf_import.py's docstring says which).
"""

from __future__ import annotations

from typing import Any

from ._hf_steps import flag, refuse
from .added_tokens import OPTIONS, AddedMatching, hidden_by_dropped
from .hf_conventions import bytes_to_unicode
from .preparation import changed_char, made_by_normalizing
from .validate import TokenizerFileError, check_id, check_special_count, check_text, check_type

# tail-of-a-single_word-token x added-token-of-model.vocab comparisons (check_dropped_matches): about
# a second of Python; real files have a few single_word tokens, so a few thousand comparisons
MAX_DROPPED_CHECKS = 2_000_000
# normalized=true x normalized=false added-token pairs _passes_matter compares; past it the two
# passes are taken without looking (exact either way, only slower): Llama 3's 256 specials are all
# normalized=false (no pairs), and a hostile file of 32,768 of each would take hours
MAX_PASS_CHECKS = 1_000_000
# The fields of an added token, each with the value that fixes a file lacking it: `tokenizers`
# (0.23) requires all seven ("missing field `single_word`" refuses the whole file), so a short
# form, which we once read with defaults, loaded here and in no HF program.
FIELD_FIXES = {
    "id": '"id": its id',
    "content": '"content": its text',
    "single_word": '"single_word": false',
    "lstrip": '"lstrip": false',
    "rstrip": '"rstrip": false',
    "normalized": '"normalized": false (true for a token that is not special, as HF writes it)',
    "special": '"special": true (false for one matched in any text)',
}


def read_added_tokens(
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
        _check_fields(token, where)
        if not flag(token, "special", False, source, f"added_tokens[{i}]"):
            not_special.append(token["content"])
        normalized = _normalized(token, i, source)
        if not normalized:
            first.append(token["content"])
        flags = [option for option in OPTIONS if flag(token, option, False, source, f"added_tokens[{i}]")]
        if flags and normalized and normalizers:
            refuse(
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
            refuse(
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


def _check_fields(token: dict[str, Any], where: str) -> None:
    """Every field HF requires of an added token (FIELD_FIXES), named with its fix where one lacks."""
    missing = [field for field in FIELD_FIXES if field not in token]
    if missing:
        names = ", ".join(repr(field) for field in missing)
        fixes = "; ".join(FIELD_FIXES[field] for field in missing)
        them = "them" if len(missing) > 1 else "it"
        raise TokenizerFileError(
            f"{where} ({token['content']!r}) has no {names}: Hugging Face tokenizers refuses the file "
            f"without {them}; add {fixes}"
        )


def _normalized(token: dict[str, Any], i: int, source: str) -> bool:
    """HF's `normalized` option (read_added_tokens checked that the token has it)."""
    return flag(token, "normalized", False, source, f"added_tokens[{i}]")


def check_made_by_normalizer(
    added: list[dict[str, Any]] | None, bpe_makes: set[str], normalizers: tuple[str, ...], source: str
) -> None:
    """HF finds a `normalized: false` added token in the text as given, then runs its BPE, which has
    model.vocab's tokens, over the normalized text between the matches. Where the token is one that
    BPE makes (`bpe_makes`: its merges make it, or ignore_merges takes a whole piece) and
    normalization makes its text from text without it (NFD: "thé" is "the\u0301"), HF's BPE gives
    its id there, ours not (our BPE has no special token): refused. Normalization leaves every other
    token's occurrences as they were (read_added_tokens refuses a `normalized: true` one it could
    change), so GPT-NeoX's runs of spaces and GPT-2's <|endoftext|>, which no merge makes, load."""
    if not normalizers or not bpe_makes:
        return
    for i, token in enumerate(added or []):
        text = token["content"]
        if text not in bpe_makes or _normalized(token, i, source):
            continue
        raw = made_by_normalizing(normalizers, text)
        if raw is not None:
            forms = ", ".join(normalizers)
            refuse(
                source,
                f"added_tokens[{i}] ({text!r}), a token of model.vocab that HF's BPE makes, with",
                f"normalized=false and the normalizer {forms}",
                f"{forms} makes it from {raw!r}, a text without it, where HF's BPE gives its id and ours "
                "does not; remove it from added_tokens (model.vocab's merges still make it)",
            )


def check_added_ids(special: dict[str, int], vocab: dict[str, Any], source: str) -> None:
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


def check_dropped_matches(
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
        refuse(
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
                refuse(
                    source,
                    f"added_tokens[{i}] ({token!r}), a token of model.vocab (id {vocab[token]}), with",
                    f"single_word=true on {dropped!r}",
                    "where HF drops that match (a word character beside it) its BPE can make the first "
                    "from its bytes, which ours does not; save it without single_word",
                )


def check_added_token_bytes(special: dict[str, int], vocab: dict[str, Any], source: str) -> None:
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
            refuse(
                source,
                where,
                f"as the bytes {data!r}{also}",
                "every character of it is in the byte-level alphabet, so HF decodes it as those "
                "bytes, not as its text",
            )
        if token in vocab and len(data) == 1:
            refuse(
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
