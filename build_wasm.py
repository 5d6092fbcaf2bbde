"""Build `web/dist/`, the folder the playground page is served from (statically or by server.py).

What goes in, and why:

- `pyodide/`: the Pyodide core copied from `node_modules/pyodide`, only the five files needed to
  boot (every file from the same npm version: `loadPyodide` checks that the JS and the wasm agree).
  No other Pyodide package is shipped; the page never calls `loadPackage`.
- `wheels/bpe_playground-VERSION+HASH-py3-none-any.whl`: our `tokenizer` package without its
  command line (NOT_IN_WHEEL) as a pure-Python wheel, zipped here with `zipfile` (no pip, no build
  isolation, no network). The content hash in the local version makes the file name change
  whenever the code does, so no cache ever serves a stale wheel. The zip is deterministic (fixed
  timestamps, sorted entries).
- `encodings/NAME.HASH.bpe`: the reference encodings as the compact binary blobs of
  `tokenizer.encodings.pack_encoding`, which Pyodide loads several times faster than the npm JSON
  or `.tiktoken` text (no base64 decoding of 100k+ strings; see README for the numbers).
- the page itself (`web/*.html|js|css`), copied.
- `vendor/chart.umd.min.js`: Chart.js (npm `chart.js`), the plots of the Stats view, as its
  self-contained UMD build (the ESM build imports `@kurkle/color` by a bare name, which a
  browser cannot resolve without an import map). It needs no eval and no inline <style>, so
  the server's CSP (script-src 'self') allows it. The page imports it only when a plot is drawn.
- `pyodide/snapshot-HASH.bin`: a Pyodide memory snapshot taken in Node (scripts/pyodide_snapshot.mjs)
  right after importing the worker's Python side (`tokenizer.web.bridge`) and compiling the split
  patterns. Booting from it skips CPython's start-up and our imports (in Node: 0.7 s instead of
  5.5 s); the worker falls back to a normal boot if it is missing or fails. Made only when node is
  available; keyed by the wheel, the Pyodide version and the script.
- `manifest.json`: versions, every file with its size and sha256, which file is the wheel and which
  file holds each encoding, and the library's names the page offers (patterns, tie-breaks, the
  smallest vocabulary), so the page never keeps its own copy of them. The page reads it first.

Idempotent and fast when nothing changed: files are rewritten only when their bytes differ, big
copies are skipped when size and mtime match, and stale hashed files are removed.
Run: `python build_wasm.py [--out DIR]`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import sys
import time
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
WEB = ROOT / "web"
DEFAULT_OUT = WEB / "dist"
PACKAGE = ROOT / "tokenizer"
PYODIDE_DIR = ROOT / "node_modules" / "pyodide"
CHART_JS = ROOT / "node_modules" / "chart.js" / "dist" / "chart.umd.min.js"
SNAPSHOT_SCRIPT = ROOT / "scripts" / "pyodide_snapshot.mjs"
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
WEB_SUFFIXES = (".html", ".js", ".mjs", ".css", ".svg", ".ico", ".png", ".webmanifest")
DIST_NAME = "bpe_playground"
# Parts of the package the page never runs, so never downloads: the encoding blobs (shipped
# separately, hashed), and the command line (argparse, progress bars; `python -m tokenizer`).
NOT_IN_WHEEL = ("_data", "cli", "__main__.py")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write atomically, only if the bytes differ (keeps mtimes, and so HTTP caches, stable)."""
    if path.exists() and path.stat().st_size == len(data) and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return True


def copy_if_changed(src: Path, dst: Path) -> bool:
    """Copy with mtime; skip when size and mtime already match (the 9.6 MB wasm, every run)."""
    s = src.stat()
    if dst.exists():
        d = dst.stat()
        if d.st_size == s.st_size and int(d.st_mtime) == int(s.st_mtime):
            return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.tmp")
    shutil.copyfile(src, tmp)
    os.chmod(tmp, 0o644)
    os.utime(tmp, (s.st_atime, s.st_mtime))
    os.replace(tmp, dst)
    return True


def project_version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


