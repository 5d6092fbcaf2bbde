"""`-` among the FILEs of `train`, `count` and `extend`: the corpus read from stdin.

Counting reads its files twice (the custom regex's sample, then the count) and cuts them
into byte ranges for its worker processes, which a pipe allows neither of; so stdin is first
copied to a temporary file, checked as UTF-8 on the way so that an error names stdin, not
the copy. The copy is removed when the command ends, whatever its outcome.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

from ..streaming import not_utf8
from .common import STDIO, check_stdin

COPY_BLOCK = 1 << 20  # bytes per read (1 MiB): few calls, and never the whole of stdin in memory


@contextlib.contextmanager
def stdin_as_file(files: list[str]) -> Iterator[list[str]]:
    """`files` with `-` replaced by a temporary copy of stdin (the list itself if none is `-`)."""
    if STDIO not in files:
        yield files
        return
    if files.count(STDIO) > 1:
        raise ValueError("'-' (stdin) is given twice; stdin can be read once")
    check_stdin()
    fd, copy = tempfile.mkstemp(prefix="bpe-stdin-", suffix=".txt")
    try:
        with os.fdopen(fd, "wb") as out:
            _copy_utf8(sys.stdin.buffer, out)
        yield [copy if name == STDIO else name for name in files]
    finally:
        os.unlink(copy)


def _copy_utf8(source, out) -> None:
    """Copy `source` to `out`; ValueError at the first byte that is not UTF-8 (offset in stdin)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0  # of the block in stdin
    while True:
        block = source.read(COPY_BLOCK)
        pending = decoder.getstate()[0]  # an unfinished character from the block before
        try:
            decoder.decode(block, final=not block)
        except UnicodeDecodeError as e:  # e.start counts from the pending bytes
            data = pending + block
            raise not_utf8("stdin", offset - len(pending) + e.start, data[e.start : e.start + 4]) from None
        if not block:
            return
        out.write(block)
        offset += len(block)
