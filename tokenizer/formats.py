"""File formats: tiktoken's `.tiktoken` rank files, our `.json` metadata and minbpe's `.model`.

A `.tiktoken` file holds one `base64(token_bytes) rank` line per token, exactly what
`tiktoken.load.load_tiktoken_bpe` reads. Everything else about a tokenizer (name, split
pattern, special tokens, merges, training statistics) lives in `STEM.json` next to it.
karpathy/minbpe's `.model` is one text file: `minbpe v1`, the pattern, the number of special
tokens, a `TOKEN ID` line per special token, then an `IDX1 IDX2` line per merge (merge i
makes id 256 + i). Files are written atomically; reading checks sizes, types and ranges
(tokenizer.validate) and names the file and line of anything wrong.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ._bpe import RanksWithout, bpe_merge, bpe_parts
from .validate import (
    MAX_FILE_BYTES,
    MAX_ID,
    TokenizerFileError,
    check_entries,
    check_merges,
    check_size,
    decode_utf8,
    parse_json,
)

FORMAT_NAME = "bpe-playground"  # our .json's "format"
FORMAT_VERSION = 1
MINBPE_MAGIC = "minbpe v1"  # line 1 of every .model file minbpe writes
_RANK_DIGITS = len(str(MAX_ID))  # a longer rank is out of range before int() parses it


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write via a temp file in the same folder + rename, so readers never see half a file."""
    atomic_write_files({path: data})


def atomic_write_files(contents: dict[str | os.PathLike, bytes]) -> None:
    """Write files that belong together (a tokenizer's .tiktoken and .json) all at once: each
    goes to a temp file beside it, and only when every one is written and synced are they
    renamed into place; on an error the temp files are removed and nothing is replaced. (Saved
    one after the other, a disk that filled while the .json was written left the new .tiktoken
    beside the old .json: a pair of no tokenizer, the old one lost.)"""
    targets = {Path(path): data for path, data in contents.items()}
    for path in targets:
        check_save_target(path)
    written: list[tuple[str, Path]] = []
    try:
        for path, data in targets.items():
            fd, tmp = _temp_beside(path)
            written.append((tmp, path))
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:  # "No space left on device" names no file
                raise named_os_error(e, path) from None
            os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the usual permissions
        for tmp, path in written:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in written:
            _remove(tmp)
        raise


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file that becomes `path` when the block ends, all at once (for writers that
    stream: no copy of the content in memory); on an error the temp file is removed. Only a
    regular file (or nothing) is replaced: the rename would put a file where a device, pipe or
    symbolic link was (as root, `/dev/null` itself), and a folder cannot be."""
    path = Path(path)
    check_save_target(path)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException as e:
        _remove(tmp)
        if isinstance(e, OSError):  # a full disk's error names no file: name the one written
            raise named_os_error(e, path) from None
        raise


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new temp file in `path`'s folder (a rename within one file system is atomic)."""
    try:
        return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as e:  # about the file asked for, not the temp name the user never chose
        raise OSError(e.errno, e.strerror, str(path)) from None


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def check_save_target(path: Path) -> None:
    """ValueError unless `path` names a regular file or nothing yet: a save writes a new file and
    renames it over `path`, which would put a file where a device (as root, /dev/null itself),
    a pipe or a symbolic link (the link, not what it points to) was; a folder cannot be."""
    if not path.name or path.name in (".", ".."):
        raise ValueError(f"{str(path)!r} names no file: give a file name")
    if path.is_symlink():
        raise ValueError(
            f"{path} is a symbolic link; a save replaces the link itself, not what it points to: "
            f"give the file's own path ({os.path.realpath(path)}) or another name"
        )
    if path.exists() and not path.is_file():
        kind = "a folder" if path.is_dir() else "a device, pipe or socket"
        raise ValueError(f"{path} is {kind}, which a save would replace; give a file name")


def name_of_file(name: str) -> str:
    """A name taken from a file's name, as text a .json can hold: a byte of the name that is
    not UTF-8 (Python hands it over as a lone surrogate) becomes U+FFFD. Kept as it was, it
    made `extend` fail after all its work, saving the base's name: "'utf-8' codec can't encode
    character '\\udcff'"."""
    try:
        return os.fsencode(name).decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate no file name makes (from JavaScript, say)
        return name.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


SAVED_SUFFIXES = (".tiktoken", ".json")  # a save writes STEM plus each; dropped from a stem given with one


