"""The typed search results write the `kb search --json` contract: keys, order and rounding pinned."""

from __future__ import annotations

import json

from kb.search.lines import Line, link_line
from kb.search.results import (
    ChunkResult,
    FlatResult,
    GraphReport,
    NoteResult,
    QuestionReading,
    Route,
    SearchResult,
)

CHUNK = ChunkResult("c1", "Q3 > Revenue", "2026-09-30", "ARR 1.2M", 12, 0.0312345678, 1, None, text_rank=2)
NOTE = NoteResult(
    1,
    "Reviews/Q3.md",
    "Q3",
    "2026-09-30",
    0.0312345678,
    1,
    None,
    (CHUNK,),
    promoted="states it",
    updated="2026-10-02",
    text_rank=2,
)


def test_hybrid_result_json_is_pinned() -> None:
    result = SearchResult("arr?", "hybrid", {"folder": None}, 20, "onnx:x", {"search_ms": 1.23456}, [NOTE])
    assert json.dumps(result.to_json()) == json.dumps(
        {
            "query": "arr?",
            "mode": "hybrid",
            "filters": {"folder": None},
            "k": 20,
            "embedder": "onnx:x",
            "timing": {"search_ms": 1.23},
            "results": [
                {
                    "rank": 1,
                    "path": "Reviews/Q3.md",
                    "title": "Q3",
                    "date": "2026-09-30",
                    "score": 0.031235,
                    "keyword_rank": 1,
                    "vector_rank": None,
                    "text_rank": 2,
                    "chunks": [
                        {
                            "id": "c1",
                            "breadcrumb": "Q3 > Revenue",
                            "date": "2026-09-30",
                            "text": "ARR 1.2M",
                            "tokens": 12,
                            "score": 0.031235,
                            "keyword_rank": 1,
                            "vector_rank": None,
                            "text_rank": 2,
                        }
                    ],
                    "updated": "2026-10-02",
                    "promoted": "states it",
                }
            ],
        }
    )


def test_graph_parts_follow_the_results_in_order() -> None:
    line = Line("claim", "ARR = 1.2M (CURRENT)", "Reviews/Q3.md", "2026-09-30")
    graph = GraphReport([{"name": "Acme", "key": "acme", "named": True}], ["USES"], [line], [], 2, 1, 9, {"k": 20})
    reading = QuestionReading("en", "value", ["read 'Q3' as ..."], None, False, True, ("intent value",), True)
    result = SearchResult("q", "graph", {}, 20, None, {}, [], reading, graph, Route("graph", "a value", ["r"]))
    out = result.to_json()
    assert list(out) == [
        "query",
        "mode",
        "filters",
        "k",
        "embedder",
        "timing",
        "results",
        "question",
        "graph",
        "router",
    ]
    assert list(out["question"]) == ["language", "intent", "now", "readings", "rules", "as_of", "current_only"]
    assert out["graph"]["lines"][0]["text"] == "ARR = 1.2M (CURRENT)" and out["graph"]["dropped_by_trim"] == 2
    plain = QuestionReading("de", "other", [], "2025-01-01", True)
    assert plain.to_json() == {
        "language": "de",
        "intent": "other",
        "readings": [],
        "as_of": "2025-01-01",
        "current_only": True,
    }
    assert result.lines == [line] and SearchResult("q", "hybrid", {}, 5, None, {}, []).lines == []


def test_flat_chunks_carry_their_note_path_first() -> None:
    flat = FlatResult("q", {"keyword_ms": 0.004}, [ChunkResult("c1", None, None, "t", 1, 0.5, None, 2, "a.md")])
    assert flat.to_json()["mode"] == "flat" and flat.to_json()["timing"] == {"keyword_ms": 0.0}
    assert list(flat.to_json()["chunks"][0])[:2] == ["path", "id"]
    assert "path" not in CHUNK.to_json() and "demoted" not in NOTE.to_json()


def test_a_link_line_as_of_a_day_says_since_when_if_also_seen_later() -> None:
    """With --as-of, a link's count and last date may come from notes written after that day: then it says since
    when it was seen, which was known that day."""
    row = {
        "type": "SUPPLIES",
        "outgoing": True,
        "other": "Millhouse Flour",
        "count": 5,
        "first_seen": "2023-02-01",
        "last_seen": "2025-09-30",
        "evidence": ["Millhouse delivers the rye flour"],
        "entry_name": "Corner Bakery",
    }
    cite = ("Suppliers/Millhouse.md", "2023-02-01")
    assert "(5x, last 2025-09-30)" in link_line(row, cite=cite).text
    then = link_line({**row, "as_of": "2024-01-01"}, cite=cite).text
    assert "(since 2023-02-01)" in then and "2025" not in then
    assert "(5x, last 2025-09-30)" in link_line({**row, "as_of": "2026-01-01"}, cite=cite).text  # all known by then
