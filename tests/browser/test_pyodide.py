"""The encoder under Pyodide (Node + npm pyodide, the wasm Python the page's worker runs) gives
exactly CPython's ids, for all five reference encodings; and the worker's Python side
(tokenizer.web.bridge) answers there exactly as it does in CPython.

Why this matters: in the browser `regex` is not importable, so splitting goes through the
stdlib-`re` translation of the patterns, on Pyodide's Python version; any difference would
show the user different tokens than the library produces. One Node process serves every
request (booting Pyodide costs seconds); it runs the very wheel and blobs build_wasm.py made.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import CORPORA, ROOT, missing
from tokenizer import get_encoding, list_encodings
from tokenizer.encodings import build_blobs
from tokenizer.web import bridge

RUNNER = Path(__file__).with_name("pyodide_runner.mjs")
ENCODINGS = list_encodings()


class Runner:
    def __init__(self, dist: Path) -> None:
        node = shutil.which("node")
        if not node:
            missing("node is not installed")
        if not (ROOT / "node_modules" / "pyodide").is_dir():
            missing("node_modules/pyodide is missing (npm ci)")
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [node, str(RUNNER), str(dist)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        first = self._line(180)
        assert first.get("ready"), first
        self.boot_ms = first["boot_ms"]

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.put(line)
        self.lines.put("")

    def _line(self, timeout: float) -> dict:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"pyodide runner: no answer in {timeout} s") from None
        if not line:
            self.stderr.seek(0)
            tail = self.stderr.read()[-3000:].decode("utf-8", "replace")
            raise AssertionError(f"pyodide runner exited ({self.proc.poll()}):\n{tail}")
        return json.loads(line)

    def ask(self, op: str, timeout: float = 120, **kw) -> dict:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, "op": op, **kw}) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        reply = self._line(timeout)
        assert reply.get("id") == self.next_id, reply
        assert "error" not in reply, reply["error"]
        return reply

    def encode(self, encoding: str, texts: list[str]) -> list[list[int]]:
        return self.ask("encode", encoding=encoding, texts=texts)["ids"]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.stderr.close()


@pytest.fixture(scope="module")
def pyodide(web_dist):
    runner = Runner(web_dist)
    yield runner
    runner.close()


def corpus_samples() -> list[tuple[str, str]]:
    """Slices of real text: English prose, 40 scripts of the UDHR, emoji sequences, code, Chinese."""
    if not CORPORA.is_dir():
        missing(f"corpora not found at {CORPORA}")
    samples = []

    def read(name: str) -> str:
        return (CORPORA / name).read_text(encoding="utf-8")

    samples.append(("taylorswift", read("taylorswift.txt")[:30_000]))
    udhr = read("udhr_sample.txt")
    # One slice from each of ~60 languages: each part starts with a '##### UDHR' header.
    parts = udhr.split("##### UDHR ")[1:]
    for part in parts[:: max(1, len(parts) // 60)]:
        samples.append((part.split("\n", 1)[0][:40], "##### UDHR " + part[:2500]))
    emoji = read("emoji_sequences.txt")
    samples.append(("emoji_sequences", emoji[20_000:40_000]))
    samples.append(("emoji_cldr", read("emoji_cldr.txt")[::97][:20_000]))
    samples.append(("code_python", read("code_python.txt")[100_000:120_000]))
    samples.append(("code_js", read("code_js.txt")[:15_000]))
    multi = read("pg_multilingual.txt")
    zh = multi.find("呻吟語")
    samples.append(("pg_multilingual_zh", multi[zh : zh + 10_000]))
    samples.append(("pg_multilingual_fr", multi[len(multi) // 3 : len(multi) // 3 + 10_000]))
    return samples


def test_runs_the_stdlib_re_fallback(pyodide):
    """The Node run exercises what the browser does: no `regex`, Pyodide's own Python."""
    info = pyodide.ask("info")["info"]
    assert info["platform"] == "emscripten"
    assert info["has_regex"] is False


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_corpora_ids_equal_cpython(pyodide, encoding):
    samples = corpus_samples()
    texts = [t for _, t in samples]
    got = pyodide.encode(encoding, texts)
    tok = get_encoding(encoding)
    for (label, text), ids in zip(samples, got, strict=True):
        want = tok.encode_ordinary(text)
        if ids != want:
            first = next((i for i in range(min(len(ids), len(want))) if ids[i] != want[i]), None)
            pytest.fail(f"{encoding} on {label}: ids differ from CPython at token {first}")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_split_chunks_equal_cpython(pyodide, encoding):
    texts = [t for _, t in corpus_samples()[:20]]
    chunks = pyodide.ask("split", encoding=encoding, texts=texts)["chunks"]
    tok = get_encoding(encoding)
    assert chunks == [tok.split(t) for t in texts]


