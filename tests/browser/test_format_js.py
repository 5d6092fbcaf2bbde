"""web/format.js's tryDecode (a token's text, or null when its bytes are not UTF-8 on their own),
run by Node against the fatal TextDecoder it stands for.

No browser needed: Node runs the very file the page ships.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.helpers import missing

RUNNER = Path(__file__).with_name("format_runner.mjs")


def test_try_decode_agrees_with_the_fatal_decoder_without_throwing():
    """tryDecode asked the fatal decoder and caught its TypeError: every partial-character token
    (a CJK or emoji text is mostly such tokens in cl100k_base) made and threw an exception, 195-207
    ms of a 300 K CJK / 1 MB emoji render's profile plus the garbage collection (52-115 ms) of the
    exceptions, on the page's thread. It now checks the bytes first and decodes only valid ones;
    its answers are the decoder's for every 1- and 2-byte sequence, 3- and 4-byte ones over every
    edge byte value, random ones and every character's own encoding."""
    node = shutil.which("node")
    if not node:
        missing("node is not installed")
    out = subprocess.run([node, str(RUNNER)], capture_output=True, text=True, check=True, timeout=300)
    result = json.loads(out.stdout)
    assert result["checked"] > 300_000
    assert result["wrong"] == [], f"tryDecode differs from the fatal decoder: {result['wrong']}"
    assert result["thrown"] == 0, f"tryDecode threw (and caught) {result['thrown']} decoder errors"
