"""Argument helpers shared by the command groups: which tokenizer, which text."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from ..core import Tokenizer
from ..encodings import get_encoding, list_encodings
from ..formats import SAVED_SUFFIXES, check_save_target, named_os_error, saved_stem
from ..loading import load_any
from ..regex_check import MAX_SAMPLE_CHARS
from ..streaming import not_utf8
from ..validate import DECIMAL, REAL

DEFAULT_ENCODING = "cl100k_base"
STDIO = "-"  # as a file to read: stdin; as -o of `classic`: stdout


def integer(value: str) -> int:
    """The argparse `type` of every integer option: '300', '+300', ' 300 ' but not '٣٠٠', '3_00',
    '1e3' or '3.0'. Ranges are the library's to check, which names the option in its message."""
    text = value.strip()
    if not DECIMAL.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{value[:40]!r} is not an integer: write it with the digits 0-9")
    try:
        return int(text)
    except ValueError:  # past int()'s 4,300 digits: an integer, but no count or size is that big
        digits = len(text.lstrip("+-"))
        raise argparse.ArgumentTypeError(
            f"{text[:20]}... ({digits:,} digits) is far too big: write it with the digits 0-9, at most 4,300 of them"
        ) from None


def real(value: str) -> float:
    """The argparse `type` of a real-number option: '0.1', '.5', '1e3' but not '٠.٥', '0_5',
    'nan' or 'inf'. Ranges are the caller's to check."""
    text = value.strip()
    if not REAL.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{value[:40]!r} is not a number: write it with the digits 0-9 (and . or e)"
        )
    return float(text)


def add_tokenizer_choice(parser: argparse.ArgumentParser) -> None:
    """--encoding NAME or --tokenizer PATH (one of them; default cl100k_base)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--encoding", "-e", choices=list_encodings(), help=f"reference encoding (default {DEFAULT_ENCODING})"
    )
    group.add_argument(
        "--tokenizer",
        "-t",
        metavar="PATH",
        help="a tokenizer file: STEM (.json + .tiktoken), STEM.json, STEM.tiktoken, a minbpe .model "
        "or a Hugging Face tokenizer.json (a reference encoding's name works too, as in audit and stats)",
    )


def load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    if args.tokenizer is not None:  # '' is an error, not the default encoding
        return load_any(args.tokenizer)  # `-t cl100k_base` said "no tokenizer at cl100k_base"
    return get_encoding(args.encoding or DEFAULT_ENCODING)


def read_utf8(path: str | Path) -> str:
    """A file's text ('-' for stdin), or ValueError naming the first byte that is not UTF-8."""
    if str(path) != "-" and Path(path).is_dir():
        files = str(path).rstrip("/") + "/*.txt"
        raise ValueError(f"{path}: is a directory, not a text file; give the files in it ({files})")
    what = None if str(path) == "-" else _not_a_text_file(Path(path))
    if what:
        raise ValueError(f"{path}: {what}; give a file, or '-' for stdin")
    try:
        data = _stdin_bytes() if str(path) == "-" else Path(path).read_bytes()
    except OSError as e:
        raise named_os_error(e, "stdin" if str(path) == "-" else path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        where = "stdin" if str(path) == "-" else path
        raise not_utf8(where, e.start, data[e.start : e.start + 4]) from None


def _stdin_bytes() -> bytes:
    """All of stdin, unless it is closed (`<&-`: sys.stdin is None, an AttributeError traceback)
    or a device that never ends (`< /dev/zero` read until the memory was full); a terminal and
    /dev/null are devices that end."""
    check_stdin()
    return sys.stdin.buffer.read()


def check_stdin() -> None:
    """ValueError if stdin is closed or a device that never ends (see _stdin_bytes)."""
    if sys.stdin is None:
        raise ValueError("stdin is closed; give the text as an argument or with --file FILE")
    try:
        info = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError):  # not a file descriptor (a test's stream): nothing to check
        info = None
    if info is not None and not sys.stdin.isatty() and _never_ends(info):
        raise ValueError(
            "stdin is a device (such as /dev/zero), not text: reading it would never end; "
            "redirect a file, or pipe the text in"
        )


def _never_ends(info: os.stat_result) -> bool:
    if stat.S_ISBLK(info.st_mode):
        return True
    return stat.S_ISCHR(info.st_mode) and info.st_rdev != os.stat(os.devnull).st_rdev


# where the shell's anonymous pipes appear (bash's <(...), /dev/stdin): read, they end when
# their writer does
ANONYMOUS_PIPES = ("/dev/fd/", "/proc/self/fd/", "/dev/stdin")


