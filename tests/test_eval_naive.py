"""The naive windowed baseline: windows, BM25 and the fused roll-up to notes (no database)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from conftest import make_config

from kb.eval.naive import BM25, NaiveIndex, windows


def test_windows_overlap_and_end_at_the_note_end() -> None:
    body = " ".join(f"w{i}" for i in range(610))
    ws = windows("A.md", body)
    assert [len(w.text.split()) - 1 for w in ws] == [250, 250, 210]  # starts 0, 200, 400; path prepended
    assert ws[1].text.split()[1] == "w200" and ws[-1].text.endswith("w609")
    assert [w.text for w in windows("B.md", "short note")] == ["B.md\nshort note"]


def test_bm25_matches_the_formula() -> None:
    bm = BM25(["apple banana", "apple apple cherry kiwi", "durian"])
    s = bm.scores("apple")
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    avg = (2 + 4 + 1) / 3
    assert math.isclose(s[0], idf * 1 * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 2 / avg)))
    assert math.isclose(s[1], idf * 2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 4 / avg)))
    assert s[2] == 0 and list(bm.scores("the of")) == [0, 0, 0]  # stop words only


class Axis:
    """Vectors on two axes: 'fuel' texts point one way, everything else the other."""

    model_name, dimensions, identity = "axis", 2, "axis"

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0] if "fuel" in text.lower() else [0.0, 1.0]


def test_notes_rank_by_their_best_window(tmp_path: Path) -> None:
    filler = " ".join(f"filler{i}" for i in range(600))
    (tmp_path / "Long.md").write_text(f"{filler} the fuel cards decision was made {filler}")
    (tmp_path / "Other.md").write_text("nothing relevant here at all")
    naive = NaiveIndex(make_config(tmp_path), Axis())  # type: ignore[arg-type]
    hits = naive.search("fuel cards decision", 5)
    assert [h.path for h in hits] == ["Long.md", "Other.md"]
    assert "fuel cards decision" in hits[0].windows[0].text and len(hits[0].windows) >= 2
    assert hits == naive.search("fuel cards decision", 5)
