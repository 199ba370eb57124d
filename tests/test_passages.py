"""Passages inside a chunk: bounded windows that cover the chunk, overlap, and are keyed by what is embedded."""

from __future__ import annotations

from kb.passages import PASSAGE_TOKENS, embed_text, passage_hash, passages, windows
from kb.tokens import count_tokens


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