def package_files() -> list[tuple[str, bytes]]:
    """(archive path, bytes) of the tokenizer package, sorted; no NOT_IN_WHEEL parts, no caches."""
    files = []
    for path in sorted(PACKAGE.rglob("*")):
        rel = path.relative_to(ROOT)
        if not path.is_file() or "__pycache__" in rel.parts or rel.parts[1] in NOT_IN_WHEEL:
            continue
        if path.suffix in (".pyc", ".pyo") or path.name.startswith("."):
            continue
        files.append((rel.as_posix(), path.read_bytes()))
    return files


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def build_wheel(version: str) -> tuple[str, bytes]:
    """Our package as a pure-Python wheel: (file name, bytes). Same input, same bytes."""
    files = package_files()
    content = hashlib.sha256()
    for name, data in files:
        content.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    full_version = f"{version}+{content.hexdigest()[:12]}"
    dist_info = f"{DIST_NAME}-{full_version}.dist-info"
    metadata = (
        "Metadata-Version: 2.1\n"
        "Name: bpe-playground\n"
        f"Version: {full_version}\n"
        "Summary: Byte-level BPE tokenizers (the playground's browser build)\n"
        "Requires-Python: >=3.11\n"
    ).encode()
    wheel = b"Wheel-Version: 1.0\nGenerator: build_wasm.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries = [*files, (f"{dist_info}/METADATA", metadata), (f"{dist_info}/WHEEL", wheel)]
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compresslevel=9)
    return f"{DIST_NAME}-{full_version}-py3-none-any.whl", buf.getvalue()


def build_snapshot(out_dir: Path, wheel_path: Path, key: str) -> str | None:
    """`pyodide/snapshot-KEY.bin` in out_dir (made with node), or None when node is missing or fails."""
    name = f"snapshot-{key}.bin"
    target = out_dir / "pyodide" / name
    if target.exists():
        return f"pyodide/{name}"
    node = shutil.which("node")
    if not node or os.environ.get("BPE_NO_SNAPSHOT"):
        return None
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        tmp_out = Path(tmp) / name
        try:
            subprocess.run(
                [node, str(SNAPSHOT_SCRIPT), str(PYODIDE_DIR / "pyodide.mjs"), str(wheel_path), str(tmp_out)],
                check=True,
                capture_output=True,
                timeout=300,
            )
        except (subprocess.SubprocessError, OSError) as e:
            err = getattr(e, "stderr", b"") or b""
            print(f"build_wasm: no Pyodide snapshot ({type(e).__name__}: {err[-300:]!r})", file=sys.stderr)
            return None
        shutil.move(tmp_out, target)
    os.chmod(target, 0o644)
    return f"pyodide/{name}"


def pyodide_version() -> str:
    return json.loads((PYODIDE_DIR / "package.json").read_text())["version"]


def page_names() -> dict:
    """The names the page offers in its selects, read from the library that defines each once."""
    from tokenizer.patterns import DEFAULT_PATTERN, PATTERN_NAMES
    from tokenizer.train import DEFAULT_MIN_FREQUENCY, DEFAULT_TIE_BREAK, MIN_VOCAB, TIE_BREAKS
    from tokenizer.web.learn import DEFAULT_MERGES, MAX_MERGES

    return {
        "patterns": list(PATTERN_NAMES),
        "default_pattern": DEFAULT_PATTERN,
        "tie_breaks": list(TIE_BREAKS),
        "default_tie_break": DEFAULT_TIE_BREAK,
        "min_vocab": MIN_VOCAB,
        "default_min_frequency": DEFAULT_MIN_FREQUENCY,
        "learn_merges": {"default": DEFAULT_MERGES, "max": MAX_MERGES},
    }


def _remove_stale(folder: Path, keep: set[str], pattern: str) -> None:
    if folder.is_dir():
        for path in folder.glob(pattern):
            if path.name not in keep:
                path.unlink()


