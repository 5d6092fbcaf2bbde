"""build_wasm.py: web/dist holds what the manifest says, the wheel is a real, content-hashed wheel,
and a second build changes nothing (so `make test` / `make run` stay fast and caches stay warm)."""

from __future__ import annotations

import ast
import base64
import csv
import hashlib
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

import build_wasm
from tokenizer.encodings import encoding_from_bytes, get_encoding


def test_manifest_lists_every_file_with_size_and_hash(web_dist: Path):
    manifest = json.loads((web_dist / "manifest.json").read_text())
    on_disk = {
        p.relative_to(web_dist).as_posix()
        for p in web_dist.rglob("*")
        if p.is_file() and p.name != "manifest.json" and not p.name.startswith(".") and "bench" not in p.parts
    }
    assert set(manifest["files"]) == on_disk
    for rel, entry in manifest["files"].items():
        data = (web_dist / rel).read_bytes()
        assert entry["size"] == len(data), rel
        assert entry["sha256"] == hashlib.sha256(data).hexdigest(), rel
    assert manifest["wheel"] in manifest["files"]
    assert set(manifest["encodings"]) == {"gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"}
    for name in manifest["default_encodings"]:
        assert name in manifest["encodings"]
    for page_file in ("index.html", "app.js", "worker.js", "style.css"):
        assert page_file in manifest["files"]
    assert "worker.js" in manifest["modules"] and "app.js" in manifest["modules"]


def test_manifest_names_are_the_librarys(web_dist: Path):
    """The page fills its selects from manifest.names: the very tuples the library validates against."""
    from tokenizer import train
    from tokenizer.patterns import DEFAULT_PATTERN, PATTERN_NAMES
    from tokenizer.train import DEFAULT_MIN_FREQUENCY, DEFAULT_TIE_BREAK, MIN_VOCAB, TIE_BREAKS
    from tokenizer.web.learn import DEFAULT_MERGES, MAX_MERGES, parse_request

    names = json.loads((web_dist / "manifest.json").read_text())["names"]
    assert names["patterns"] == list(PATTERN_NAMES) and "none" in names["patterns"]
    assert names["tie_breaks"] == list(TIE_BREAKS)
    assert names["default_pattern"] == DEFAULT_PATTERN in names["patterns"]
    assert names["default_tie_break"] == DEFAULT_TIE_BREAK in names["tie_breaks"]
    assert names["default_min_frequency"] == DEFAULT_MIN_FREQUENCY
    assert names["learn_merges"] == {"default": DEFAULT_MERGES, "max": MAX_MERGES}
    # the defaults are the ones the library applies when a field is left out
    request = parse_request({"corpus": "ab ab"})
    assert (request.pattern, request.tie_break) == (names["default_pattern"], names["default_tie_break"])
    assert (request.num_merges, request.min_frequency) == (DEFAULT_MERGES, names["default_min_frequency"])
    assert names["min_vocab"] == MIN_VOCAB == 256  # the 256 bytes, no merge (as minbpe, rustbpe)
    train("ab ab", vocab_size=names["min_vocab"], pattern=names["patterns"][0])  # accepted
    with pytest.raises(ValueError):
        train("ab ab", vocab_size=names["min_vocab"] - 1)


def test_pyodide_files_are_the_npm_version(web_dist: Path):
    manifest = json.loads((web_dist / "manifest.json").read_text())
    npm = build_wasm.PYODIDE_DIR
    assert manifest["pyodide"]["version"] == json.loads((npm / "package.json").read_text())["version"]
    for name in build_wasm.PYODIDE_FILES:
        assert (web_dist / "pyodide" / name).read_bytes() == (npm / name).read_bytes(), name


def test_encoding_blobs_hold_the_reference_ranks(web_dist: Path):
    manifest = json.loads((web_dist / "manifest.json").read_text())
    for name in ("gpt2", "cl100k_base"):
        entry = manifest["encodings"][name]
        data = (web_dist / entry["file"]).read_bytes()
        assert entry["sha256"][:12] in entry["file"], "the file name carries its hash"
        tok = encoding_from_bytes(data)
        ref = get_encoding(name)
        assert tok.mergeable_ranks == ref.mergeable_ranks
        assert tok.special_tokens == ref.special_tokens
        assert tok.pattern == ref.pattern


