"""Fusion of the two legs: reciprocal-rank ties (1st and 2nd against 2nd and 1st) break on how far each chunk's
scores lead its legs; the keyword leg's text splits words where questions do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import make_config

from kb import cypher
from kb.progress import Bars
from kb.refresh import refresh
from kb.search.fusion import FusionConfig
from kb.search.hybrid import Filters, fuse, fuse_passages, lucene_query, roll_up
from kb.store import SearchIndex, Store


def ranking(*rows: tuple[str, str, float]) -> list[dict[str, Any]]:
    return [{"id": cid, "path": path, "passage": f"{cid}:0", "score": score} for cid, path, score in rows]


def test_mirrored_ranks_tie_and_the_clearer_lead_wins_not_the_id() -> None:
    # "z" leads the keyword leg by far (9 against 5), "a" the vector leg barely (0.80 against 0.79)
    kw = ranking(("z", "Z.md", 9.0), ("a", "A.md", 5.0), ("c", "C.md", 1.0))
    vec = ranking(("a", "A.md", 0.80), ("z", "Z.md", 0.79), ("c", "C.md", 0.40))
    hits = fuse(kw, vec, k=10)
    assert hits[0].score == hits[1].score == 1 / 11 + 1 / 12
    assert [h.id for h in hits] == ["z", "a", "c"]
    # the same ranks with the clear lead in the vector leg instead: now "a" wins
    kw = ranking(("z", "Z.md", 5.1), ("a", "A.md", 5.0), ("c", "C.md", 1.0))
    vec = ranking(("a", "A.md", 0.80), ("z", "Z.md", 0.41), ("c", "C.md", 0.40))
    assert [h.id for h in fuse(kw, vec, k=10)] == ["a", "z", "c"]


def test_the_lead_decides_a_note_tie_before_the_sum_of_its_chunks() -> None:
    kw = ranking(("z1", "Z.md", 9.0), ("a1", "A.md", 5.0), ("a2", "A.md", 1.0))
    vec = ranking(("a1", "A.md", 0.80), ("z1", "Z.md", 0.79), ("a2", "A.md", 0.40))
    notes = roll_up(fuse(kw, vec, k=10), limit=10, per_note=3)
    assert [n.path for n in notes] == ["Z.md", "A.md"] and notes[0].score == notes[1].score
    assert [c.id for c in notes[1].chunks] == ["a1", "a2"]  # A has more chunks: the sum no longer decides first


def test_a_note_shows_only_the_chunks_that_score_near_its_best() -> None:
    # A's first chunk leads both legs; its second is fourth in one leg only (1/14, under 0.4 x 2/11); B's two
    # chunks are near each other
    kw = ranking(("a1", "A.md", 9.0), ("b1", "B.md", 8.0), ("b2", "B.md", 7.0), ("a2", "A.md", 1.0))
    vec = ranking(("a1", "A.md", 0.9), ("b2", "B.md", 0.8), ("b1", "B.md", 0.7))
    chunks = fuse(kw, vec, k=10)
    shown = roll_up(chunks, limit=10, per_note=3, chunk_floor=0.4)
    assert [(n.path, [c.id for c in n.chunks]) for n in shown] == [("A.md", ["a1"]), ("B.md", ["b2", "b1"])]
    every = roll_up(chunks, limit=10, per_note=3)
    assert [n.path for n in every] == [n.path for n in shown]  # the same ranking
    assert [c.id for c in every[0].chunks] == ["a1", "a2"]


def test_the_first_note_shows_more_chunks_than_the_others() -> None:
    # A and B have five chunks each, all near their best; A ranks first
    kw = ranking(*[(f"a{i}", "A.md", 10.0 - i) for i in range(5)], *[(f"b{i}", "B.md", 4.0 - i / 2) for i in range(5)])
    notes = roll_up(fuse(kw, [], k=10), limit=10, per_note=3, first_chunks=5)
    assert [(n.path, len(n.chunks)) for n in notes] == [("A.md", 5), ("B.md", 3)]
    assert [len(n.chunks) for n in roll_up(fuse(kw, [], k=10), limit=10, per_note=3)] == [3, 3]


def test_note_fusion_lifts_a_note_both_legs_find_through_different_chunks() -> None:
    # B's best chunks are second in each leg, but they are different chunks: by its best chunk alone B is last
    kw = ranking(("a1", "A.md", 9.0), ("b1", "B.md", 8.0), ("c1", "C.md", 7.0))
    vec = ranking(("c2", "C.md", 0.9), ("b2", "B.md", 0.8))
    chunks = fuse(kw, vec, k=10)
    assert [n.path for n in roll_up(chunks, limit=10, per_note=3)][-1] == "B.md"
    fused = roll_up(chunks, limit=10, per_note=3, note_weight=0.5, note_k=10)
    assert [n.path for n in fused] == ["C.md", "B.md", "A.md"]
    b = fused[1]
    assert b.score == 1 / 12 + 0.5 * (1 / 12 + 1 / 12)  # its best chunk, plus half its note-level fusion


def test_passage_fusion_carries_the_lead_to_its_chunks() -> None:
    kw = ranking(("z", "Z.md", 9.0), ("a", "A.md", 5.0), ("c", "C.md", 1.0))
    vec = ranking(("a", "A.md", 0.80), ("z", "Z.md", 0.79), ("c", "C.md", 0.40))
    hits = fuse_passages(kw, vec, FusionConfig(rrf_k=10, passage_fusion=True))
    assert [h.id for h in hits] == ["z", "a", "c"] and hits[0].lead > hits[1].lead > hits[2].lead == 0.0


def write_vault(root: Path) -> Path:
    (root / "People").mkdir(parents=True)
    (root / "People" / "Team.md").write_text(
        "# Team\n\nKenji's laptop died. Monthly churn was 2.9% across 1,600 seats.\n"
    )
    (root / "Other.md").write_text("# Other\n\nA note about office plants and nothing else.\n")
    return root


def keyword_paths(store: Store, question: str) -> list[str]:
    lucene = lucene_query(question, Filters(include_private=True))
    assert lucene is not None
    return [r["path"] for r in SearchIndex(store).keyword(lucene, 10)]


def test_question_words_find_possessives_and_decimals(store: Store, tmp_path: Path) -> None:
    refresh(store, make_config(write_vault(tmp_path / "v")), Bars(quiet=True), None)
    assert keyword_paths(store, "Who is Kenji?") == ["People/Team.md"]  # the text says "Kenji's"
    assert keyword_paths(store, "2.9 or 1,600?") == ["People/Team.md"]
    # a graph of schema 4 (search text as Lucene splits it) is written again when the schema is brought up to date
    store.run("MATCH (p:Passage) SET p.search = p.breadcrumb + '\n' + p.text")
    store.set_meta("schema", {"version": 4})
    store.run_autocommit(cypher.await_indexes(60))
    assert keyword_paths(store, "Who is Kenji?") == keyword_paths(store, "2.9 or 1,600?") == []
    store.init_schema()
    assert keyword_paths(store, "Who is Kenji?") == ["People/Team.md"]
    assert store.get_meta("schema")["version"] == cypher.SCHEMA_VERSION
    # the replaced entries still weigh in Lucene's statistics: the next refresh rebuilds the indexes
    again = refresh(store, make_config(tmp_path / "v"), Bars(quiet=True), None)
    assert again.indexes_rebuilt and keyword_paths(store, "2.9 or 1,600?") == ["People/Team.md"]


def test_the_text_leg_lifts_a_chunk_that_holds_all_the_question_words() -> None:
    # "w" is only third in each passage leg (its words spread over several passages), first as a whole chunk
    kw = ranking(("a", "A.md", 9.0), ("b", "B.md", 8.0), ("w", "W.md", 7.0))
    vec = ranking(("b", "B.md", 0.9), ("a", "A.md", 0.8), ("w", "W.md", 0.7))
    text = ranking(("w", "W.md", 12.0), ("a", "A.md", 6.0))
    both = fuse_passages(kw, vec, FusionConfig(rrf_k=10, text_weight=0.0), text)
    assert [h.id for h in both] == ["a", "b", "w"] and all(h.text_rank is None for h in both)
    three = fuse_passages(kw, vec, FusionConfig(rrf_k=10, text_weight=1.0), text)
    assert [h.id for h in three] == ["a", "w", "b"]
    assert {h.id: h.text_rank for h in three} == {"a": 2, "w": 1, "b": None}
    assert roll_up(three, limit=3, per_note=3)[1].text_rank == 1
    # passage fusion ranks passages, not chunks: the chunk leg takes no part
    passages = fuse_passages(kw, vec, FusionConfig(rrf_k=10, passage_fusion=True), text)
    assert all(h.text_rank is None for h in passages)


def test_the_chunk_query_reads_the_chunk_index_fields_with_the_same_filters() -> None:
    assert lucene_query("Kenji's laptop?", Filters(), ("text", "breadcrumb", "title")) == (
        "+(text:(kenji s laptop) breadcrumb:(kenji s laptop) title:(kenji s laptop)) -privacy:kbprivate"
    )
    assert lucene_query("Kenji's laptop?", Filters()) == "+search:(kenji s laptop) -privacy:kbprivate"


def test_the_text_leg_finds_a_section_whose_words_no_passage_holds_together(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    filler = "la " * 160  # one token each: no 150-token passage reaches from one asked word to the next
    (root / "Spread.md").write_text(f"# Spread\n\nThe oven broke. {filler} The baker left. {filler} Flour ran out.\n")
    (root / "Kitchen.md").write_text("# Kitchen\n\nThe oven broke again; the oven man came twice.\n")
    refresh(store, make_config(root), Bars(quiet=True), None)
    index = SearchIndex(store)
    question = "oven baker flour"
    chunk_query = lucene_query(question, Filters(include_private=True), ("text", "breadcrumb", "title"))
    assert chunk_query is not None
    # no passage of Spread.md holds all three words; its one chunk does, and ranks first in the chunk index
    texts = [r["t"] for r in store.read("MATCH (p:Passage {note_path: 'Spread.md'}) RETURN p.text AS t")]
    assert len(texts) > 2 and not any(all(w in t.lower() for w in question.split()) for t in texts)
    assert [r["path"] for r in index.keyword_chunks(chunk_query, 10)][0] == "Spread.md"


def test_the_legs_rank_the_same_whether_they_overlap_or_not(store: Store, tmp_path: Path) -> None:
    """The full-text legs run beside the vector leg on a plain store, one after the other on the MCP server's
    one-transaction store; the ranking is the same."""
    from kb.embed.onnx import OnnxEmbedder
    from kb.embeddings import EmbedStep
    from kb.sandbox import PublicStore
    from kb.search.hybrid import rank_chunks

    root = write_vault(tmp_path / "v")
    (root / "Spread.md").write_text("# Spread\n\nKenji's oven broke. " + "la " * 160 + "Churn was 2.9% after.\n")
    emb = OnnxEmbedder()
    refresh(store, make_config(root), Bars(quiet=True), EmbedStep(emb))
    assert SearchIndex(store).parallel and not PublicStore.parallel_reads

    class Serial(SearchIndex):
        parallel = False  # type: ignore[assignment]

    runs = [
        rank_chunks(index, emb, "Kenji churn oven", Filters(include_private=True), 10)
        for index in (SearchIndex(store), Serial(store))
    ]
    assert [(h.id, h.score, h.keyword_rank, h.vector_rank, h.text_rank) for h in runs[0].chunks] == [
        (h.id, h.score, h.keyword_rank, h.vector_rank, h.text_rank) for h in runs[1].chunks
    ]
    assert runs[0].chunks and any(h.text_rank for h in runs[0].chunks) and any(h.vector_rank for h in runs[0].chunks)
    assert runs[0].timing["legs_ms"] > 0 and runs[1].timing["keyword_ms"] > 0