def _not_a_text_file(path: Path) -> str | None:
    """What `path` is when reading it would never end: /dev/zero or /dev/urandom (reading one
    filled the memory), a named pipe that no one writes to (blocked for ever)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # read_bytes says what is wrong (missing, unreadable)
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a text file"
    if stat.S_ISFIFO(mode) and not str(path).startswith(ANONYMOUS_PIPES):
        return "is a named pipe (FIFO), not a text file: reading it waits for a writer that may never come"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a text file"
    return None


def check_output(out: str, *, stem: bool = False, inputs: Iterable[str | Path] = ()) -> Path:
    """Refuse an -o that cannot be written, before any work (a long training used to fail only
    when it saved): no file name, a folder, a folder that does not exist or is read-only, a
    device or link, or one of the command's `inputs` (`count c.txt -o c.txt` replaced the corpus
    by its table). `stem`: OUT_STEM, which becomes OUT_STEM.tiktoken + OUT_STEM.json (a .json or
    .tiktoken suffix is dropped, as Tokenizer.save does); returns the path, or the stem."""
    kind = "a file name stem, e.g. my_tok" if stem else "a file name"
    if out == STDIO:  # wrote a file named '-', where `classic learn -o -` writes to stdout
        raise ValueError(
            f"-o -: this command writes files, not stdout; give {kind} (./- for a file named '-')"
        )
    if not out.strip() or out.endswith(("/", os.sep)):
        raise ValueError(f"-o {out!r} names no file: give {kind} (inside a folder: FOLDER/NAME)")
    path = Path(out)
    if stem:
        path = saved_stem(path)
        targets = [path.with_name(path.name + suffix) for suffix in SAVED_SUFFIXES]
    else:
        targets = [path]
    for target in targets:
        if target.is_dir():
            raise ValueError(f"-o {out}: {target} is a directory; give {kind} (inside it: {target}/NAME)")
        _check_replaceable(out, target)
        _check_not_an_input(out, target, inputs)
    _check_folder(out, path.parent)
    return path


def _check_folder(out: str, folder: Path) -> None:
    """The output's folder, or the nearest of its parents that exists (`ready` makes the rest,
    as `mkdir -p` would, when the result is written), is a folder that can be written to."""
    existing = next((above for above in (folder, *folder.parents) if above.exists()), Path("."))
    if not existing.is_dir():
        raise ValueError(f"-o {out}: {existing} is a file, not a folder; write into a folder: FOLDER/NAME")
    if not os.access(existing, os.W_OK | os.X_OK):  # else a whole training, then the save failed
        raise ValueError(
            f"-o {out}: the folder {existing} cannot be written to (a read-only file system, or no "
            "permission); choose another folder"
        )


def ready(path: Path) -> Path:
    """`path`, once its folder exists: the folders check_output found missing are made now,
    when the result is there to be written (a command that fails before leaves none behind)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot make the folder {path.parent} for {path.name}: {e.strerror or e}") from None
    return path


def _check_replaceable(out: str, target: Path) -> None:
    """A save renames a new file over `target` (formats.check_save_target), checked before the work."""
    try:
        check_save_target(target)
    except ValueError as e:
        raise ValueError(f"-o {out}: {e}") from None


def _check_not_an_input(out: str, target: Path, inputs: Iterable[str | Path]) -> None:
    """The output would replace a file the command reads (the same file under any name)."""
    for source in inputs:
        if str(source) != "-" and target.exists() and Path(source).exists() and target.samefile(source):
            alias = "" if str(source) == str(target) else f" (as {source})"
            raise ValueError(
                f"-o {out}: {target} is also an input of this command{alias}; writing it would "
                "destroy that input: give another output name"
            )


def tokenizer_files(spec: str) -> list[Path]:
    """The files a tokenizer argument may read: itself and, for a saved STEM, STEM.json and
    STEM.tiktoken (as readers.read_file looks for them)."""
    path = Path(spec)
    if path.name in ("", ".", ".."):
        return [path]  # names no tokenizer: the loader says so
    stem = saved_stem(path)
    return [path, *(stem.with_name(stem.name + suffix) for suffix in SAVED_SUFFIXES)]


def corpus_sample(paths: list[Path]) -> str:
    """The first MAX_SAMPLE_CHARS characters of the corpus, to check a custom regex's coverage."""
    with open(paths[0], encoding="utf-8", errors="replace") as f:
        return f.read(MAX_SAMPLE_CHARS)


def read_text(args: argparse.Namespace) -> str:
    """The text of a command: the TEXT argument, --file (a path or '-'), or stdin."""
    if args.file is not None and args.text is not None:
        raise ValueError("give TEXT or --file, not both")
    if args.file is not None:
        return read_utf8(args.file)
    if args.text is not None:
        return args.text
    return read_utf8("-")