def test_wheel_is_valid_and_content_hashed(web_dist: Path):
    manifest = json.loads((web_dist / "manifest.json").read_text())
    wheel = web_dist / manifest["wheel"]
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert "tokenizer/__init__.py" in names and "tokenizer/core.py" in names
        assert not any("_data" in n or "__pycache__" in n or n.endswith(".pyc") for n in names)
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
        version = manifest["package"]["wheel_version"]
        assert dist_info == f"bpe_playground-{version}.dist-info"
        assert wheel.name == f"bpe_playground-{version}-py3-none-any.whl"
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        assert f"Version: {version}" in metadata and "Name: bpe-playground" in metadata
        assert "Root-Is-Purelib: true" in zf.read(f"{dist_info}/WHEEL").decode()
        for row in csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())):
            path, digest, size = row
            if path.endswith("RECORD"):
                continue
            data = zf.read(path)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == want and int(size) == len(data), path
        # The wheel holds exactly the package as it is in the working tree.
        for n in names:
            if n.startswith("tokenizer/"):
                assert zf.read(n) == (build_wasm.ROOT / n).read_bytes(), n


def test_wheel_leaves_out_the_command_line_and_nothing_in_it_needs_it(web_dist: Path):
    """The page never runs `python -m tokenizer`: tokenizer/cli (argparse, progress bars) is not
    downloaded, so no module in the wheel may import it, not even inside a function."""
    manifest = json.loads((web_dist / "manifest.json").read_text())
    with zipfile.ZipFile(web_dist / manifest["wheel"]) as zf:
        names = zf.namelist()
        sources = {n: zf.read(n).decode() for n in names if n.endswith(".py")}
    assert "tokenizer/web/bridge.py" in names and "tokenizer/web/learn.py" in names
    assert not any(n.startswith(("tokenizer/cli/", "tokenizer/__main__")) for n in names)
    for path, source in sources.items():
        package = path.rsplit("/", 1)[0].split("/")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                targets = [".".join([*base, *(node.module or "").split(".")]).strip(".")]
                targets += [f"{targets[0]}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                assert not target.startswith(("tokenizer.cli", "tokenizer.__main__")), (
                    f"{path} imports {target}"
                )
            assert "argparse" not in targets, f"{path} imports argparse"


def test_wheel_name_changes_with_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "repo"
    shutil.copytree(
        build_wasm.PACKAGE, root / "tokenizer", ignore=shutil.ignore_patterns("_data", "__pycache__")
    )
    monkeypatch.setattr(build_wasm, "ROOT", root)
    monkeypatch.setattr(build_wasm, "PACKAGE", root / "tokenizer")
    name1, data1 = build_wasm.build_wheel("0.1.0")
    name1b, data1b = build_wasm.build_wheel("0.1.0")
    assert (name1, data1) == (name1b, data1b), "same input, same bytes"
    (root / "tokenizer" / "core.py").write_text(
        (root / "tokenizer" / "core.py").read_text() + "\n# changed\n"
    )
    name2, _ = build_wasm.build_wheel("0.1.0")
    assert name1 != name2


def test_second_build_changes_nothing(web_dist: Path, capsys: pytest.CaptureFixture[str]):
    build_wasm.build(web_dist)  # up to date now, even if the package changed since the session began
    before = {p: p.stat().st_mtime_ns for p in web_dist.rglob("*") if p.is_file()}
    build_wasm.build(web_dist, verbose=True)
    assert "nothing changed" in capsys.readouterr().out
    after = {p: p.stat().st_mtime_ns for p in web_dist.rglob("*") if p.is_file()}
    assert before == after


WEB = Path(__file__).resolve().parents[2] / "web"
STATIC_IMPORT = re.compile(
    r'^\s*(?:import|export)\b[^;"]*?\bfrom\s+"\./([\w.-]+\.m?js)"|^\s*import\s+"\./([\w.-]+\.m?js)"', re.M
)


def static_imports(module: str) -> set[str]:
    """The modules `module` imports statically (not `import(...)`), all levels down."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for match in STATIC_IMPORT.finditer((WEB / todo.pop()).read_text(encoding="utf-8")):
            name = match.group(1) or match.group(2)
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def test_the_page_preloads_its_whole_static_import_graph():
    """A module missing from index.html's modulepreload links is found only when the module
    importing it has arrived: a waterfall that delayed textbox.js by ~100 ms and with it the
    worker's start (worker-client.js starts it when the graph has run)."""
    html = (WEB / "index.html").read_text(encoding="utf-8")
    preloaded = set(re.findall(r'<link rel="modulepreload" href="([\w.-]+\.m?js)">', html))
    assert preloaded == static_imports("app.js")
