"""Checks of the POST /api/train form: each turns a bad field into a 400 that says how to fix it.

The names these checks accept (patterns, tie-break rules, the vocabulary minimum) come from
the library, so the form accepts exactly what `tokenizer.train.train` accepts.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from werkzeug.datastructures import FileStorage, MultiDict

from tokenizer import patterns
from tokenizer.core import Tokenizer
from tokenizer.encodings import list_encodings
from tokenizer.extend import check_add, check_extendable
from tokenizer.patterns import DEFAULT_PATTERN, NO_SPLIT, PATTERN_NAMES, PATTERNS
from tokenizer.regex_check import check_split_regex
from tokenizer.train import DEFAULT_TIE_BREAK, TIE_BREAKS, special_token_problem
from tokenizer.validate import DECIMAL

from .errors import ApiError
from .job_process import CUSTOM_LABEL

CUSTOM = CUSTOM_LABEL  # the pattern choice that sends its own regex in the field 'regex'
PATTERN_CHOICES = (*PATTERN_NAMES, CUSTOM)  # what the page offers, in its order
# Every pattern name train() knows (aliases such as cl100k included), the page's first.
KNOWN_PATTERNS = (*PATTERN_NAMES, *(p for p in (*PATTERNS, NO_SPLIT) if p not in PATTERN_NAMES))
MAX_SPECIAL_TOKEN_CHARS = 256  # characters per special token
JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)  # a JSON string literal, escapes included
SURROGATE = re.compile("[\ud800-\udfff]")  # cannot be UTF-8: not a valid special token
UTF8_BLOCK = 1 << 20  # bytes read at once when checking an upload (never the whole file)
MAX_LABEL_CHARS = 100  # characters of an uploaded file's name shown back (its suffix kept)
MAX_SUFFIX_CHARS = 20  # characters of that suffix: .tiktoken is 9
# bytes of UTF-8: a file name is at most 255 (NAME_MAX), less the longest suffix, .tiktoken
MAX_STEM_BYTES = 200

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # a tokenizer name, safe as a file name
WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
}


def form_int(form: MultiDict, field: str, *, default: int | None, lo: int, hi: int) -> int:
    raw = form.get(field, "").strip()
    if not raw:
        if default is None:
            raise ApiError(400, f"{field} is required ({field}: an integer from {lo} to {hi})")
        return default
    # ASCII digits only: int() also reads '٣٠٠', '３００' and '3_00' as 300, which no form
    # means and the page never sends.
    if not DECIMAL.fullmatch(raw):
        raise ApiError(400, f"{field} must be an integer, got {raw[:40]!r}; write it with the digits 0-9")
    try:
        value = int(raw)
    except ValueError:  # past int()'s 4,300 digits: an integer, just far too big
        value = -1 if raw.startswith("-") else hi + 1
    if not lo <= value <= hi:
        shown = raw if len(raw) <= 40 else f"{raw[:20]}... ({len(raw.lstrip('+-')):,} digits)"
        raise ApiError(400, f"{field} {shown} is out of range: {field} must be from {lo} to {hi}")
    return value


# every field a train request may send (besides the files 'corpus' and 'base_file')
FIELDS = ("text", "vocab_size", "name", "pattern", "regex", "special_tokens", "tie_break", "min_frequency")
FILE_FIELDS = ("corpus", "base_file")  # as text (curl -F corpus=x.txt, no @): refused by name
FIELDS += ("base", "add", *FILE_FIELDS)


def check_fields(form: MultiDict) -> None:
    """Each field known, and at most once: form.get reads the first, so a second `text` (or
    vocab_size, name, ...) was dropped without a word, and so was a misspelled tie-break=lexical.
    Files ('corpus', 'base_file') may repeat, as files; sent as text they were ignored too."""
    for field, values in form.lists():
        if field not in FIELDS:
            raise ApiError(
                400,
                f"unknown field {field[:40]!r}; the fields of a train request are: {', '.join(FIELDS[:-2])}",
            )
        if field in FILE_FIELDS:
            raise ApiError(
                400,
                f"the field {field!r} came as text ({values[0][:40]!r}), not as a file upload; upload "
                f"the file (curl -F {field}=@FILE, or a form with enctype=multipart/form-data)"
                + (", or send the text itself in the field 'text'" if field == "corpus" else ""),
            )
        if len(values) > 1:
            raise ApiError(400, f"field {field[:40]!r} was sent {len(values)} times; send each field once")


def tie_break(form: MultiDict) -> str:
    value = form.get("tie_break", "").strip() or DEFAULT_TIE_BREAK
    if value not in TIE_BREAKS:
        raise ApiError(400, f"unknown tie_break {value[:40]!r}; choose one of: {', '.join(TIE_BREAKS)}")
    return value


def parse_special_tokens(raw: str, limit: int) -> list[str]:
    """A JSON list of strings, or tokens separated by commas and/or newlines.

    The count is checked before any loop over the tokens, and a JSON list must be flat before
    json.loads sees it (100,000 nested '[' would exhaust its recursion).
    """
    # A leading byte-order mark (curl -F special_tokens=<tokens.json saved by Notepad) hid the
    # JSON: '\ufeff["<a>", "<b>"]' became the tokens '\ufeff["<a>"' and '"<b>"]' without a word.
    raw = raw.strip().removeprefix(codecs.BOM_UTF8.decode()).strip()
    if not raw:
        return []
    if raw.startswith("{"):  # a .json's {"<|x|>": id} pasted: split at commas, it made '{"<|x|>": 5' a token
        raise ApiError(
            400,
            'special_tokens is a JSON object; send a list of the strings, like ["<|a|>", "<|b|>"]: '
            "their ids are given after the merges, so ids cannot be chosen",
        )
    if raw.startswith("["):
        tokens = _json_string_list(raw)
    else:
        tokens = [t.strip() for t in re.split(r"[,\n]", raw)]
        tokens = [t for t in tokens if t]
    if len(tokens) > limit:
        raise ApiError(400, f"special_tokens: at most {limit} tokens, got {len(tokens):,}")
    seen: set[str] = set()
    for token in tokens:
        _check_special_token(token)
        if token in seen:
            raise ApiError(400, f"special_tokens: {token!r} is listed twice")
        seen.add(token)
    return tokens


def _json_string_list(raw: str) -> list[str]:
    outside_strings = JSON_STRING.sub("", raw)
    if outside_strings.count("[") > 1 or outside_strings.count("]") > 1 or "{" in outside_strings:
        raise ApiError(400, 'special_tokens as JSON must be a flat list of strings, like ["<|a|>", "<|b|>"]')
    try:
        tokens = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ApiError(400, f"special_tokens looks like JSON but is not valid: {e.msg}") from None
    except ValueError:  # a number longer than int()'s 4,300 digits: not a string either
        tokens = None
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise ApiError(400, 'special_tokens as JSON must be a list of strings, like ["<|a|>", "<|b|>"]')
    return tokens


def _check_special_token(token: str) -> None:
    if not token:
        raise ApiError(400, "special_tokens: a special token cannot be empty")
    if len(token) > MAX_SPECIAL_TOKEN_CHARS:
        raise ApiError(
            400, f"special_tokens: each token must be at most {MAX_SPECIAL_TOKEN_CHARS} characters"
        )
    if (problem := special_token_problem(token)) is not None:
        raise ApiError(400, f"special_tokens: {problem}")
    if SURROGATE.search(token):
        raise ApiError(
            400,
            f"special_tokens: {token[:40]!r} has a lone surrogate (a JSON \\ud800 escape?); use real text",
        )


def resolve_pattern(form: MultiDict) -> tuple[str, str]:
    """-> (pattern given to train(), label stored for display)."""
    pattern = form.get("pattern", "").strip() or DEFAULT_PATTERN
    if pattern == CUSTOM:
        regex_src = form.get("regex", "")
        if not regex_src:
            raise ApiError(400, "pattern 'custom' needs a regular expression in the field 'regex'")
        check_regex(regex_src)
        return regex_src, CUSTOM
    if pattern not in KNOWN_PATTERNS:
        choices = ", ".join([*KNOWN_PATTERNS, CUSTOM])
        raise ApiError(400, f"unknown pattern {pattern[:60]!r}; choose one of: {choices}")
    if form.get("regex", "").strip():  # else a curl user's regex would be ignored without a word
        raise ApiError(
            400,
            f"the field 'regex' is read only with pattern 'custom' (got pattern {pattern!r}): "
            "send pattern=custom to split with it, or leave 'regex' out",
        )
    return pattern, pattern


def check_regex(source: str) -> None:
    """The library's checks of a custom split regex (tokenizer.regex_check: compiles, no
    capturing group, never empty, bounded), then the stdlib-`re` translation the page uses
    under Pyodide must compile too; otherwise the tokenizer would train here but fail in the
    browser. The sample check (dropped text) runs in the job: on a hostile regex it may take
    as long as training, which a request thread must not."""
    try:
        check_split_regex(source)
    except ValueError as e:
        raise ApiError(400, str(e)) from None
    try:
        patterns.compile_pattern(source, engine="re")
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        reason = re.sub(r"^invalid split pattern .*?: ", "", str(e), count=1, flags=re.S)
        raise ApiError(
            400, f"regex not usable in the browser (the page splits with Python's re): {reason}"
        ) from None


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise ApiError(
            400,
            f"unsafe name {name[:80]!r}: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    lower = name.lower()
    if lower.endswith((".json", ".tiktoken")) or lower.split(".")[0] in WINDOWS_RESERVED:
        raise ApiError(400, f"unsafe name {name!r}: it would clash with file names on some systems")
    return name


def display_filename(filename: str | None, index: int) -> str:
    """An uploaded file's name as shown back to the user: no folders, printable, bounded."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable())
    if len(base) > MAX_LABEL_CHARS:  # the stem is cut, the suffix says what kind of file it is
        path = Path(base)  # (the same cut for every suffix: a .tiktoken still pairs with its .json)
        base = path.stem[: MAX_LABEL_CHARS - MAX_SUFFIX_CHARS] + path.suffix[:MAX_SUFFIX_CHARS]
    return base or f"file {index + 1}"


