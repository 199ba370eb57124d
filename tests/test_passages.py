"""Passages inside a chunk: bounded windows that cover the chunk, overlap, and are keyed by what is embedded."""

from __future__ import annotations

import random

from kb.passages import PASSAGE_TOKENS, STRIDE_TOKENS, embed_text, passage_hash, passages, windows
from kb.tokens import count_tokens, count_tokens_above, encoding


def test_a_short_chunk_is_one_passage_verbatim() -> None:
    text = "Line one.\n\n- a list item\n- another"
    assert windows(text) == [text]


def test_long_text_windows_are_bounded_overlapping_and_cover_every_word() -> None:
    words = [f"w{i}" for i in range(900)]
    ws = windows(" ".join(words))
    assert len(ws) > 5 and all(count_tokens(w) <= PASSAGE_TOKENS for w in ws)
    seen = [w.split() for w in ws]
    assert seen[0][0] == "w0" and seen[-1][-1] == "w899"
    assert sorted({x for s in seen for x in s}, key=lambda x: int(x[1:])) == words
    assert all(set(a) & set(b) for a, b in zip(seen, seen[1:]))  # consecutive windows overlap


def test_a_single_huge_word_still_makes_progress() -> None:
    ws = windows("x" * 5000 + " tail")
    assert ws[-1].endswith("tail") and len(ws) == 2


def test_ids_and_hashes() -> None:
    ps = passages("abc", "Notes/A.md", "A > Plan", "word " * 400)
    assert [p.id for p in ps] == [f"abc:{i}" for i in range(len(ps))] and all(p.chunk_id == "abc" for p in ps)
    assert embed_text("Notes/A.md", "A > Plan", "hi") == "Notes/A.md > Plan\nhi"
    assert embed_text("Notes/A.md", "A", "hi") == "Notes/A.md\nhi"
    assert passage_hash("Notes/A.md", "A", "hi") != passage_hash("Other/A.md", "A", "hi")  # a move re-embeds


def test_a_text_of_more_words_than_the_limit_is_not_encoded_and_surely_exceeds_it() -> None:
    """count_tokens_above skips the encoder only where every word being a token or more makes the answer sure."""
    from kb.tokens import count_tokens_above

    texts = [
        "word " * 40,
        "a, b. c; d! e? (f) [g] {h} - i",
        "中文 句子 没有 空格 但 有 几个 词",
        "x\n\n- y\n- z\n\n```\ncode\n```",
        "1 22 333 4444 55555 666666 😀 👍🏽 é ü",
        "\u3000".join(["wide"] * 30),
    ]
    for text in texts:
        assert count_tokens(text) >= len(text.split())  # the bound it rests on
        for limit in (3, len(text.split()) - 1, len(text.split()), count_tokens(text), count_tokens(text) + 5):
            exact = count_tokens(text)
            got = count_tokens_above(text, limit)
            assert got == (limit + 1 if len(text.split()) > limit else exact)
            assert (got > limit) == (exact > limit)
            assert count_tokens_above(text, limit, len(text.split())) == got  # a caller that split it already


def _walked(text: str, size: int, stride: int) -> list[str]:
    """The windows walked word by word (how they were first cut): the reference the bisection must match."""
    if count_tokens_above(text, size) <= size:
        return [text]
    words = text.split()
    costs = [len(encoding().encode_ordinary(" " + w)) for w in words]
    out, start = [], 0
    while start < len(words):
        end, used = start, 0
        while end < len(words) and (used + costs[end] <= size or end == start):
            used += costs[end]
            end += 1
        out.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        step, nxt = 0, start
        while nxt < end - 1 and step + costs[nxt] <= stride:
            step += costs[nxt]
            nxt += 1
        start = max(nxt, start + 1)
    return out


def test_windows_are_the_ones_a_word_by_word_walk_cuts() -> None:
    """Changed windows would change every passage id and hash, and so re-embed a whole vault."""
    rng = random.Random(7)
    vocab = [
        "a",
        "the",
        "Kenji's",
        "2026-09-30",
        "$2.3M",
        "antidisestablishmentarianism",
        "日本語のテキスト",
        "x" * 700,
    ]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 900))) for _ in range(300)]
    for size, stride in ((PASSAGE_TOKENS, STRIDE_TOKENS), (20, 5), (5, 5), (3, 1), (40, 39), (1, 1)):
        for text in texts:
            assert windows(text, size, stride) == _walked(text, size, stride), (size, stride, text[:60])
