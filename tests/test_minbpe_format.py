"""minbpe's `.model`: load, export byte-identical, and ids as karpathy/minbpe computes them.

The reader here is written from minbpe's own load() (merges -> vocab bytes) and encode (merge
the adjacent pair of lowest merge index), independently of our loader, and compared on real text.
"""

from __future__ import annotations

import pytest
import regex

from tests.helpers import corpus_text
from tokenizer import Tokenizer
from tokenizer.cli import main
from tokenizer.formats import minbpe_text
from tokenizer.loading import from_texts, load_any, load_file
from tokenizer.reference import merge
from tokenizer.train import train


def minbpe_load(path):
    """minbpe's Tokenizer.load, line by line."""
    merges, special, idx = {}, {}, 256
    with open(path, encoding="utf-8") as f:
        assert f.readline().strip() == "minbpe v1"
        pattern = f.readline().strip()
        for _ in range(int(f.readline().strip())):
            token, token_id = f.readline().strip().split()
            special[token] = int(token_id)
        for line in f:
            a, b = map(int, line.split())
            merges[(a, b)] = idx
            idx += 1
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), i in merges.items():
        vocab[i] = vocab[a] + vocab[b]
    return pattern, special, merges, vocab


def minbpe_encode(text, pattern, merges):
    """minbpe's RegexTokenizer.encode_ordinary (BasicTokenizer when the pattern is empty)."""
    ids = []
    for chunk in regex.findall(pattern, text) if pattern else [text]:
        part = list(chunk.encode("utf-8"))
        while len(part) >= 2:
            pair = min(zip(part, part[1:]), key=lambda p: merges.get(p, float("inf")))  # noqa: B905
            if pair not in merges:
                break
            merged, i, out = merges[pair], 0, []
            while i < len(part):
                if i < len(part) - 1 and (part[i], part[i + 1]) == pair:
                    out.append(merged)
                    i += 2
                else:
                    out.append(part[i])
                    i += 1
            part = out
        ids.extend(part)
    return ids


@pytest.mark.parametrize("pattern", ["gpt4", "none"])
def test_model_file_gives_minbpe_ids_and_round_trips_byte_identical(pattern, tmp_path):
    training = corpus_text("taylorswift.txt")
    tok = train(training, 256 + 300, pattern=pattern, special_tokens=["<|endoftext|>", "<|fim|>"])
    tok.save(tmp_path / "t")
    assert main(["export", "--format", "minbpe", str(tmp_path / "t"), "-o", str(tmp_path / "t.model")]) == 0
    data = (tmp_path / "t.model").read_bytes()
    regex_text, special, merges, vocab = minbpe_load(tmp_path / "t.model")
    assert special == {"<|endoftext|>": 556, "<|fim|>": 557}
    ours = load_file(tmp_path / "t.model")
    assert load_any(str(tmp_path / "t.model")).mergeable_ranks == ours.mergeable_ranks
    assert {i: ours.decode_single_token_bytes(i) for i in vocab} == vocab
    for name in ["tinyshakespeare.txt", "code_python.txt", "pg_multilingual.txt"]:
        text = corpus_text(name, 30_000)
        assert ours.encode_ordinary(text) == minbpe_encode(text, regex_text, merges), name
    (tmp_path / "again.model").write_text(minbpe_text(ours), encoding="utf-8")
    assert (tmp_path / "again.model").read_bytes() == data
    out = tmp_path / "via-cli.model"
    assert main(["export", "--format", "minbpe", str(tmp_path / "t.model"), "-o", str(out)]) == 0
    assert out.read_bytes() == data


def test_a_hand_written_minbpe_file(tmp_path):
    text = "minbpe v1\n\n1\n<|end|> 259\n104 105\n256 33\n32 256\n"  # BasicTokenizer: empty pattern
    (tmp_path / "m.model").write_text(text)
    tok = load_file(tmp_path / "m.model")
    assert tok.pattern == "none" and tok.special_tokens == {"<|end|>": 259}
    assert tok.encode("hi! hi<|end|>", allowed_special="all") == [257, 258, 259]
    assert minbpe_text(tok) == text
    assert main(["encode", "--tokenizer", str(tmp_path / "m.model"), "hi!"]) == 0


