"""The request body of POST /api/train, parsed with every bound checked before the work it bounds.

Werkzeug's own form parser is made for trusted forms: it decodes text fields with
errors="replace" (bytes FF FE in the `text` field became U+FFFD and then merges), and it reads
a url-encoded body whole, with no field-size limit (a 17 MiB `text` passed where multipart
said 413). This parser is the same sans-IO multipart decoder driven by a loop that

- bounds each text field while it arrives: `text` by MAX_TEXT_BYTES, every other field by
  MAX_FIELD_BYTES (413 naming the field), and the number of parts (werkzeug's MAX_FORM_PARTS);
- decodes each field strictly: invalid UTF-8 is a 400 naming the field and the byte offset;
- applies the same bounds to a url-encoded body: its length is checked before it is read
  (percent-encoding may triple the bytes of a field), then the same per-field checks.

Uploaded files still stream to the request's `_get_file_stream` (train.UploadRequest writes
them into the job's folder): MAX_UPLOAD_BYTES bounds the whole body, and a file field named in
`max_file_bytes` (a base tokenizer file) is bounded part by part while it arrives (413).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Mapping
from typing import IO, Any
from urllib.parse import unquote_to_bytes

from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.formparser import FormDataParser, MultiPartParser
from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData, State

from .errors import ApiError, human_size

TEXT_FIELD = "text"  # the one field allowed MAX_TEXT_BYTES; every other gets MAX_FIELD_BYTES
READ_BLOCK = 64 * 1024  # bytes read from the body at once (werkzeug's own buffer size)
PERCENT_ENCODED = 3  # bytes a url-encoded byte may take ("%FF")


class BoundedFormParser(FormDataParser):
    """A FormDataParser whose fields are bounded one by one and decoded strictly."""

    def __init__(
        self,
        stream_factory: Callable[..., IO[bytes]],
        *,
        max_content_length: int | None,
        max_form_parts: int,
        max_text_bytes: int,
        max_field_bytes: int,
        max_file_bytes: Mapping[str, int] | None = None,
        cls: type[MultiDict] | None = None,
    ) -> None:
        super().__init__(
            stream_factory,
            max_form_memory_size=max(max_text_bytes, max_field_bytes),
            max_content_length=max_content_length,
            cls=cls,
            silent=False,
            max_form_parts=max_form_parts,
        )
        self.max_text_bytes = max_text_bytes
        self.max_field_bytes = max_field_bytes
        self.max_file_bytes = dict(max_file_bytes or {})  # file field -> bytes per file

    def parse(self, stream, mimetype, content_length, options=None) -> tuple[Any, MultiDict, MultiDict]:
        try:
            return super().parse(stream, mimetype, content_length, options)
        except ValueError as e:  # a malformed body (werkzeug's decoder says how)
            raise ApiError(400, f"malformed form body: {e}; send multipart/form-data") from None

    # -- the two encodings

    def _parse_multipart(self, stream, mimetype, content_length, options):
        boundary = options.get("boundary", "").encode("ascii")
        if not boundary:
            raise ValueError("missing boundary")
        decoder = MultipartDecoder(
            boundary, max_form_memory_size=self.max_form_memory_size, max_parts=self.max_form_parts
        )
        werkzeug_parts = MultiPartParser(stream_factory=self.stream_factory)
        fields: list[tuple[str, str]] = []
        files: list[tuple[str, FileStorage]] = []
        part: Field | File | None = None
        chunks: list[bytes] = []
        out: IO[bytes] | None = None
        size = 0
        received = 0  # bytes of the body so far
        while True:
            data = self._read(stream, received, content_length)
            received += len(data)
            try:
                decoder.receive_data(data or None)
            except RequestEntityTooLarge:  # parts are consumed as they come: this is text before any
                raise ValueError(  # boundary, not a big upload (which the 413 of MAX_UPLOAD_BYTES says)
                    f"no part boundary within its first {human_size(self.max_form_memory_size)}"
                ) from None
            event = self._next_event(decoder, part, boundary)
            while not isinstance(event, (Epilogue, NeedData)):
                if isinstance(event, (Field, File)) and event.name is None:  # was a 500 (None[:40])
                    raise ApiError(
                        400,
                        "a part of the form has no name: each part needs a header "
                        'Content-Disposition: form-data; name="FIELD" (a client does this for you)',
                    )
                if isinstance(event, Field):
                    part, chunks, size = event, [], 0
                elif isinstance(event, File):
                    part, size = event, 0
                    out = werkzeug_parts.start_file_streaming(event, content_length)
                elif isinstance(event, Data) and isinstance(part, Field):
                    size += len(event.data)
                    self._check_size(part.name, size)
                    chunks.append(event.data)
                    if not event.more_data:
                        charset = werkzeug_parts.get_part_charset(part.headers)
                        fields.append((part.name, self._decode(part.name, b"".join(chunks), charset)))
                elif isinstance(event, Data) and out is not None and isinstance(part, File):
                    size += len(event.data)
                    self._check_file_size(part, size)
                    out.write(event.data)
                    if not event.more_data:
                        out.seek(0)
                        files.append(
                            (part.name, FileStorage(out, part.filename, part.name, headers=part.headers))
                        )
                event = self._next_event(decoder, part, boundary)
            if not data:
                return stream, self.cls(fields), self.cls(files)

    @staticmethod
    def _read(stream: IO[bytes], received: int, content_length: int | None) -> bytes:
        """The next block of the body; a body shorter than its Content-Length (the connection
        dropped mid-upload) was werkzeug's "The browser (or proxy) sent a request that this
        server could not understand"."""
        try:
            return stream.read(READ_BLOCK)
        except ClientDisconnected as e:
            # A chunked body (Transfer-Encoding: chunked) has no Content-Length, and the server's
            # dechunker drops the block it was filling, so no byte count is said of one: both
            # were "ended after 0 of the 0 bytes its Content-Length announced".
            if isinstance(e.__context__, TimeoutError):  # werkzeug's wrapping of the socket's timeout
                until = (
                    f"the {content_length:,} bytes its Content-Length announced were in"
                    if content_length is not None
                    else "its last chunk (Transfer-Encoding: chunked)"
                )
                raise ApiError(
                    408, f"the upload stalled: nothing arrived for too long before {until}; send it again"
                ) from None
            if content_length is None:
                raise ApiError(
                    400,
                    "the chunked upload broke off before its last chunk (Transfer-Encoding: chunked): "
                    "a chunk was malformed or cut short (a dropped connection?); send it again",
                ) from None
            raise ApiError(
                400,
                f"the upload ended after {received:,} of the {content_length:,} bytes its "
                "Content-Length announced: it was cut short (a dropped connection?); send it again",
            ) from None

    def _read_body(self, stream: IO[bytes], most: int, content_length: int | None) -> bytes:
        """The body, to its end or past `most` bytes. One read(most) returns what has arrived: a
        body cut short of its Content-Length was taken whole and trained on its start."""
        blocks: list[bytes] = []
        received = 0
        while received < most:
            block = self._read(stream, received, content_length)
            if not block:
                break
            blocks.append(block)
            received += len(block)
        return b"".join(blocks)

    def _next_event(self, decoder: MultipartDecoder, part: Field | File | None, boundary: bytes):
        try:
            return decoder.next_event()
        except ValueError:
            if not decoder.complete:
                raise
            raise ApiError(400, _unfinished(decoder.state, part, boundary)) from None
        except RequestEntityTooLarge:  # its part count: 100 files of 10 bytes said "the limit is 200 MB"
            raise ApiError(
                413,
                f"too many form parts: at most {self.max_form_parts} (files and fields together); "
                "send fewer files, or join small ones into one (GET /api/health gives max_files)",
            ) from None

    def _parse_urlencoded(self, stream, mimetype, content_length, options):
        # a full `text` and one full other field, every byte percent-encoded: checked before reading
        limit = PERCENT_ENCODED * (self.max_text_bytes + self.max_field_bytes)
        if content_length is not None and content_length > limit:
            self._too_large(TEXT_FIELD, self.max_text_bytes)
        body = self._read_body(stream, limit + 1, content_length)
        if len(body) > limit:
            self._too_large(TEXT_FIELD, self.max_text_bytes)
        pairs = [p for p in body.split(b"&") if p]
        if len(pairs) > self.max_form_parts:
            raise ApiError(400, f"too many form fields: at most {self.max_form_parts}")
        fields = []
        for pair in pairs:
            raw_name, _, raw_value = pair.partition(b"=")
            name = self._decode("", _unquote_plus(raw_name), "utf-8")
            value = _unquote_plus(raw_value)
            self._check_size(name, len(value))
            fields.append((name, self._decode(name, value, "utf-8")))
        return stream, self.cls(fields), self.cls()

    # -- the checks

    def _check_size(self, name: str, size: int) -> None:
        limit = self.max_text_bytes if name == TEXT_FIELD else self.max_field_bytes
        if size > limit:
            self._too_large(name, limit)

    def _check_file_size(self, part: File, size: int) -> None:
        limit = self.max_file_bytes.get(part.name)
        if limit is not None and size > limit:
            raise ApiError(
                413,
                f"the file {(part.filename or '')[:60]!r} in the field {part.name[:40]!r} is over "
                f"{human_size(limit)}, the most a tokenizer file may have here; is it the right file?",
            )

    def _too_large(self, name: str, limit: int) -> None:
        if name == TEXT_FIELD:
            raise ApiError(
                413, f"the field 'text' is over {human_size(limit)}; send bigger text as a file in 'corpus'"
            )
        raise ApiError(413, f"the field {name[:40]!r} is over {human_size(limit)}; no field needs that much")

    @staticmethod
    def _decode(name: str, data: bytes, charset: str) -> str:
        try:
            return codecs.decode(data, charset, "strict")
        except UnicodeDecodeError as e:
            bad = data[e.start : e.start + 4].hex(" ").upper()
            what = f"the field {name[:40]!r}" if name else "a field name"
            raise ApiError(
                400,
                f"{what} is not UTF-8 text: invalid byte(s) at offset {e.start} ({bad}); "
                "send it as UTF-8 (a browser form always does)",
            ) from None


def _unfinished(state: State, part: Field | File | None, boundary: bytes) -> str:
    """Why a multipart body that has ended is not a whole form, in the user's words: werkzeug
    says "Invalid form-data cannot parse beyond State.DATA"."""
    shown = boundary.decode("ascii", "replace")[:70]
    if state == State.PREAMBLE:
        return (
            f"malformed form body: no part starts with the boundary {shown!r} that its Content-Type "
            "names; send multipart/form-data as a client writes it (curl -F, a browser's FormData)"
        )
    where = f"inside the part {part.name[:40]!r}" if part is not None and part.name else "inside a part"
    return (
        f"malformed form body: it ends {where}, before the closing boundary '--{shown}--': the "
        "upload was cut short (or its client writes no closing boundary); send it again"
    )


def _unquote_plus(data: bytes) -> bytes:
    return unquote_to_bytes(data.replace(b"+", b" "))
