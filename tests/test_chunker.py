"""Chunk sizes, breadcrumbs, overlap and stable ids."""

from __future__ import annotations

from pathlib import Path

from kb.chunker import OVERLAP_CHARS, SECTION_MAX, WHOLE_NOTE_MAX, chunk_note
from kb.tokens import count_tokens
from kb.vault import Note, parse_note, scan_vault


def note(tmp_path: Path, rel: str, text: str) -> Note:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return parse_note(next(f for f in scan_vault(tmp_path).notes if f.path == rel))


def para(seed: str, words: int) -> str:
    return " ".join(f"{seed}{i % 97} word{i % 13}." if i % 11 == 10 else f"{seed}{i % 97}" for i in range(words))


def long_note() -> str:
    return (
        "---\ndate: 2024-01-02\n---\n# Plan\nIntro line.\n\n## Small\nTiny section.\n\n"
        "## Big\n" + "\n\n".join(para("big", 300) for _ in range(6)) + "\n\n"
        "### 2024-05-01 Review\n" + para("rev", 400) + "\n\n## Last\n" + para("end", 500) + "\n"
    )


def test_short_note_stays_whole(tmp_path: Path) -> None:
    n = note(tmp_path, "a.md", "# Title\n" + para("w", 600))
    chunks = chunk_note(n)
    assert count_tokens(n.body) <= WHOLE_NOTE_MAX and len(chunks) == 1
    assert chunks[0].breadcrumb == "a" and chunks[0].text == n.body.strip()


def test_long_note_splits_at_headings_within_limits(tmp_path: Path) -> None:
    n = note(tmp_path, "Plan.md", long_note())
    chunks = chunk_note(n)
    assert len(chunks) > 3
    assert all(c.tokens <= SECTION_MAX for c in chunks)
    crumbs = [c.breadcrumb for c in chunks]
    assert crumbs[0] == "Plan > Big"  # the H1 repeats the title; the tiny intro and "Small" merged forward
    assert "Plan > Big" in crumbs and "Plan > Big > 2024-05-01 Review" in crumbs
    review = next(c for c in chunks if c.breadcrumb.endswith("Review"))
    assert review.date == "2024-05-01" and chunks[0].date == "2024-01-02"
    assert "Tiny section." in chunks[0].text


def test_overlap_carries_the_previous_tail(tmp_path: Path) -> None:
    chunks = chunk_note(note(tmp_path, "Plan.md", long_note()))
    for prev, nxt in zip(chunks, chunks[1:]):
        head = nxt.text.split("\n", 1)[0]
        assert 0 < len(head) <= OVERLAP_CHARS and prev.text.endswith(head)


def test_ids_are_stable_and_hashes_change_only_where_edited(tmp_path: Path) -> None:
    before = chunk_note(note(tmp_path, "Plan.md", long_note()))
    edited = long_note().replace("## Last\n", "## Last\nA new first line here.\n")
    after = chunk_note(note(tmp_path, "Plan.md", edited))
    assert [c.id for c in before] == [c.id for c in after]
    changed = {a.breadcrumb for a, b in zip(before, after) if a.hash != b.hash}
    assert changed == {"Plan > Last"}
    assert len({c.id for c in before}) == len(before)


def test_one_oversized_paragraph_splits_at_sentences(tmp_path: Path) -> None:
    text = "## One\n" + " ".join(f"Sentence number {i} talks about ledgers and invoices." for i in range(700))
    chunks = chunk_note(note(tmp_path, "x.md", text))
    assert len(chunks) >= 3 and all(c.tokens <= SECTION_MAX for c in chunks)
    assert all(c.text.rstrip().endswith(".") for c in chunks)