def test_a_byte_order_mark_is_named_with_the_fix(tmp_path, capsys):
    """An editor's byte-order mark made line 1 "got '\\ufeffminbpe v1'; not a minbpe .model": true
    (minbpe's load refuses it too) but it hid the cause. The error now names it and the fix."""
    (tmp_path / "m.model").write_text("\ufeffminbpe v1\n\n0\n104 105\n", encoding="utf-8")
    assert main(["encode", "--tokenizer", str(tmp_path / "m.model"), "hi"]) == 2
    err = capsys.readouterr().err
    assert "m.model:1: the file starts with a byte-order mark" in err and "save it without one" in err
    assert err.count("\n") == 1


def test_tokenizer_load_reads_a_model_file(tmp_path):
    (tmp_path / "m.model").write_text("minbpe v1\n[a-z!]+|[^a-z!]\n1\n<|end|> 258\n104 105\n256 33\n")
    tok, same = Tokenizer.load(tmp_path / "m.model"), load_file(tmp_path / "m.model")
    assert (tok.name, tok.pattern, tok.merges) == ("m", "[a-z!]+|[^a-z!]", [(104, 105), (256, 33)])
    assert (tok.mergeable_ranks, tok.special_tokens) == (same.mergeable_ranks, same.special_tokens)
    assert tok.encode("hi! hi<|end|>", allowed_special="all") == [257, 32, 256, 258]
    assert minbpe_text(tok) == (tmp_path / "m.model").read_text()


def test_what_minbpe_cannot_hold_is_refused(tmp_path):
    with pytest.raises(ValueError, match="bytes as ids 0..255"):
        minbpe_text(load_any("cl100k_base"))
    tok = Tokenizer.from_merges([(104, 105)], "gpt4", {"<a b>": 300})
    with pytest.raises(ValueError, match="whitespace"):
        minbpe_text(tok)


def test_merges_of_very_long_tokens_are_recovered_in_n_log_n():
    """A bare rank table with tokens of 2, 4, ... 2**16 'a's: re-running BPE on each token with a
    rescan after every merge is quadratic in its length, and export -f minbpe of a tokenizer
    trained on a run of one letter (tokens of 8 MB) never finished."""
    import time

    from tokenizer.formats import recover_merges

    doubling = [(97, 97)] + [(256 + i, 256 + i) for i in range(15)]
    ranks = Tokenizer.from_merges(doubling).mergeable_ranks
    started = time.perf_counter()
    assert recover_merges(ranks) == doubling
    assert time.perf_counter() - started < 5.0


def test_line_breaks_are_minbpes_universal_newlines(tmp_path):
    """minbpe's load opens the file in text mode, where \\r, \\r\\n and \\n all end a line; ours
    split at \\n only, so a .model saved with \\r line ends (or a merge line ended by a lone \\r)
    was refused: "m.model:1: expected 'minbpe v1', got 'minbpe v1\\r[a-z!]+...'". Both now load
    with minbpe's merges and ids, from a file and from the page's text."""
    lines = ["minbpe v1", "[a-z!]+|[^a-z!]", "1", "<|end|> 259", "104 105", "256 33", "32 256"]
    for name, text in {
        "cr": "\r".join(lines) + "\r",
        "mixed": "\r\n".join(lines[:5]) + "\r" + "\n".join(lines[5:]) + "\n",
    }.items():
        path = tmp_path / f"{name}.model"
        path.write_bytes(text.encode("utf-8"))
        pattern, special, merges, _ = minbpe_load(path)
        for tok in (load_file(path), from_texts(None, text, None, f"{name}.model")):
            assert (tok.pattern, tok.special_tokens) == (pattern, special), name
            assert tok.merges == list(merges), name
            assert tok.encode_ordinary("hi! hi there") == minbpe_encode("hi! hi there", pattern, merges)