def check_utf8(path: Path, label: str, block_size: int = UTF8_BLOCK) -> int:
    """Raise a 400 naming the file and byte offset of the first non-UTF-8 byte; return the size.

    Reads in blocks (a 200 MB upload is never in memory at once); a character split across
    two blocks is carried over, so the offset is the one `bytes.decode` would report.
    """
    pending = b""
    pos = 0  # bytes of the file consumed before `pending`
    with open(path, "rb") as f:
        while True:
            block = f.read(block_size)
            final = not block
            data = pending + block
            try:
                _, consumed = codecs.utf_8_decode(data, "strict", final)
            except UnicodeDecodeError as e:
                bad = data[e.start : e.start + 4].hex(" ").upper()
                raise ApiError(
                    400,
                    f"{label} is not UTF-8 text: invalid byte(s) at offset {pos + e.start} ({bad}); "
                    "convert it to UTF-8 first",
                ) from None
            pos += consumed
            pending = data[consumed:]
            if final:
                return pos


def auto_name(first_label: str | None, vocab_size: int, taken: set[str]) -> str:
    """'corpus.txt' + 1000 -> 'corpus-1000' (then -2, -3, ... past the names in `taken`)."""
    stem = Path(first_label).stem if first_label else "text"
    return _unique(f"{_safe_stem(stem, 'text')}-{vocab_size}", taken)