def saved_stem(path: str | os.PathLike) -> Path:
    """The STEM of STEM, STEM.tiktoken or STEM.json: the files a save writes, or a load reads."""
    path = Path(path)
    return path.with_suffix("") if path.suffix in SAVED_SUFFIXES else path


def save_paths(stem: str | os.PathLike) -> tuple[Path, Path]:
    """STEM.tiktoken and STEM.json for Tokenizer.save (a .tiktoken or .json suffix on `stem` is
    dropped), both checked before either is written: a save that refused its .json used to
    leave a new .tiktoken behind, and `folder/` saved as folder.tiktoken beside the folder."""
    text = os.fspath(stem)
    path = saved_stem(text)
    if not path.name or path.name in (".", "..") or text.endswith(("/", os.sep)):
        raise ValueError(
            "save needs a file name stem such as 'my_tok' (it writes my_tok.tiktoken and my_tok.json), "
            f"got {text!r}; inside a folder: FOLDER/NAME"
        )
    targets = path.with_name(path.name + ".tiktoken"), path.with_name(path.name + ".json")
    for target in targets:
        check_save_target(target)
    return targets


def _read_umask() -> int:
    """Read once at import: os.umask can only be read by setting it, which races with threads."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_tiktoken(ranks: dict[bytes, int]) -> str:
    """Ranks -> `.tiktoken` text, lines sorted by rank."""
    lines = [
        f"{base64.b64encode(token).decode('ascii')} {rank}\n"
        for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])
    ]
    return "".join(lines)


def parse_tiktoken(text: str, source: str = "<string>") -> dict[bytes, int]:
    """`.tiktoken` text -> ranks; a bad line raises TokenizerFileError naming the file and line.
    A leading byte-order mark (an editor's) is skipped, as tiktoken's loader does (its base64
    decoding drops the mark's bytes). The file is ASCII: a character beyond it (the page hands
    over text, where a no-break space or U+2028 would have split a line) is refused by name."""
    check_size(len(text), source)
    text = text.removeprefix("\ufeff")  # the byte-order mark, decoded
    if not text.isascii():
        at = next(i for i, ch in enumerate(text) if not ch.isascii())
        raise TokenizerFileError(
            f"{source}:{len(text[:at].splitlines()) or 1}: non-ASCII character U+{ord(text[at]):04X}; "
            "a .tiktoken file holds base64 tokens and decimal ranks, in ASCII: remove it"
        )
    return _parse_tiktoken_bytes(text.encode("ascii"), source)


def _parse_tiktoken_bytes(data: bytes, source: str) -> dict[bytes, int]:
    """Lines and fields split as tiktoken's loader splits them, on bytes: bytes.splitlines breaks
    only at \\n, \\r\\n and \\r, bytes.split only at ASCII whitespace. (str's also break at form
    feed, \\x1c..\\x1f, NEL and U+2028: a line 'YWI= 256<FF>YmM= 257' loaded as two tokens,
    a file tiktoken refuses.)"""
    ranks: dict[bytes, int] = {}
    seen_ranks: set[int] = set()
    lines = data.splitlines()
    check_entries(len(lines), source, "lines")
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = line.split()
        shown = line[:60].decode("ascii")
        if len(parts) != 2:
            raise TokenizerFileError(f"{source}:{lineno}: expected 'BASE64 RANK', got {shown!r}")
        token_b64, rank_bytes = parts
        token = _base64_token(token_b64, f"{source}:{lineno}")
        if not rank_bytes.isdigit():  # bytes: ASCII digits only (int() also reads '+5' and '5_0')
            raise TokenizerFileError(
                f"{source}:{lineno}: rank {rank_bytes[:30].decode('ascii')!r} is not a number; ranks "
                f"are integers from 0 to {MAX_ID - 1}, written in the digits 0-9"
            )
        rank = int(rank_bytes) if len(rank_bytes) <= _RANK_DIGITS else MAX_ID
        if rank >= MAX_ID:
            raise TokenizerFileError(
                f"{source}:{lineno}: rank {rank_bytes[:30].decode('ascii')} is out of range; ranks are "
                f"integers from 0 to {MAX_ID - 1}"
            )
        if token in ranks:
            raise TokenizerFileError(f"{source}:{lineno}: token {token!r} appears twice")
        if rank in seen_ranks:
            raise TokenizerFileError(f"{source}:{lineno}: rank {rank} appears twice")
        ranks[token] = rank
        seen_ranks.add(rank)
    if not ranks:
        raise TokenizerFileError(f"{source}: no tokens in file")
    return ranks


def write_tiktoken(path: str | os.PathLike, ranks: dict[bytes, int]) -> None:
    atomic_write_text(path, dump_tiktoken(ranks))


def write_saved(tiktoken_path: Path, ranks: dict[bytes, int], json_path: Path, obj: dict[str, Any]) -> None:
    """A tokenizer's STEM.tiktoken and STEM.json, replaced together (atomic_write_files)."""
    atomic_write_files({tiktoken_path: dump_tiktoken(ranks).encode("utf-8"), json_path: _json_bytes(obj)})


def named_os_error(error: OSError, path: str | os.PathLike) -> OSError:
    """The error, naming `path` if it names no file (a failed read() says only "[Errno 5]
    Input/output error")."""
    if error.filename is not None or error.errno is None:
        return error
    return OSError(error.errno, error.strerror, str(path))


def read_bytes(path: str | os.PathLike) -> bytes:
    """A tokenizer file's bytes, its size checked before it is read (and refused if UTF-16).

    Only a regular file (symlinks followed) is read: a device such as /dev/zero never ends and
    a pipe blocks until someone writes to it. The read stops one byte past the bound, so a
    file that grows after the check is refused too."""
    path = Path(path)
    if path.is_dir():
        raise TokenizerFileError(f"{path}: is a directory, not a tokenizer file")
    if not stat.S_ISREG(path.stat().st_mode):
        raise TokenizerFileError(
            f"{path}: not a regular file (a device, pipe or socket); give the tokenizer file itself"
        )
    check_size(path.stat().st_size, str(path))
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise named_os_error(e, path) from None
    check_size(len(data), str(path))
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or b"\x00" in data[:2]:
        # No tokenizer file starts with a NUL (a .tiktoken starts with base64, a .json with '{' or
        # a space, a .model with 'minbpe v1'): this one is not UTF-8, and each reader said only
        # 'non-ASCII byte at offset 0' or showed its first line as 'Y\x00Q\x00...'.
        raise TokenizerFileError(
            f"{path}: UTF-16 or UTF-32 text (or a binary file), not a tokenizer file; tokenizer "
            "files are UTF-8 text: save it as UTF-8"
        )
    return data


def _base64_token(text: bytes, where: str) -> bytes:
    """A token's bytes from its base64, which must be exact: tiktoken's loader drops the
    characters outside the alphabet ('-_-_' read as b'') and the padding after the first '=',
    so such a line means different tokens to different readers."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise TokenizerFileError(
            f"{where}: token {text[:40].decode('ascii')!r} is not base64 as tiktoken writes it "
            "(A-Z a-z 0-9 + /, padded with = to a multiple of 4 characters): fix or remove the line"
        ) from None


def read_tiktoken(path: str | os.PathLike) -> dict[bytes, int]:
    path = Path(path)
    data = read_bytes(path).removeprefix(codecs.BOM_UTF8)
    if not data.isascii():
        at = next(i for i, byte in enumerate(data) if byte >= 0x80)
        raise TokenizerFileError(f"{path}: not a .tiktoken file (non-ASCII byte at offset {at})")
    return _parse_tiktoken_bytes(data, str(path))


def duplicate_ids_json(merges: Any, duplicates: dict[int, int]) -> dict[str, Any]:
    """{"duplicate_ids": {"259": 258}} for STEM.json: a tokenizer without merges (an extension of
    a base whose merges repeat bytes) keeps there the later ids that the .tiktoken cannot hold."""
    if merges is not None or not duplicates:
        return {}  # the merges make them again
    return {"duplicate_ids": {str(later): earlier for later, earlier in sorted(duplicates.items())}}


def write_json(path: str | os.PathLike, obj: dict[str, Any]) -> None:
    atomic_write_bytes(path, _json_bytes(obj))


def _json_bytes(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def read_json(path: str | os.PathLike) -> dict[str, Any]:
    """A JSON file's top-level object; size and nesting are checked before parsing."""
    return parse_json(decode_utf8(read_bytes(path), str(path)), str(path))


def dump_minbpe(pattern_regex: str, special_tokens: dict[str, int], merges: list[tuple[int, int]]) -> str:
    """minbpe's `.model` text, exactly as minbpe's save() writes it."""
    if "\n" in pattern_regex or "\r" in pattern_regex or pattern_regex != pattern_regex.strip():
        raise ValueError(
            "minbpe's .model holds the pattern on one line and strips it: a pattern with a line "
            "break or with spaces at either end cannot be written"
        )
    for token in special_tokens:
        if not token or token.split() != [token]:
            raise ValueError(f"special token {token!r} has whitespace; minbpe's .model cannot hold it")
    lines = [MINBPE_MAGIC, pattern_regex, str(len(special_tokens))]
    lines += [f"{token} {token_id}" for token, token_id in special_tokens.items()]
    lines += [f"{left} {right}" for left, right in merges]
    return "\n".join(lines) + "\n"


def minbpe_text(tok: Any) -> str:
    """A Tokenizer as minbpe's `.model` text (merges recovered from the ranks when it has none)."""
    if tok.preparation is not None:
        raise ValueError(
            f"{tok.name}: minbpe's .model holds a pattern and merges only, and this tokenizer also "
            f"{tok.preparation.describe()}; minbpe would give other ids. Export it as a Hugging Face "
            "tokenizer.json instead (export --format hf)"
        )
    merges = tok.merges if tok.merges is not None else recover_merges(tok.mergeable_ranks, tok.name)
    pattern = "" if tok.pattern == "none" else tok.pattern_regex
    return dump_minbpe(pattern, tok.special_tokens, merges)


# bytes: a longer token's merge is recovered with the heap BPE; the loop below rescans every
# pair after each merge, quadratic in the length (a run of one letter trains 8 MB tokens).
LONG_TOKEN = 256


def split_below(token: bytes, rank: int, ranks: Any, token_of: Any) -> list[bytes]:
    """What BPE leaves of `token`'s bytes with only the ranks below `rank`: the two tokens that
    the encoder (and tiktoken) ever joins into it, or more parts when it never joins any (then
    only a whole-chunk lookup gives the token). `token_of[r]` is the bytes of rank r.

    Why two parts are the only ones: if the encoder joins x and y into `token` inside some
    chunk, every merge made inside x and y before was the lowest-rank pair of the chunk, so
    also of x + y alone, and the pair across them ranked higher; BPE on x + y alone makes
    the same merges and stops at [x, y] (the lemma in extend.py)."""
    if len(token) > LONG_TOKEN:  # the same BPE in O(n log n): a heap, ranks below this one
        return [token_of[i] for i in bpe_merge(token, RanksWithout(ranks, limit=rank))]
    return bpe_parts(token, ranks.get, rank)


def recover_merges(ranks: dict[bytes, int], name: str = "tokenizer") -> list[tuple[int, int]]:
    """The merges of a rank table whose bytes are ids 0..255 and whose ranks run 0..n-1: token
    of rank r is the last merge of BPE on its bytes with the ranks below r (as minbpe's GPT-4
    tokenizer recovers cl100k's merges), and must come out as exactly two parts."""
    by_rank = sorted((rank, token) for token, rank in ranks.items())
    if [rank for rank, _ in by_rank] != list(range(len(by_rank))) or any(
        ranks.get(bytes([b])) != b for b in range(256)
    ):
        raise ValueError(
            f"{name}: minbpe's .model needs the bytes as ids 0..255 and merges as ids 256, 257, ... "
            "without gaps; this tokenizer's ids are laid out otherwise (a reference encoding?)"
        )
    tokens = [token for _, token in by_rank]
    merges = []
    for rank, token in by_rank[256:]:
        parts = split_below(token, rank, ranks, tokens)
        if len(parts) != 2:
            raise ValueError(f"{name}: token {token!r} (id {rank}) is not a merge of two earlier tokens")
        merges.append((ranks[parts[0]], ranks[parts[1]]))
    return merges


def check_minbpe_merges(merges: list[tuple[int, int]], linenos: list[int], source: str) -> None:
    """TokenizerFileError unless every merge is the pair our encoder joins into its token.

    minbpe's encoder merges the listed pair of lowest id; ours (tiktoken's rule) any two
    adjacent tokens whose bytes are a token, and it takes a chunk that is a token whole. The
    two give the same ids when each token's merge is what BPE makes of its bytes with the
    merges before it (split_below), which minbpe's training always writes: each merge joins
    two tokens adjacent in the text's segmentation. A hand-made file can list another pair:
    with merges 'c d', 'a b', 'ab c', 'abc d', minbpe encodes "abcd" as [ab, cd] (no merge
    lists that pair), ours as [abcd]. Later ids of repeated bytes are made by neither encoder."""
    vocab = [bytes([b]) for b in range(256)]
    ranks = {token: i for i, token in enumerate(vocab)}
    for i, (left, right) in enumerate(merges):
        vocab.append(vocab[left] + vocab[right])
        ranks.setdefault(vocab[-1], 256 + i)
    for i, (left, right) in enumerate(merges):
        token_id = 256 + i
        if ranks[vocab[token_id]] != token_id:
            continue
        parts = [ranks[part] for part in split_below(vocab[token_id], token_id, ranks, vocab)]
        if parts != [left, right]:
            made = (
                f"BPE with the merges before it joins {parts[0]} {parts[1]} into it"
                if len(parts) == 2
                else f"the merges before it never make it from its bytes (they stop at {len(parts)} pieces)"
            )
            raise TokenizerFileError(
                f"{source}:{linenos[i]}: merge '{left} {right}' makes id {token_id} "
                f"({_shown(vocab[token_id])}), but {made}; minbpe (which merges listed pairs only) and "
                "tiktoken's rule would give different ids. minbpe's training never writes such a "
                "merge: the file was made or edited by hand"
            )


def _shown(token: bytes) -> str:
    return repr(token) if len(token) <= 40 else repr(token[:40])[:-1] + "...'"


def parse_minbpe(text: str, source: str) -> tuple[str, dict[str, int], list[tuple[int, int]]]:
    """minbpe `.model` text -> (pattern regex, special tokens, merges), read as minbpe's load()."""
    check_size(len(text), source)
    lines = _universal_lines(text)
    check_entries(len(lines), source, "lines")
    if lines[0].startswith("\ufeff"):  # minbpe's load (open(..., encoding="utf-8")) refuses it too
        raise TokenizerFileError(
            f"{source}:1: the file starts with a byte-order mark (U+FEFF), which minbpe's load "
            "refuses too; save it without one (UTF-8 without BOM)"
        )
    if lines[0].strip() != MINBPE_MAGIC:
        raise TokenizerFileError(
            f"{source}:1: expected {MINBPE_MAGIC!r}, got {lines[0][:40]!r}; not a minbpe .model"
        )
    if len(lines) < 3:
        raise TokenizerFileError(f"{source}: ends before the number of special tokens (line 3)")
    pattern = lines[1].strip()
    count = lines[2].strip()
    if not (count.isascii() and count.isdigit() and len(count) < 7):
        raise TokenizerFileError(f"{source}:3: expected the number of special tokens, got {count[:40]!r}")
    n_special = int(count)
    special: dict[str, int] = {}
    for lineno in range(4, 4 + n_special):
        parts = lines[lineno - 1].split() if lineno <= len(lines) else []
        if len(parts) != 2 or not _is_number(parts[1]):
            raise TokenizerFileError(
                f"{source}:{lineno}: expected 'TOKEN ID' (special token {lineno - 3} of {n_special})"
            )
        special[parts[0]] = _number(parts[1], source, lineno)
    pairs, linenos = [], []
    seen: dict[tuple[int, int], int] = {}  # pair -> the line of its merge
    for lineno, line in enumerate(lines[3 + n_special :], start=4 + n_special):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2 or not all(map(_is_number, parts)):
            raise TokenizerFileError(f"{source}:{lineno}: expected a merge 'IDX1 IDX2', got {line[:40]!r}")
        pair = (_number(parts[0], source, lineno), _number(parts[1], source, lineno))
        # minbpe's load keeps a pair once, with the later id (its dict), where ours would use the
        # earlier: the same file encoded "ab" as 257 there and 256 here. Its save never repeats one.
        if seen.setdefault(pair, lineno) != lineno:
            raise TokenizerFileError(
                f"{source}:{lineno}: the merge {line.strip()!r} repeats line {seen[pair]}; minbpe keeps "
                "only the later one and our ids would differ from its: remove the repeat"
            )
        pairs.append(list(pair))
        linenos.append(lineno)
    merges = check_merges(pairs, source)
    check_minbpe_merges(merges, linenos, source)
    return pattern, special, merges


def _universal_lines(text: str) -> list[str]:
    """The lines of minbpe's load, which reads in text mode: \\r\\n, \\r and \\n each end a line
    (and nothing else does: str.splitlines would also break at form feed, NEL and U+2028). Split at
    \\n alone, a file saved with \\r line ends was 'not a minbpe .model'."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _number(text: str, source: str, lineno: int) -> int:
    value = int(text) if len(text) <= _RANK_DIGITS else MAX_ID
    if value >= MAX_ID:
        raise TokenizerFileError(f"{source}:{lineno}: id {text[:30]} is out of range (0 to {MAX_ID - 1})")
    return value