def test_a_repeated_merge_is_shown_escaped(tmp_path):
    """'32<form feed>32' repeats '32 32' (minbpe's split() breaks at the form feed too); the
    message printed the line raw, so the terminal showed "the merge '3232' repeats line 4"."""
    (tmp_path / "m.model").write_text("minbpe v1\n\n0\n32 32\n32\x0c32\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"m\.model:5: the merge '32\\x0c32' repeats line 4"):
        load_file(tmp_path / "m.model")


@pytest.mark.parametrize(
    "merges, line, why",
    [
        # "abcd" made as 'abc d', where the merges before it join 'ab cd': minbpe gives [ab, cd]
        ("99 100\n97 98\n257 99\n258 100\n", 7, "joins 257 256 into it"),
        # "aaa" made as 'a aa', where BPE joins 'aa a': minbpe gives [aa, a], tiktoken's rule [aaa]
        ("97 97\n97 256\n", 5, "joins 256 97 into it"),
        # "abcd" made as 'ab cd', where 'bc' goes first and nothing joins the three pieces left
        ("98 99\n97 98\n99 100\n257 258\n", 7, "stop at 3 pieces"),
    ],
)
def test_a_hand_made_merge_that_minbpe_encodes_otherwise_is_refused(merges, line, why, tmp_path, capsys):
    """minbpe's encoder merges the listed pair of lowest id, ours any two tokens whose bytes are a
    token (and a chunk that is a token whole): a hand-made .model listing another pair than
    the one BPE joins loaded, and gave other ids than minbpe's ("abcd": minbpe [257, 256], ours
    [259]) without a word. It is now refused, naming the file, the line and the pair BPE makes."""
    path = tmp_path / "m.model"
    path.write_text("minbpe v1\n\n0\n" + merges, encoding="utf-8")
    _, _, listed, vocab = minbpe_load(path)
    text = vocab[max(vocab)].decode()
    ranks = {token: i for i, token in sorted(vocab.items(), reverse=True)}
    assert minbpe_encode(text, "", listed) != Tokenizer(ranks, "none").encode_ordinary(text)
    with pytest.raises(ValueError, match=rf"m\.model:{line}: merge .* makes id {max(vocab)} .*{why}"):
        load_file(path)
    assert main(["encode", "--tokenizer", str(path), text]) == 2
    assert "minbpe's training never writes such a merge" in capsys.readouterr().err


def test_every_merge_minbpes_training_writes_loads(tmp_path):
    """The check above refuses no file minbpe's own loop writes: train with it (written out here,
    ties to the first pair), save as minbpe saves, load, and compare ids with minbpe's encoder."""
    import random

    rng = random.Random(7)
    for trial in range(200):
        alphabet = rng.choice(["ab", "abc", "ab c", "aab c"])
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 60)))
        words = [list(w.encode()) for w in (regex.findall(r"\S+|\s+", text) if trial % 2 else [text])]
        merges: dict[tuple[int, int], int] = {}
        for new_id in range(256, 256 + rng.randint(1, 20)):
            stats: dict[tuple[int, int], int] = {}
            for ids in words:
                for pair in zip(ids, ids[1:]):  # noqa: B905
                    stats[pair] = stats.get(pair, 0) + 1
            if not stats:
                break
            pair = max(stats, key=stats.get)
            merges[pair] = new_id
            words = [merge(ids, pair, new_id) for ids in words]
        pattern = r"\S+|\s+" if trial % 2 else ""
        path = tmp_path / "t.model"
        path.write_text(
            f"minbpe v1\n{pattern}\n0\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8"
        )
        ours = load_file(path)
        for _ in range(10):
            sample = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
            assert ours.encode_ordinary(sample) == minbpe_encode(sample, pattern, merges), (text, sample)