def extension_name(base: str, add: int, taken: set[str]) -> str:
    """'cl100k_base' + 500 new merges -> 'cl100k_base-plus500' (then -2, -3, ...)."""
    return _unique(f"{_safe_stem(base, 'base')}-plus{add}", taken)


def _safe_stem(stem: str, fallback: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip(".-_")[:40] or fallback


def _unique(name: str, taken: set[str]) -> str:
    candidate, i = name, 2
    while candidate.lower() in taken:
        candidate, i = f"{name}-{i}", i + 1
    return candidate


# ----- extension: POST /api/train with a `base` ---------------------------------------------

BASE_ONLY_FIELDS = ("add",)  # meaningless when training from bytes
# Fields of training from bytes that an extension takes from its base instead.
TRAIN_ONLY_FIELDS = {
    "vocab_size": "send 'add' (the number of new merges) instead: the base's ids are kept, new ids follow",
    "pattern": "the base's split pattern is used; leave 'pattern' out",
    "regex": "the base's split pattern is used; leave 'regex' out",
    "special_tokens": "the base's special tokens are kept; leave 'special_tokens' out",
}


def resolve_base(form: MultiDict, data_dir: Path, *, uploaded: bool = False) -> str | None:
    """The tokenizer to extend, by name: a reference encoding or a tokenizer trained on this
    server (a regular .tiktoken + .json pair in the data folder). Never a path: the name must
    pass the same check as `name`, so it cannot leave the data folder. None: train from bytes,
    or (`uploaded`) extend the file(s) sent in BASE_FILE_FIELD, which store_base_upload reads."""
    raw = form.get("base", "").strip()
    if uploaded:
        if raw:
            raise ApiError(
                400,
                f"send one base: 'base' (a name) or {BASE_FILE_FIELD!r} (tokenizer files), not both",
            )
        _refuse_training_fields(form)
        return None
    if not raw:
        for field in BASE_ONLY_FIELDS:
            if form.get(field, "").strip():
                raise ApiError(
                    400, f"{field!r} needs a 'base' to extend; to train from bytes send vocab_size"
                )
        return None
    if raw in list_encodings() or (NAME_RE.fullmatch(raw) and stored_pair(data_dir, raw)):
        _refuse_training_fields(form)
        return raw
    raise ApiError(
        400,
        f"unknown base {raw[:60]!r}: give a reference encoding ({', '.join(list_encodings())}) or the "
        "name of a tokenizer trained on this server (GET /api/tokenizers lists them); paths are not accepted",
    )


def _refuse_training_fields(form: MultiDict) -> None:
    for field, why in TRAIN_ONLY_FIELDS.items():
        if form.get(field, "").strip():
            raise ApiError(400, f"{field!r} cannot be combined with a base: {why}")


def stored_pair(data_dir: Path, name: str) -> tuple[Path, Path] | None:
    """NAME.tiktoken and NAME.json in the data folder when both are regular files (no symlinks)."""
    pair = (data_dir / f"{name}.tiktoken", data_dir / f"{name}.json")
    if all(p.is_file() and not p.is_symlink() for p in pair):
        return pair
    return None


# ----- extension of an uploaded tokenizer: POST /api/train with `base_file` ------------------

BASE_FILE_FIELD = "base_file"  # the file field of a base tokenizer loaded from the user's disk
# What the library's reader (tokenizer.readers) loads, and the one file that may come with
# another: a .tiktoken next to its .json (our pair). A tokenizer.json or a .model comes alone.
TIKTOKEN, JSON, MINBPE = ".tiktoken", ".json", ".model"
BASE_FILE_KINDS = (TIKTOKEN, JSON, MINBPE)


@dataclass(frozen=True)
class UploadedBase:
    """A base tokenizer the user sent, stored in the job's folder and loaded once to check it."""

    name: str  # the tokenizer's name as the library names it (the page's panel, unless suffixed)
    path: str  # the stored file Tokenizer.load reads in the job: the very bytes that were sent
    files: list[str]  # the user's file names, shown back and kept in the result's metadata


def store_base_upload(uploads: list[FileStorage], base_dir: Path, add: int) -> UploadedBase:
    """Move the uploaded base file(s) into `base_dir` under their own names and load them with
    `Tokenizer.load`, the reader the job uses on the same files: a file it refuses, or one that
    `add` new ids would take past the largest id a file holds, is a 400 naming the file and the
    reason (the library's message), before any job exists.

    The names are kept because the library names a tokenizer after its file (a bare .tiktoken,
    a tokenizer.json, a .model), exactly as the page does when the user loads the same file."""
    for storage in uploads:
        storage.close()  # flushes: read by path below and in the job
    by_kind = _base_files(uploads)
    stems = {Path(label).stem for label, _ in by_kind.values()}
    if len(stems) > 1:
        raise ApiError(
            400,
            f"{BASE_FILE_FIELD}: {' and '.join(label for label, _ in by_kind.values())} have different "
            "names; a .tiktoken goes with the .json of the same name",
        )
    stem = _file_stem(stems.pop())
    base_dir.mkdir()
    for kind, (_, path) in by_kind.items():
        path.rename(base_dir / f"{stem}{kind}")  # the suffix as the reader spells it
    main = base_dir / f"{stem}{next(kind for kind in (MINBPE, JSON, TIKTOKEN) if kind in by_kind)}"
    labels = [label for label, _ in by_kind.values()]
    try:
        tok = Tokenizer.load(main)
    except (ValueError, OSError, RecursionError) as e:  # TokenizerFileError is a ValueError
        reason = str(e).replace(f"{base_dir}{os.sep}", "")
        raise ApiError(
            400, f"{BASE_FILE_FIELD} {' + '.join(labels)} is not a tokenizer the library loads: {reason}"
        ) from None
    _check_extendable(tok, f"{BASE_FILE_FIELD} {' + '.join(labels)}", add)
    return UploadedBase(name=tok.name, path=str(main), files=labels)


def _file_stem(stem: str) -> str:
    """A name's stem as a file may have it: 100 emoji are 400 bytes, past NAME_MAX (a 500)."""
    return stem.encode("utf-8")[:MAX_STEM_BYTES].decode("utf-8", "ignore")


def _check_extendable(tok: Tokenizer, what: str, add: int) -> None:
    """The library's own checks (tokenizer.extend.check_extendable, check_add), made this
    request's 400 naming the base (`what`), not a job that fails later."""
    try:
        check_extendable(tok)
        check_add(tok, add)
    except ValueError as e:
        raise ApiError(400, f"{what}: {e}") from None


def check_copied_base(stem: Path, base: str, add: int) -> None:
    """The job's copy of a trained base (STEM.tiktoken + STEM.json), loaded as the job loads it:
    a pair damaged since it was trained, or one extend cannot reproduce, is this request's 400
    (as for an uploaded base), not a 202 and a job that fails when it starts."""
    try:
        tok = Tokenizer.load(stem)
    except (ValueError, OSError, RecursionError) as e:  # TokenizerFileError is a ValueError
        reason = str(e).replace(f"{stem.parent}{os.sep}", "")
        raise ApiError(
            400,
            f"the base tokenizer {base!r} cannot be loaded: {reason}; GET /api/tokenizers lists it "
            "as broken: delete it, or choose another base",
        ) from None
    tok.name = base
    _check_extendable(tok, f"base {base!r}", add)


def _base_files(uploads: list[FileStorage]) -> dict[str, tuple[str, Path]]:
    """kind (suffix) -> (the user's file name, the uploaded file), every file checked by name."""
    by_kind: dict[str, tuple[str, Path]] = {}
    for i, storage in enumerate(uploads):
        label = display_filename(storage.filename, i)
        path = Path(storage.stream.name)
        kind = Path(label).suffix.lower()
        if kind not in BASE_FILE_KINDS or Path(label).stem in ("", "."):
            raise ApiError(
                400,
                f"{BASE_FILE_FIELD} {label[:60]!r}: expected a tokenizer file: a .tiktoken (and its .json), "
                "a Hugging Face tokenizer.json or a minbpe .model",
            )
        if path.stat().st_size == 0:
            raise ApiError(400, f"{BASE_FILE_FIELD} {label[:60]!r} is empty")
        if kind in by_kind:
            raise ApiError(400, f"{BASE_FILE_FIELD}: two {kind} files; send the files of one tokenizer")
        by_kind[kind] = (label, path)
    if MINBPE in by_kind and len(by_kind) > 1:
        raise ApiError(400, f"{BASE_FILE_FIELD}: a minbpe .model is a whole tokenizer; send it alone")
    return by_kind
