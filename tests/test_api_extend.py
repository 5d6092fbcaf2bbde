"""POST /api/train with a `base`: extension on the server gives exactly tokenizer.extend's ids.

The base is a reference encoding or a tokenizer trained on this server, by name and never by
path; an extension takes `add` (new merges) instead of vocab_size, and the base's pattern and
special tokens, so the fields of training from bytes are refused with it (and `add` without a
base). Every refused request leaves nothing behind and queues no job.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA
from tests.server_helpers import GOOD, LiveServer, corpus_file, leftovers, post_train, save_tokenizer
from tokenizer import Tokenizer, extend, get_encoding
from tokenizer.formats import dump_tiktoken, minbpe_text, write_tiktoken
from tokenizer.hf_export import export_hf, to_hf_json
from tokenizer.preparation import Preparation
from tokenizer.train import train

SMALL = CORPORA / "taylorswift.txt"
PROBES = [
    "We are never ever getting back together <|endoftext|> like, ever",
    SMALL.read_text(encoding="utf-8")[5000:9000],
    "Naïve café, 東京タワー, Привет 🙂👍🏽 and numbers 1234567\n",
]
FINAL = ("done", "failed", "cancelled")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("extend-data")


@pytest.fixture(scope="module")
def server(data_dir) -> Iterator[LiveServer]:
    live = LiveServer(data_dir, MAX_RUNNING_JOBS=1, MAX_QUEUED_JOBS=4)
    yield live
    live.close()


def download(server: LiveServer, name: str, tmp_path: Path) -> Tokenizer:
    for ext in ("tiktoken", "json"):
        resp = server.get(f"/api/tokenizers/{name}.{ext}")
        assert resp.status_code == 200, resp.text
        (tmp_path / f"{name}.{ext}").write_bytes(resp.content)
    return Tokenizer.load(tmp_path / name)


def run(server: LiveServer, files: list[Path] = (), **fields) -> dict:
    resp = server.train(files, **fields)
    assert resp.status_code == 202, resp.text
    final = server.wait(resp.json()["job"], lambda s: s["state"] in FINAL, timeout=120)
    assert final["state"] == "done", final
    return final


@pytest.mark.parametrize("base, tie_break", [("gpt2", "first"), ("cl100k_base", "lexical")])
def test_extend_reference_encoding_like_the_library(server, tmp_path, base, tie_break):
    name = f"{base}-swift"
    final = run(server, [SMALL], base=base, add="40", tie_break=tie_break, name=name)
    want = extend(get_encoding(base), [SMALL], 40, tie_break=tie_break)
    got = download(server, name, tmp_path)

    assert got.mergeable_ranks == want.mergeable_ranks  # the base's ids kept, the new ones equal
    assert got.special_tokens == get_encoding(base).special_tokens
    for text in PROBES:
        assert got.encode(text, allowed_special="all") == want.encode(text, allowed_special="all")
    assert got.encode(PROBES[1]) != get_encoding(base).encode(PROBES[1])  # it learned something

    # The job and the listing show the base and what the extension bought.
    ext = want.metadata["extension"]
    assert final["params"]["base"] == base and final["params"]["add"] == 40
    assert final["params"]["vocab_size"] is None and "base_stem" not in final["params"]
    assert final["result"]["vocab_size"] == want.n_vocab
    summary = final["result"]["extension"]
    assert summary["base"] == base and summary["added"] == 40
    assert summary["first_new_id"] == get_encoding(base).n_vocab
    assert (summary["corpus_tokens_before"], summary["corpus_tokens_after"]) == (
        ext["corpus_tokens_before"],
        ext["corpus_tokens_after"],
    )
    assert summary["corpus_tokens_after"] < summary["corpus_tokens_before"]
    assert final["warnings"] == []
    entry = server.get(f"/api/tokenizers/{name}").json()
    assert entry["extension"] == summary
    assert "merges" not in entry["metadata"]["extension"]  # the download has them, not the listing
    assert entry["pattern"] == get_encoding(base).pattern


def test_extend_a_trained_tokenizer_and_stop_early_with_a_warning(server, data_dir, tmp_path):
    base = save_tokenizer(data_dir, "small-base")
    final = run(server, text=GOOD.decode(), base="small-base", add="1000", name="small-more")
    want = extend(base, [GOOD.decode()], 1000)
    got = download(server, "small-more", tmp_path)
    assert got.mergeable_ranks == want.mergeable_ranks
    assert got.special_tokens == base.special_tokens
    added = want.metadata["extension"]["added"]
    assert 0 < added < 1000
    assert final["warnings"] == [f"stopped after {added} of 1000 new merges: {want.metadata['stop_reason']}"]
    # An automatic name says what it is.
    final = run(server, text="aa bb aa bb cc aa", base="small-base", add="3")
    assert final["name"] == "small-base-plus3"


@pytest.mark.parametrize(
    "fields, fragment",
    [
        ({"base": "nonexistent", "add": "5"}, "unknown base 'nonexistent'"),
        ({"base": "../data/taken", "add": "5"}, "paths are not accepted"),
        ({"base": "/etc/passwd", "add": "5"}, "unknown base '/etc/passwd'"),
        ({"base": "taken.json", "add": "5"}, "unknown base"),
        ({"base": "half", "add": "5"}, "unknown base 'half'"),  # a broken entry: .json only
        ({"base": "GPT2", "add": "5"}, "unknown base 'GPT2'"),
        ({"base": "gpt2"}, "add is required"),
        ({"base": "gpt2", "add": "0"}, "add 0 is out of range"),
        ({"base": "gpt2", "add": "1e3"}, "add must be an integer"),
        ({"base": "gpt2", "add": "5", "vocab_size": "300"}, "'vocab_size' cannot be combined with a base"),
        ({"base": "gpt2", "add": "5", "pattern": "gpt4"}, "the base's split pattern is used"),
        ({"base": "taken", "add": "5", "regex": r"\w+"}, "'regex' cannot be combined with a base"),
        ({"base": "gpt2", "add": "5", "special_tokens": "<a>"}, "special tokens are kept"),
        ({"add": "5", "vocab_size": "300"}, "'add' needs a 'base' to extend"),
        ({"base": "gpt2", "add": "5", "tie_break": "random"}, "unknown tie_break"),
    ],
)
def test_bad_extension_requests(client, server_dirs, fields, fragment):
    _, data = server_dirs
    save_tokenizer(data, "taken")
    (data / "half.json").write_text("{}", encoding="utf-8")
    before = sorted(leftovers(data))
    resp = post_train(client, corpus=corpus_file(GOOD), **fields)
    assert resp.status_code == 400, resp.get_json()
    assert fragment in resp.get_json()["error"]
    assert sorted(leftovers(data)) == before  # uploads (and any copy of the base) removed
    assert client.get("/api/jobs").get_json()["jobs"] == []


@pytest.mark.parametrize(
    "damage, fragment",
    [
        (lambda data: (data / "dmg.tiktoken").write_bytes(b""), "dmg.tiktoken: no tokens in file"),
        (lambda data: (data / "dmg.json").write_text('{"merges": [[999999, 1]]}'), "dmg.json: merges[0]"),
        (
            lambda data: Tokenizer.from_merges(
                [(104, 101)], "gpt4", name="dmg", preparation=Preparation(normalizers=("NFC",))
            ).save(data / "dmg"),
            "base 'dmg': dmg cannot be extended exactly",
        ),
    ],
)
def test_a_stored_base_the_job_could_not_extend_is_refused_at_submit(client, server_dirs, damage, fragment):
    """A trained base damaged since (or one extend cannot reproduce) got a 202 and a job that
    failed when it loaded the copy; it is checked at submit, like an uploaded base."""
    _, data = server_dirs
    save_tokenizer(data, "dmg")
    damage(data)
    before = sorted(leftovers(data))
    resp = post_train(client, corpus=corpus_file(GOOD), base="dmg", add="5")
    assert resp.status_code == 400, resp.get_json()
    assert fragment in resp.get_json()["error"]
    assert str(data) not in resp.get_json()["error"]
    assert sorted(leftovers(data)) == before  # the copy of the base went with the job's folder
    assert client.get("/api/jobs").get_json()["jobs"] == []


def test_symlinked_base_is_refused(client, server_dirs, tmp_path):
    """A pair that points out of the data folder is not a tokenizer trained here."""
    _, data = server_dirs
    save_tokenizer(tmp_path, "outside")
    data.mkdir(exist_ok=True)
    for ext in ("json", "tiktoken"):
        (data / f"linked.{ext}").symlink_to(tmp_path / f"outside.{ext}")
    resp = post_train(client, corpus=corpus_file(GOOD), base="linked", add="5")
    assert resp.status_code == 400
    assert "unknown base 'linked'" in resp.get_json()["error"]


# ----- a base the user loaded into the page: its file(s) uploaded in `base_file` -------------

EXTEND_CORPUS = CORPORA / "code_python.txt"  # what the uploaded bases learn their new merges from


@pytest.fixture(scope="module")
def swift_base() -> Tokenizer:
    """A real trained base (300 ids, GPT-2's split, one special token), not a reference encoding."""
    return train(
        SMALL.read_text(encoding="utf-8")[:20_000],
        300,
        pattern="gpt2",
        special_tokens=["<|end|>"],
        name="swift300",
    )


def base_files(kind: str, tok: Tokenizer, folder: Path) -> list[Path]:
    """`tok` written as the page's user would load it: our pair, a bare .tiktoken (it splits with
    GPT-4's pattern, as everywhere a .tiktoken comes alone), a HF tokenizer.json, a minbpe .model."""
    folder.mkdir()
    if kind == "pair":
        tok.save(folder / "swift300")
        return [folder / "swift300.tiktoken", folder / "swift300.json"]
    if kind == "tiktoken":
        write_tiktoken(folder / "bare.tiktoken", tok.mergeable_ranks)
        return [folder / "bare.tiktoken"]
    if kind == "hf":
        export_hf(tok, folder / "tokenizer.json")
        return [folder / "tokenizer.json"]
    (folder / "swift.model").write_text(minbpe_text(tok), encoding="utf-8")
    return [folder / "swift.model"]


def post_with_base(server: LiveServer, uploads: list[Path], corpus: Path, **fields):
    handles = [("corpus", (corpus.name, corpus.read_bytes(), "text/plain"))]
    handles += [("base_file", (p.name, p.read_bytes(), "application/octet-stream")) for p in uploads]
    return server.requests.post(
        server.base + "/api/train", files=handles, data=fields, headers=server.origin, timeout=60
    )


@pytest.mark.parametrize("kind", ["pair", "tiktoken", "hf", "model"])
def test_extend_an_uploaded_base_like_the_library(server, tmp_path, swift_base, kind):
    uploads = base_files(kind, swift_base, tmp_path / "upload")
    oracle_base = Tokenizer.load(uploads[-1])  # the library's reader on the same files
    name = f"up-{kind}"
    resp = post_with_base(server, uploads, EXTEND_CORPUS, add="30", name=name)
    assert resp.status_code == 202, resp.text
    final = server.wait(resp.json()["job"], lambda s: s["state"] in FINAL, timeout=120)
    assert final["state"] == "done", final
    want = extend(oracle_base, [EXTEND_CORPUS], 30)
    got = download(server, name, tmp_path)

    assert got.mergeable_ranks == want.mergeable_ranks
    assert got.special_tokens == oracle_base.special_tokens
    assert got.pattern_regex == oracle_base.pattern_regex
    for text in [*PROBES, EXTEND_CORPUS.read_text(encoding="utf-8")[:3000]]:
        assert got.encode(text, allowed_special="all") == want.encode(text, allowed_special="all")
    assert want.metadata["extension"]["added"] == 30

    # What it extended: the tokenizer's name (as the library and the page name it) and the files.
    labels = [p.name for p in uploads]
    assert final["params"]["base"] == oracle_base.name and final["params"]["base_files"] == labels
    assert "base_stem" not in final["params"]
    summary = final["result"]["extension"]
    assert summary["base"] == oracle_base.name and summary["base_files"] == labels
    assert got.metadata["extension"]["base_files"] == labels
    assert server.get(f"/api/tokenizers/{name}").json()["extension"] == summary
    assert not list((server.data_dir / ".jobs").iterdir())  # the upload went with the job's folder


def test_uploaded_base_gets_an_automatic_name(server, tmp_path, swift_base):
    uploads = base_files("hf", swift_base, tmp_path / "upload")
    resp = post_with_base(server, uploads, SMALL, add="3")
    assert resp.status_code == 202, resp.text
    final = server.wait(resp.json()["job"], lambda s: s["state"] in FINAL, timeout=120)
    assert final["state"] == "done" and final["name"] == "tokenizer-plus3", final


def hf_json(*, model: dict | None = None, byte_level: dict | None = None, **changes) -> bytes:
    """A tiny byte-level tokenizer.json with `changes` at the top level, `model` options and
    options of its ByteLevel pre-tokenizer step."""
    obj = to_hf_json(Tokenizer.from_merges([(104, 101)], "gpt2", [], name="tiny"))
    obj["model"].update(model or {})
    obj["pre_tokenizer"]["pretokenizers"][-1].update(byte_level or {})
    return json.dumps({**obj, **changes}).encode()


TINY_PAIR = Tokenizer.from_merges([(104, 101)], "gpt4", ["<|end|>"], name="tiny")
# the 256 bytes and one merge at the largest id a file holds: no new id fits after it
TOP_ID_TIKTOKEN = dump_tiktoken({bytes([b]): b for b in range(256)} | {b"he": 2**31 - 1}).encode()


@pytest.mark.parametrize(
    "uploads, fields, fragment",
    [
        (
            [("x.tiktoken", b"hello world\n")],
            {},
            "base_file x.tiktoken is not a tokenizer the library loads: x.tiktoken:1",
        ),
        ([("x.json", b"{not json")], {}, "base_file x.json is not a tokenizer the library loads: x.json"),
        ([("x.json", b"\xff\xfe{}")], {}, "x.json"),
        ([("x.json", b"[" * 5_000)], {}, "nested"),
        (
            [("tokenizer.json", hf_json(normalizer={"type": "Lowercase"}))],
            {},
            "normalizer",
        ),
        ([("tokenizer.json", hf_json(model={"type": "Unigram"}))], {}, "model 'Unigram'"),
        # loaded by the library, but tokenizer.extend counts raw chunks: refused before any job
        ([("tokenizer.json", hf_json(normalizer={"type": "NFC"}))], {}, "normalizes the text (NFC)"),
        ([("tokenizer.json", hf_json(byte_level={"add_prefix_space": True}))], {}, "add_prefix_space"),
        (  # StarCoder's shape: Digits, then ByteLevel's own split
            [
                (
                    "tokenizer.json",
                    hf_json(
                        pre_tokenizer={
                            "type": "Sequence",
                            "pretokenizers": [
                                {"type": "Digits", "individual_digits": True},
                                {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
                            ],
                        }
                    ),
                )
            ],
            {},
            "splits it with 1 more pattern(s) before its own",
        ),
        ([("corpus.txt", b"abc")], {}, "base_file 'corpus.txt': expected a tokenizer file"),
        ([("x", b"abc")], {}, "expected a tokenizer file"),
        ([("x.json", b"")], {}, "base_file 'x.json' is empty"),
        ([("a.json", b"{}"), ("b.json", b"{}")], {}, "two .json files"),
        ([("a.tiktoken", b"aGU= 256\n"), ("b.json", b"{}")], {}, "have different names"),
        ([("a.model", b"minbpe v1\n\n0\n"), ("a.json", b"{}")], {}, "send it alone"),
        (
            [("x.model", b"minbpe v1\n\n0\n")],
            {"base": "gpt2"},
            "send one base: 'base' (a name) or 'base_file'",
        ),
        (
            [("x.model", b"minbpe v1\n\n0\n")],
            {"vocab_size": "300"},
            "'vocab_size' cannot be combined with a base",
        ),
        ([("x.model", b"minbpe v1\n\n0\n")], {"special_tokens": "<a>"}, "special tokens are kept"),
        ([("x.model", b"minbpe v1\n\n0\n")], {"add": ""}, "add is required"),
        (  # was queued, then a job that failed
            [("top.tiktoken", TOP_ID_TIKTOKEN)],
            {},
            "base_file top.tiktoken: top's ids go up to 2,147,483,647; 5 new ids would pass",
        ),
    ],
)
def test_bad_base_uploads(client, server_dirs, uploads, fields, fragment):
    _, data = server_dirs
    data.mkdir(exist_ok=True)
    before = sorted(leftovers(data))
    files = [(io.BytesIO(content), filename) for filename, content in uploads]
    resp = post_train(client, corpus=corpus_file(GOOD), base_file=files, **{"add": "5", **fields})
    assert resp.status_code == 400, resp.get_json()
    assert fragment in resp.get_json()["error"]
    assert sorted(leftovers(data)) == before  # the uploads and the job folder removed
    assert client.get("/api/jobs").get_json()["jobs"] == []


def test_a_good_tiny_pair_is_accepted(client, server_dirs, tmp_path):
    """The refusals above are about the files: the same request with a good pair is queued."""
    TINY_PAIR.save(tmp_path / "tiny")
    files = [(io.BytesIO((tmp_path / f"tiny{s}").read_bytes()), f"tiny{s}") for s in (".tiktoken", ".json")]
    resp = post_train(client, corpus=corpus_file(GOOD), base_file=files, add="5")
    assert resp.status_code == 202, resp.get_json()
    assert resp.get_json()["name"] == "tiny-plus5"


def test_too_big_base_file_is_refused_while_it_streams(server_dirs):
    """MAX_BASE_FILE_BYTES bounds each base file as it arrives: 413 naming the file and field."""
    from playground import create_app

    web, data = server_dirs
    app = create_app({"WEB_DIR": web, "DATA_DIR": data, "MAX_BASE_FILE_BYTES": 4096})
    try:
        client = app.test_client()
        big = (io.BytesIO(b"aGU= 256\n" * 1000), "big.tiktoken")
        resp = post_train(client, corpus=corpus_file(GOOD), base_file=[big], add="5")
        assert resp.status_code == 413, resp.get_json()
        error = resp.get_json()["error"]
        assert "'big.tiktoken' in the field 'base_file' is over 4 KB" in error
        assert leftovers(data) == [] and client.get("/api/jobs").get_json()["jobs"] == []
        # A corpus file of that size is fine: the bound is the base file's only.
        resp = post_train(client, corpus=corpus_file(GOOD * 10), base="gpt2", add="5")
        assert resp.status_code == 202, resp.get_json()
    finally:
        app.extensions["bpe_jobs"].shutdown()


BASE_NAMES = st.builds(
    lambda stem, suffix: stem + suffix,
    st.text(max_size=30),
    st.sampled_from(["", ".json", ".tiktoken", ".model", ".JSON", ".txt", ".json.model"]),
)
BASE_CONTENTS = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(
        [b"{}", b'{"merges": [[104, 101]]}', b'{"model": {}}', b"aGU= 256\n", b"minbpe v1\n\n0\n"]
    ),
    st.integers(0, 3000).map(lambda n: b"[" * n + b"]" * n),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uploads=st.lists(st.tuples(BASE_NAMES, BASE_CONTENTS), min_size=1, max_size=3))
def test_fuzzed_base_uploads_never_give_a_500_nor_leave_anything(client, server_dirs, uploads):
    """Random names (folders, dots, any character) and bytes in base_file: a 4xx or a queued
    job, never a 500; a refusal leaves no file and no job behind."""
    _, data = server_dirs
    data.mkdir(exist_ok=True)
    before = sorted(leftovers(data))
    files = [(io.BytesIO(content), filename) for filename, content in uploads]
    resp = post_train(client, corpus=corpus_file(GOOD), base_file=files, add="5")
    assert resp.status_code in (202, 400, 413), resp.get_json()
    assert isinstance(resp.get_json()["job" if resp.status_code == 202 else "error"], str)
    if resp.status_code != 202:
        assert sorted(leftovers(data)) == before
        return
    job = f"/api/jobs/{resp.get_json()['job']}"
    deadline = time.monotonic() + 60
    while client.get(job).get_json()["state"] not in FINAL:  # the next example starts clean
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_too_big_base_file_over_a_real_socket(tmp_path):
    """The 413 reaches a real client that is still sending (5 MB against a 64 KB bound)."""
    live = LiveServer(tmp_path / "data", MAX_BASE_FILE_BYTES=64 * 1024)
    try:
        files = [
            ("corpus", ("c.txt", GOOD, "text/plain")),
            ("base_file", ("big.tiktoken", b"aGU= 256\n" * 600_000, "application/octet-stream")),
        ]
        resp = live.requests.post(
            live.base + "/api/train", files=files, data={"add": "5"}, headers=live.origin, timeout=60
        )
        assert resp.status_code == 413
        assert "'big.tiktoken' in the field 'base_file' is over 64 KB" in resp.json()["error"]
        assert live.files() == []
    finally:
        live.close()
