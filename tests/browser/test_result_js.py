"""web/result.js (a panel's whole result, patched in place at every keystroke), run by Node:
random patch sequences give exactly what splicing plain lists gives, and a large whole result
sent with room to grow (the worker's withRoom) takes its first patch in its own buffers.

No browser needed: the module has no DOM; Node runs the very file the page ships.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from itertools import accumulate
from pathlib import Path

from tests.helpers import missing

RUNNER = Path(__file__).with_name("result_runner.mjs")


def tokens(rng: random.Random, n: int) -> tuple[list[int], list[int], list[int]]:
    """n random tokens: ids, byte lengths (1-4) and their bytes."""
    lens = [rng.randint(1, 4) for _ in range(n)]
    return [rng.randrange(200_000) for _ in range(n)], lens, [rng.randrange(256) for _ in range(sum(lens))]


def run(cases: list[dict]) -> list[dict]:
    node = shutil.which("node")
    if not node:
        missing("node is not installed")
    out = subprocess.run(
        [node, str(RUNNER)], input=json.dumps(cases), capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout)


def random_case(rng: random.Random, roomy: bool) -> tuple[dict, dict]:
    """A whole result and patches for Node, and what plain lists give for them."""
    ids, lens, data = tokens(rng, rng.randint(0, 60))
    case = {"ids": ids, "lens": lens, "bytes": data, "roomy": roomy, "patches": []}
    ids, lens = list(ids), list(lens)
    for _ in range(rng.randint(1, 12)):
        start = rng.randint(0, len(ids))
        removed = rng.randint(0, min(len(ids) - start, 8))
        if rng.random() < 0.1:  # now and then the whole result at once
            start, removed = 0, len(ids)
        new_ids, new_lens, new_bytes = tokens(rng, rng.randint(0, 40 if rng.random() < 0.2 else 6))
        starts = [0, *accumulate(lens)]
        data = data[: starts[start]] + new_bytes + data[starts[start + removed] :]
        ids[start : start + removed] = new_ids
        lens[start : start + removed] = new_lens
        case["patches"].append(
            {"start": start, "removed": removed, "ids": new_ids, "lens": new_lens, "bytes": new_bytes}
        )
    expected = {"ids": ids, "lens": lens, "bytes": data, "starts": [0, *accumulate(lens)]}
    return case, expected


def test_random_patch_sequences_equal_spliced_lists():
    rng = random.Random(16)
    made = [random_case(rng, roomy=i % 2 == 0) for i in range(300)]
    got = run([case for case, _ in made])
    for (case, expected), result in zip(made, got, strict=True):
        assert {k: result[k] for k in expected} == expected, case


def test_a_roomy_whole_result_takes_its_first_keystroke_in_place():
    rng = random.Random(5)
    ids, lens, data = tokens(rng, 5_000)
    typed = {"start": 2_500, "removed": 1, "ids": [7, 8], "lens": [1, 2], "bytes": [97, 98, 99]}
    cases = [
        {"ids": ids, "lens": lens, "bytes": data, "roomy": roomy, "patches": [typed]}
        for roomy in (True, False)
    ]
    roomy, exact = run(cases)
    assert roomy["inPlace"] is True
    assert exact["inPlace"] is False  # exactly sized arrays must be copied to grow: the case withRoom avoids
    assert roomy["ids"] == exact["ids"] == ids[:2_500] + [7, 8] + ids[2_501:]
    assert roomy["starts"] == exact["starts"] == [0, *accumulate(roomy["lens"])]