INTERESTING = (
    " \t\n\r\x0b\x0c\x85\xa0\u2000\u3000\u2028\x1c"  # spaces of every kind
    "aAzZéÉßſ'sStTdDmMlLvVrReE"  # letters, contraction pieces
    "0123456789٣४¾Ⅻ"  # digits of several scripts, No/Nl numbers
    ".,!?-_/()[]{}<>@#$%^&*+=~`|\\\"'"
    "東京日本語한국어ひらがなカタカナ"  # CJK, Hangul, kana
    "مرحباשלוםПриветΓειάसंस्कृत"  # RTL, Cyrillic, Greek, Devanagari with marks
    "\u0301\u0308\u200d\ufe0f"  # combining marks, ZWJ, VS16
    "🙂👩‍💻🇯🇵🏴󠁧󠁢󠁥󠁮󠁧󠁿🫠"  # emoji, ZWJ sequence, flag, tag sequence, newer emoji
)

texts = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=INTERESTING, max_size=120),
    st.lists(
        st.sampled_from(["don't", "DON'T", " 123456", "  ", "\n\n", " hello", "東京", "🙂🙂", "a'S"]),
        max_size=12,
    ).map("".join),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(texts, min_size=1, max_size=8))
def test_hypothesis_ids_equal_cpython(pyodide, batch):
    for encoding in ENCODINGS:
        got = pyodide.encode(encoding, batch)
        tok = get_encoding(encoding)
        assert got == [tok.encode_ordinary(t) for t in batch], encoding


def test_every_module_of_the_wheel_imports(pyodide, web_dist):
    """The wheel leaves the command line out (build_wasm.NOT_IN_WHEEL): nothing in it may need it."""
    manifest = json.loads((web_dist / "manifest.json").read_text())
    with zipfile.ZipFile(web_dist / manifest["wheel"]) as zf:
        paths = [n for n in zf.namelist() if n.startswith("tokenizer/") and n.endswith(".py")]
    modules = [p[: -len(".py")].replace("/", ".").removesuffix(".__init__") for p in paths]
    assert "tokenizer.web.bridge" in modules and not any(".cli" in m for m in modules), modules
    assert pyodide.ask("import", modules=modules)["imported"] == len(modules)


def plain(value):
    """A CPython bridge answer as the runner writes a Pyodide one: bytes as {hex}, tuples as lists."""
    if isinstance(value, bytes):
        return {"hex": value.hex()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


BRIDGE_TEXT = "Hello, DON'T stop 12345 東京 🙂 👩‍💻 naïve <|endoftext|>\n\n\tx"
BRIDGE_CALLS = [
    ("encode", ["cl100k_base", BRIDGE_TEXT]),
    ("encode", ["o200k_base", BRIDGE_TEXT]),
    ("split", ["gpt2", BRIDGE_TEXT]),
    ("decode", ["cl100k_base", [9906, 11, 1226, 100257, 20276]]),
    ("info", ["o200k_base"]),
    ("merge_tree", ["cl100k_base", 6625]),
    ("merge_list", ["gpt2", "ello", 3, 20]),
    ("learn", [json.dumps({"corpus": "low lower lowest " * 4, "pattern": "gpt4", "num_merges": 6})]),
    ("learn", [json.dumps({"corpus": "low lower lowest " * 4, "mode": "classic", "num_merges": 6})]),
]


@pytest.mark.parametrize(
    ("fn", "args"), BRIDGE_CALLS, ids=[f"{fn}-{args[0][:12]}" for fn, args in BRIDGE_CALLS]
)
def test_bridge_answers_equal_cpython(pyodide, fn, args):
    """What the worker gets from each op under Pyodide is what CPython's bridge answers (timings aside)."""
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        bridge.load_blob(name, build_blobs()[name].read_bytes())
    got = pyodide.ask("bridge", fn=fn, args=args)["result"]
    want = plain(getattr(bridge, fn)(*args))
    if fn == "encode":
        got, want = got[:3], want[:3]  # the last item is the time it took
    assert got == want


def test_incremental_edits_equal_cpython(pyodide):
    """encode_edit under Pyodide patches exactly as in CPython, and the patches add up to encode."""
    bridge.load_blob("o200k_base", build_blobs()["o200k_base"].read_bytes())
    texts = [BRIDGE_TEXT.replace("<|endoftext|>", "")]
    for where, cut, insert in [(0.5, 0, "X"), (0.9, 3, "\n\n   "), (0.2, 0, "'ll"), (0.95, 1, " ")]:
        i = int(where * len(texts[-1]))
        texts.append(texts[-1][:i] + insert + texts[-1][i + cut :])
    base_py = base_js = 0
    for text in texts:
        got = pyodide.ask("bridge", fn="encode_edit", args=["o200k_base", "pyodide-check", text, base_js])[
            "result"
        ]
        want = plain(bridge.encode_edit("o200k_base", "pyodide-check", text, base_py))
        base_js, base_py = got[3], want[3]
        assert got[:3] + got[4:7] == want[:3] + want[4:7]
    assert not got[2]  # the last edit was a patch, not a whole encode