def build(out: Path = DEFAULT_OUT, verbose: bool = False) -> dict:
    """Bring `out` up to date; returns the manifest."""
    start = time.perf_counter()
    changed: list[str] = []
    out.mkdir(parents=True, exist_ok=True)

    # 1. Pyodide core.
    if not PYODIDE_DIR.is_dir():
        sys.exit("build_wasm.py: node_modules/pyodide is missing; run `npm ci` first")
    for name in PYODIDE_FILES:
        if copy_if_changed(PYODIDE_DIR / name, out / "pyodide" / name):
            changed.append(f"pyodide/{name}")

    # 1b. The chart library (see the module docstring).
    if not CHART_JS.is_file():
        sys.exit("build_wasm.py: node_modules/chart.js is missing; run `npm ci` first")
    if copy_if_changed(CHART_JS, out / "vendor" / CHART_JS.name):
        changed.append(f"vendor/{CHART_JS.name}")

    # 2. Our wheel.
    version = project_version()
    wheel_name, wheel_bytes = build_wheel(version)
    if write_if_changed(out / "wheels" / wheel_name, wheel_bytes):
        changed.append(f"wheels/{wheel_name}")
    _remove_stale(out / "wheels", {wheel_name}, "*.whl")

    # 2b. A memory snapshot with our package imported (depends on the wheel and Pyodide).
    snap_key = hashlib.sha256(
        f"{wheel_name}|{pyodide_version()}|{sha256_file(SNAPSHOT_SCRIPT)}".encode()
    ).hexdigest()[:12]
    snapshot = build_snapshot(out, out / "wheels" / wheel_name, snap_key)
    _remove_stale(out / "pyodide", {Path(snapshot).name} if snapshot else set(), "snapshot-*.bin")

    # 3. Reference encodings as blobs (tokenizer/_data is the cache build_blobs keeps up to date).
    sys.path.insert(0, str(ROOT))
    from tokenizer.encodings import build_blobs

    encodings = {}
    for enc_name, blob_path in build_blobs().items():
        data = blob_path.read_bytes()
        digest = sha256_bytes(data)
        file_name = f"{enc_name}.{digest[:12]}.bpe"
        if write_if_changed(out / "encodings" / file_name, data):
            changed.append(f"encodings/{file_name}")
        encodings[enc_name] = f"encodings/{file_name}"
    _remove_stale(out / "encodings", {Path(p).name for p in encodings.values()}, "*.bpe")

    # 4. The page.
    web_files = sorted(p for p in WEB.iterdir() if p.is_file() and p.suffix in WEB_SUFFIXES)
    for path in web_files:
        if write_if_changed(out / path.name, path.read_bytes()):
            changed.append(path.name)
    web_names = {p.name for p in web_files}
    for path in out.iterdir():  # a page file deleted from web/ must not linger in dist
        if path.is_file() and path.suffix in WEB_SUFFIXES and path.name not in web_names:
            path.unlink()

    # 5. Manifest.
    files = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if (
            path.is_file()
            and rel != "manifest.json"
            and not path.name.startswith(".")
            and rel.split("/")[0] != "bench"
        ):
            files[rel] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
    manifest = {
        "format": 1,
        "package": {"name": "bpe-playground", "version": version, "wheel_version": wheel_name.split("-")[1]},
        "pyodide": {"version": pyodide_version(), "index": "pyodide/"},
        "wheel": f"wheels/{wheel_name}",
        "snapshot": {"file": snapshot, "wheel": f"wheels/{wheel_name}"} if snapshot else None,
        "encodings": {
            name: {"file": path, "size": files[path]["size"], "sha256": files[path]["sha256"]}
            for name, path in encodings.items()
        },
        "default_encodings": ["cl100k_base", "o200k_base"],
        "names": page_names(),
        "modules": sorted(n for n in web_names if n.endswith((".js", ".mjs"))),
        "files": files,
    }
    if write_if_changed(out / "manifest.json", (json.dumps(manifest, indent=1) + "\n").encode()):
        changed.append("manifest.json")
    if verbose:
        took = (time.perf_counter() - start) * 1000
        what = ", ".join(changed) if changed else "nothing changed"
        rel_out = os.path.relpath(out)
        print(f"build_wasm: {rel_out}: {what} ({took:.0f} ms)")
    return manifest


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default web/dist)")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    return build(args.out, verbose=not args.quiet)


if __name__ == "__main__":
    main()
