"""POST /api/train: check the form, stream the corpus into the job's folder, queue the job -> 202.

Two kinds of job: training from bytes (vocab_size, pattern, special_tokens) and extension
(`base`: a reference encoding or a tokenizer trained here, or `base_file`: the file(s) of a
tokenizer the user loaded into the page, and `add` new merges: the base's ids, pattern and
special tokens are kept; tokenizer.extend). Fields of the one kind sent with the other are
refused, never silently ignored.

An uploaded base is bounded while it streams in (MAX_BASE_FILE_BYTES), loaded once by the
library's reader before the job is queued (a refused file is a 400 naming it), and kept as sent
in the job's folder, where the job loads it exactly as it loads the copy of a trained base.

Uploaded files are written straight into the folder the job will train from (`UploadRequest`),
so a 200 MB corpus is never held in memory and never copied. Every check runs before the job
is queued; a refused request removes its folder, so it leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

from flask import Blueprint, Flask, Response, current_app, jsonify, request

from tokenizer.encodings import list_encodings
from tokenizer.train import DEFAULT_MIN_FREQUENCY

from . import forms
from .config import MIN_TRAIN_VOCAB
from .errors import ApiError
from .formparser import BoundedFormParser
from .jobs import JobManager
from .jobs_api import job_manager

TEXT_FIELD_LABEL = "the text field"  # how the pasted text is named in messages and metadata
MAX_KEYS_SHOWN = 5  # query-string keys named in the refusal: enough to recognise them
MAX_MIN_FREQUENCY = 1 << 40  # any count a corpus within the upload limit can reach
# errno of a write that failed for want of room: no space, over quota, over the size limit
STORAGE_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}

bp = Blueprint("train", __name__)


class UploadRequest(Flask.request_class):  # type: ignore[misc, valid-type]
    """Streams uploaded files straight to disk, into the folder the train view chose.

    Werkzeug would spool them to anonymous temp files; writing them where the job will read
    them means a 200 MB corpus is never held in memory and never copied. The other fields go
    through formparser.BoundedFormParser: bounded one by one, strictly UTF-8.
    """

    def make_form_data_parser(self) -> BoundedFormParser:
        cfg = current_app.config
        return BoundedFormParser(
            self._get_file_stream,
            max_content_length=self.max_content_length,
            max_form_parts=cfg["MAX_FORM_PARTS"],
            max_text_bytes=cfg["MAX_TEXT_BYTES"],
            max_field_bytes=cfg["MAX_FIELD_BYTES"],
            max_file_bytes={forms.BASE_FILE_FIELD: cfg["MAX_BASE_FILE_BYTES"]},
            cls=self.parameter_storage_class,
        )

    def _get_file_stream(
        self,
        total_content_length: int | None,
        content_type: str | None,
        filename: str | None = None,
        content_length: int | None = None,
    ) -> IO[bytes]:
        upload_dir = self.environ.get("bpe.upload_dir")
        if upload_dir is None:
            return super()._get_file_stream(total_content_length, content_type, filename, content_length)
        f = tempfile.NamedTemporaryFile(dir=upload_dir, prefix="upload-", suffix=".txt", delete=False)
        self.environ.setdefault("bpe.uploads", []).append(f)
        return f


FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")  # what the form parser reads


@bp.post("/api/train")
def train_submit() -> tuple[Response, int]:
    if request.mimetype not in FORM_TYPES:  # else its fields would be missing: "vocab_size is required"
        raise ApiError(
            415,
            f"POST /api/train takes a form, not {request.mimetype or 'a body without Content-Type'}: "
            "send the fields as multipart/form-data (files and fields) or "
            "application/x-www-form-urlencoded (e.g. curl -F vocab_size=4096 -F corpus=@file.txt)",
        )
    _refuse_query_string()
    jobs = job_manager()
    with jobs.reserve():  # a place in the queue (or 429) before reading a possibly huge body
        return _submit_in(jobs)


def _refuse_query_string() -> None:
    """The form is read from the body alone: `curl 'URL?name=mine' -F corpus=@f` trained under
    a generated name without a word (and vocab_size in the URL was "vocab_size is required")."""
    if request.args:
        keys = ", ".join(repr(k[:40]) for k in list(request.args)[:MAX_KEYS_SHOWN])
        raise ApiError(
            400,
            f"POST /api/train reads its fields from the form body, not the URL's query string ({keys}): "
            "send them as form fields (curl -F name=mine -F vocab_size=4096 ...) and POST to /api/train",
        )


def _submit_in(jobs: JobManager) -> tuple[Response, int]:
    """The body read into a new job folder and checked, the job queued; a refusal removes the folder."""
    try:
        job_dir = jobs.new_job_dir()
    except OSError as e:
        raise _storage_error(e) from None
    request.environ["bpe.upload_dir"] = str(job_dir)
    try:
        return _submit(jobs, job_dir, current_app.config)
    except BaseException as e:
        for f in request.environ.get("bpe.uploads", []):
            with contextlib.suppress(OSError):  # its last write may have failed (a full disk)
                f.close()
        shutil.rmtree(job_dir, ignore_errors=True)
        if isinstance(e, OSError) and not isinstance(e, ConnectionError):  # the server's disk
            raise _storage_error(e) from None
        raise


def _storage_error(e: OSError) -> ApiError:
    """A job folder that cannot be made or written (a full disk, a read-only data folder): it
    was a 500 "internal error, please report it", which it is not."""
    if e.errno in STORAGE_FULL:
        return ApiError(
            507,
            f"the server could not store the upload: {e.strerror}; free space on the disk of its data "
            "folder (or start it with --data-dir on another disk), then send it again",
        )
    return ApiError(
        503,
        f"the server could not write into its data folder: {e.strerror}; check that the folder given "
        "by --data-dir exists and is writable, then send it again",
    )


def _submit(jobs: JobManager, job_dir: Path, cfg: dict[str, Any]) -> tuple[Response, int]:
    files = request.files.getlist("corpus")  # parses the body: uploads stream into job_dir
    base_files = request.files.getlist(forms.BASE_FILE_FIELD)
    unexpected = [k for k in request.files if k not in ("corpus", forms.BASE_FILE_FIELD)]
    if unexpected:
        raise ApiError(
            400,
            f"unexpected file field {unexpected[0][:40]!r}; send corpus files in the field 'corpus' "
            f"and the files of a base tokenizer in {forms.BASE_FILE_FIELD!r}",
        )
    form = request.form
    forms.check_fields(form)
    base = forms.resolve_base(form, cfg["DATA_DIR"], uploaded=bool(base_files))
    if base is None and not base_files:
        vocab_size = forms.form_int(form, "vocab_size", default=None, lo=MIN_TRAIN_VOCAB, hi=cfg["MAX_VOCAB"])
        add = None
        pattern, pattern_label = forms.resolve_pattern(form)
        special = forms.parse_special_tokens(form.get("special_tokens", ""), cfg["MAX_SPECIAL_TOKENS"])
    else:
        add = forms.form_int(form, "add", default=None, lo=1, hi=cfg["MAX_VOCAB"])
        vocab_size, pattern, pattern_label, special = None, None, None, []
    tie_break = forms.tie_break(form)
    min_frequency = forms.form_int(
        form, "min_frequency", default=DEFAULT_MIN_FREQUENCY, lo=1, hi=MAX_MIN_FREQUENCY
    )
    uploaded = forms.store_base_upload(base_files, job_dir / "base", add) if base_files else None
    if uploaded is not None:
        base = uploaded.name
    corpus = _corpus(files, form.get("text", ""), job_dir, cfg["MAX_FILES"])
    total = sum(forms.check_utf8(Path(path), label) for path, label in corpus)
    if total == 0:
        raise ApiError(400, "empty corpus: the uploaded files and text are all empty")

    raw_name = form.get("name", "").strip()
    first_label = corpus[0][1] if corpus[0][1] != TEXT_FIELD_LABEL else None

    def auto_name(taken: set[str]) -> str:
        if base is None:
            return forms.auto_name(first_label, vocab_size, taken)
        return forms.extension_name(base, add, taken)

    job = jobs.submit(
        job_dir=job_dir,
        name=forms.check_name(raw_name) if raw_name else None,
        auto_name=auto_name,
        params={
            "vocab_size": vocab_size,
            "base": base,
            "base_stem": uploaded.path if uploaded else _copy_base(jobs, base, add, cfg["DATA_DIR"], job_dir),
            "base_files": uploaded.files if uploaded else None,
            "add": add,
            "pattern": pattern,
            "pattern_label": pattern_label,
            "tie_break": tie_break,
            "special_tokens": special,
            "min_frequency": min_frequency,
            "workers": cfg["TRAIN_WORKERS"],
        },
        corpus=corpus,
        corpus_bytes=total,
    )
    response = jsonify(job=job.id, name=job.name, state=job.state, url=f"/api/jobs/{job.id}")
    response.headers["Location"] = f"/api/jobs/{job.id}"
    return response, 202


def _copy_base(jobs: JobManager, base: str | None, add: int, data_dir: Path, job_dir: Path) -> str | None:
    """A trained base's two files copied into the job's folder and loaded once to check them:
    the job extends exactly what was there at submit, even if the tokenizer is deleted or
    replaced while the job waits. -> the copy's stem, or None for a reference encoding (the
    job loads it by name)."""
    if base is None or base in list_encodings():
        return None
    stem = job_dir / "base" / base
    stem.parent.mkdir()
    with jobs.lock:  # no DELETE or install of this name between the check and the copies
        pair = forms.stored_pair(data_dir, base)
        if pair is None:
            raise ApiError(400, f"the base tokenizer {base!r} was deleted meanwhile")
        for src in pair:
            shutil.copyfile(src, stem.parent / src.name)
    forms.check_copied_base(stem, base, add)
    return str(stem)


def _corpus(files: list, text: str, job_dir: Path, max_files: int) -> list[tuple[str, str]]:
    """The uploaded files and the pasted text as (path, label shown to the user), in order."""
    corpus: list[tuple[str, str]] = []
    for storage in files:
        storage.close()  # flushes: the job reads the file by its path
    for i, storage in enumerate(files):
        path = Path(storage.stream.name)
        if not storage.filename and path.stat().st_size == 0:
            continue  # a file input left empty
        if len(corpus) >= max_files:
            raise ApiError(400, f"too many corpus files: at most {max_files}")
        corpus.append((str(path), forms.display_filename(storage.filename, i)))
    if text:
        text_path = job_dir / "text.txt"
        with open(text_path, "w", encoding="utf-8", errors="surrogatepass", newline="") as f:
            f.write(text)
        corpus.append((str(text_path), TEXT_FIELD_LABEL))
    if not corpus:
        raise ApiError(400, "empty corpus: upload one or more files in 'corpus' or paste text in 'text'")
    return corpus
