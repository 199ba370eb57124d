"""The vector file: public passage vectors on disk, read by the vector leg only while the graph vouches for it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import make_config

from kb import int8scan, vectorfile, vectorsync
from kb.embed.onnx import OnnxEmbedder
from kb.embeddings import EmbedStep
from kb.progress import Bars
from kb.refresh import refresh
from kb.sandbox import PublicStore
from kb.store import Connection, SearchIndex, Store

EMB = OnnxEmbedder()
QUESTIONS = ("who introduced the seed investor?", "AutoMatch match rate", "pricing decision for client files")


def listing(n: int) -> list[vectorfile.Listed]:
    return [
        vectorfile.Listed(
            f"c{i // 2}:{i % 2}",
            f"{'Notes' if i < 4 else 'Notes/Old'}/{i // 2}.md",
            f"{i:064x}",
            f"2025-0{i + 1}-01" if i != 2 else None,
            f"{'Notes' if i < 4 else 'Notes/Old'}/",
            ("a", "a/b") if i % 2 else ("a",) if i == 0 else (),
        )
        for i in range(n)
    ]


def test_nearest_scores_as_neo4j_cosine_and_breaks_ties_by_id(tmp_path: Path) -> None:
    vecs = np.array([[1, 0, 0], [0, 2, 0], [3, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=np.float32)
    m = vectorfile.write(tmp_path, "s1", "emb", listing(5), vecs)
    rows = m.nearest([2.0, 0.0, 0.0], 3)
    # rows 0 and 2 point the same way (stored unit length): a tie, broken by passage id
    assert [r["passage"] for r in rows] == ["c0:0", "c1:0", "c1:1"]
    assert [r["id"] for r in rows] == ["c0", "c1", "c1"] and rows[0]["path"] == "Notes/0.md"
    assert rows[0]["score"] == pytest.approx(1.0) and rows[2]["score"] == pytest.approx((1 + 2**-0.5) / 2)
    assert [r["passage"] for r in m.nearest([0.0, 0.0, -1.0], 5)][-1] == "c2:0"  # opposite: (1 - 1) / 2 last
    assert m.nearest([0.0, 0.0, 0.0], 3) == [] and m.nearest([1.0, 0.0], 3) == []


@pytest.mark.parametrize(
    ("filters", "passing"),
    [
        ({"folder": "Notes"}, ["c0:0", "c0:1", "c1:0", "c1:1", "c2:0"]),
        ({"folder": "Notes/Old"}, ["c2:0"]),
        ({"folder": "Note"}, []),  # a folder is matched whole, as `folder_key STARTS WITH 'Note/'`
        ({"tag": "a"}, ["c0:0", "c0:1", "c1:1"]),
        ({"tag": "a/b"}, ["c0:1", "c1:1"]),
        ({"tag": "b"}, []),
        ({"since": "2025-02-01"}, ["c0:1", "c1:1", "c2:0"]),  # c1:0 has no date: it passes no date filter
        ({"until": "2025-02-01"}, ["c0:0", "c0:1"]),
        ({"since": "2025-02-01", "until": "2025-04-01", "tag": "a"}, ["c0:1", "c1:1"]),
    ],
)
def test_the_file_filters_as_the_graph_does(tmp_path: Path, filters: dict[str, str], passing: list[str]) -> None:
    m = vectorfile.write(tmp_path, "s", "emb", listing(5), np.ones((5, 3), dtype=np.float32))
    assert sorted(r["passage"] for r in m.nearest([1.0, 1.0, 1.0], 10, filters)) == passing
    assert len(m.nearest([1.0, 1.0, 1.0], 1, filters)) == min(1, len(passing))


def test_only_the_generation_named_by_the_stamp_is_read_and_a_damaged_one_is_not(tmp_path: Path) -> None:
    vecs = np.eye(4, dtype=np.float32)
    vectorfile.write(tmp_path, "old", "emb", listing(4), vecs)
    vectorfile.write(tmp_path, "new", "emb", listing(4), vecs)
    assert [p.name for p in tmp_path.iterdir()] == ["new"]  # the older generation is gone
    assert vectorfile.load(tmp_path, "old") is None
    vectorfile._loaded.clear()
    (tmp_path / "new" / "vectors.npy").write_bytes(b"\x93NUMPY broken")
    assert vectorfile.load(tmp_path, "new") is None


def test_the_stamp_names_every_passage_its_hash_and_the_embedder() -> None:
    base = listing(4)
    stamps = {
        vectorfile.stamp_of("emb", base),
        vectorfile.stamp_of("other", base),
        vectorfile.stamp_of("emb", base[:3]),
        vectorfile.stamp_of("emb", [*base[:3], base[3]._replace(hash="f" * 64)]),
        vectorfile.stamp_of("emb", [*base[:3], base[3]._replace(tags=())]),
        vectorfile.stamp_of("emb", [*base[:3], base[3]._replace(date=None)]),
    }
    assert len(stamps) == 6 and vectorfile.stamp_of("emb", list(base)) in stamps


def build(store: Store, vault: Path) -> tuple[EmbedStep, dict[str, Any]]:
    """Refresh with the offline embedder: the step (this run's vectors) and the summary's `vector_file`."""
    step = EmbedStep(EMB)
    summary = refresh(store, make_config(vault), Bars(quiet=True), step)
    assert summary.vector_file is not None
    return step, summary.vector_file


@pytest.fixture
def filed(connection: Connection, store: Store, tmp_path: Path) -> Store:
    """The test store, writing and reading a vector file in this test's folder."""
    store.vector_dir = tmp_path / "vectors"
    vectorfile._loaded.clear()
    return store


def neo4j_rows(store: Store, vec: list[float], limit: int) -> list[dict[str, Any]]:
    """The vector leg as Neo4j answers it (no vector file)."""
    held, store.vector_dir = store.vector_dir, None
    try:
        return SearchIndex(store).vector(vec, limit)
    finally:
        store.vector_dir = held


def test_refresh_writes_the_file_and_the_vector_leg_reads_it_as_neo4j_ranks(filed: Store, example_vault: Path) -> None:
    build(filed, example_vault)
    index = SearchIndex(filed)
    matrix = index.matrix()
    assert matrix is not None
    public = filed.read("MATCH (p:Passage) WHERE p.embedding IS NOT NULL RETURN p.id AS id ORDER BY id")
    private = filed.read("MATCH (p:Passage) WHERE p.private RETURN p.id AS id")
    assert [str(i) for i in matrix.ids] == [r["id"] for r in public] and private
    assert not {r["id"] for r in private} & {str(i) for i in matrix.ids}  # private vectors stay in Neo4j
    for q in QUESTIONS:
        vec = EMB.embed_query(q)
        got, want = index.vector(vec, 30), neo4j_rows(filed, vec, 30)
        assert [r["passage"] for r in got] == [r["passage"] for r in want]
        assert [r["score"] for r in got] == pytest.approx([r["score"] for r in want], abs=1e-6)
        assert [(r["id"], r["path"]) for r in got] == [(r["id"], r["path"]) for r in want]
        mixed = index.vector(vec, 30, private=True)  # the private index still answers beside the file
        assert [r["passage"] for r in mixed] == [r["passage"] for r in neo4j_rows_private(filed, vec, 30)]


def neo4j_rows_private(store: Store, vec: list[float], limit: int) -> list[dict[str, Any]]:
    held, store.vector_dir = store.vector_dir, None
    try:
        return SearchIndex(store).vector(vec, limit, private=True)
    finally:
        store.vector_dir = held


def test_a_writing_refresh_stops_vouching_first_and_vouches_for_a_new_generation_after(
    filed: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(filed, example_vault)
    root = filed.vector_dir
    assert root is not None
    first = filed.get_meta(vectorfile.META_KEY)["stamp"]
    assert vectorsync.hold(filed) == first  # what a refresh does before it writes; killed here, it stays so
    assert SearchIndex(filed).matrix() is None
    vec = EMB.embed_query(QUESTIONS[0])
    assert SearchIndex(filed).vector(vec, 10) == neo4j_rows(filed, vec, 10)  # Neo4j answers meanwhile

    fetched: list[int] = []
    real = Store.public_vectors

    def counted(self: Store, ids: Sequence[str]) -> dict[str, list[float]]:
        fetched.append(len(ids))
        return real(self, ids)

    monkeypatch.setattr(Store, "public_vectors", counted)
    note = example_vault / "People" / "Mira Havel.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n\nMira now breeds Icelandic horses in Tromsø.\n")
    step, synced = build(filed, example_vault)
    second = filed.get_meta(vectorfile.META_KEY)["stamp"]
    assert step.fresh  # the edited note's new passages, embedded in this run
    assert synced["stamp"] == second and synced["written"] and synced["read_back"] == 0
    assert second not in (None, first) and [p.name for p in root.iterdir()] == [second]
    assert fetched == []  # unchanged vectors come from the last generation, new ones from this run
    rows = SearchIndex(filed).vector(EMB.embed_query("Icelandic horses in Tromsø"), 3)
    assert rows[0]["path"] == "People/Mira Havel.md"

    _, synced = build(filed, example_vault)  # writes nothing: vouches for the same generation again
    assert filed.get_meta(vectorfile.META_KEY)["stamp"] == second and fetched == []
    assert (
        synced["stamp"] == second
        and not synced["written"]
        and synced["passages"] == len(SearchIndex(filed).matrix() or [])
    )


def test_a_lost_file_is_written_again_from_the_graph(filed: Store, example_vault: Path) -> None:
    build(filed, example_vault)
    root = filed.vector_dir
    assert root is not None
    stamp = filed.get_meta(vectorfile.META_KEY)["stamp"]
    vecs = [EMB.embed_query(q) for q in QUESTIONS]
    before = [SearchIndex(filed).vector(v, 20) for v in vecs]
    for gen in root.iterdir():
        for f in gen.iterdir():
            f.unlink()
        gen.rmdir()
    vectorfile._loaded.clear()
    assert SearchIndex(filed).matrix() is None  # vouched for, but gone: Neo4j answers
    _, synced = build(filed, example_vault)
    assert synced["written"] and synced["read_back"] == synced["passages"] > 0  # every vector read back
    assert filed.get_meta(vectorfile.META_KEY)["stamp"] == stamp and SearchIndex(filed).matrix() is not None
    assert [SearchIndex(filed).vector(v, 20) for v in vecs] == before


def test_the_mcp_view_never_gets_a_passage_it_hides_from_the_file(
    filed: Store, connection: Connection, example_vault: Path
) -> None:
    """A folder made private in the config but not yet refreshed is public in the graph and in the file; the MCP
    server's view hides it, so every row the file proposes is confirmed in the view, and the list still fills."""
    build(filed, example_vault)
    hidden = "Company/Meetings"
    vec = EMB.embed_query("what did the board say about hiring?")
    assert any(r["path"].startswith(hidden) for r in SearchIndex(filed).vector(vec, 10))
    view = PublicStore(connection, 30.0, ("Journal", hidden), filed.vector_dir)
    try:
        rows = SearchIndex(view).vector(vec, 10)
        assert SearchIndex(view).matrix() is not None
    finally:
        view.close()
    assert len(rows) == 10 and not any(r["path"].startswith(hidden) for r in rows)


@pytest.mark.parametrize(
    "filters",
    [{"folder": "Company"}, {"folder": "People"}, {"tag": "client"}, {"since": "2025-01-01"}, {"until": "2023-12-31"}],
)
def test_a_filtered_vector_leg_reads_the_file_and_answers_as_neo4j(
    filed: Store, example_vault: Path, filters: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file holds each passage's folder, tags and date and filters as the graph does: the same rows as Neo4j's
    filtered query, and Neo4j is never asked to scan."""
    build(filed, example_vault)
    index = SearchIndex(filed)
    assert index.matrix() is not None
    scans: list[int] = []
    real = SearchIndex._scan

    def counted(self: SearchIndex, *args: Any) -> list[dict[str, Any]]:
        scans.append(1)
        return real(self, *args)

    monkeypatch.setattr(SearchIndex, "_scan", counted)
    for q in QUESTIONS:
        vec = EMB.embed_query(q)
        for limit in (5, 30):
            before = len(scans)
            got = index.vector(vec, limit, filters)
            assert len(scans) == before  # the file answered: Neo4j scanned nothing
            held, filed.vector_dir = filed.vector_dir, None
            want = SearchIndex(filed).vector(vec, limit, filters)
            filed.vector_dir = held
            assert [r["passage"] for r in got] == [r["passage"] for r in want] and got
            assert [r["score"] for r in got] == pytest.approx([r["score"] for r in want], abs=1e-6)
    assert scans  # the comparison itself is Neo4j's exact scan (a small graph)


class Reversed(OnnxEmbedder):
    """Another embedder (its own identity): MiniLM's vectors reversed, so every vector differs from the first's."""

    @property
    def identity(self) -> str:
        return "test:reversed-minilm:384"

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [v[::-1] for v in super().embed_documents(texts)]  # embed_query reads through this too


def test_a_new_embedder_never_reuses_the_last_generation(filed: Store, example_vault: Path) -> None:
    build(filed, example_vault)
    first = SearchIndex(filed).matrix()
    assert first is not None and first.embedder == EMB.identity
    other = Reversed()
    step = EmbedStep(other, reembed=True)
    summary = refresh(filed, make_config(example_vault), Bars(quiet=True), step)
    synced = summary.vector_file
    matrix = SearchIndex(filed).matrix()
    assert synced is not None and synced["written"] and matrix is not None and matrix.embedder == other.identity
    assert synced["read_back"] == 0 and len(step.fresh) > 0  # every vector from this run, none from the old file
    vec = other.embed_query(QUESTIONS[0])
    got, want = SearchIndex(filed).vector(vec, 20), neo4j_rows(filed, vec, 20)
    assert [r["passage"] for r in got] == [r["passage"] for r in want]
    assert [r["score"] for r in got] == pytest.approx([r["score"] for r in want], abs=1e-6)


def test_the_int8_shortlist_answers_as_the_exact_scan(
    filed: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above SHORTLIST_MIN rows the file ranks rows by int8 codes and scores a shortlist exactly; on the example
    vault's real vectors (the shortlist cut to 3x the rows asked for, 12 at least, so it really cuts) every answer
    is the exact scan's, with and without filters."""
    build(filed, example_vault)
    matrix = SearchIndex(filed).matrix()
    assert matrix is not None and matrix.codes is not None and matrix.codes.shape == matrix.vectors.T.shape
    assert len(matrix) > 60
    exact = dataclasses.replace(matrix, codes=None, scales=None)
    matrix = dataclasses.replace(matrix, use_codes=True)  # the generation, too small, chose the exact scan
    monkeypatch.setattr(vectorfile, "SHORTLIST_MIN", 0)
    monkeypatch.setattr(vectorfile, "SHORTLIST_FACTOR", 3)
    monkeypatch.setattr(vectorfile, "SHORTLIST_FLOOR", 12)
    shortlisted: list[int] = []
    real = vectorfile.Matrix.shortlist

    def counted(self: vectorfile.Matrix, *args: Any) -> Any:
        rows = real(self, *args)
        shortlisted.append(len(self) if rows is None else len(rows))
        return rows

    monkeypatch.setattr(vectorfile.Matrix, "shortlist", counted)
    questions = (*QUESTIONS, "Mira Havel", "what did the client pay per seat", "Tromsø horses")
    for q in questions:
        vec = EMB.embed_query(q)
        for filters in ({}, {"folder": "People"}, {"since": "2024-01-01"}):
            for limit in (4, 10):
                got, want = matrix.nearest(vec, limit, filters), exact.nearest(vec, limit, filters)
                assert [r["passage"] for r in got] == [r["passage"] for r in want], (q, filters, limit)
                # the same dot products, summed by another BLAS kernel (a few rows, not all): equal to 1e-7
                assert [r["score"] for r in got] == pytest.approx([r["score"] for r in want], abs=1e-7)
    assert min(shortlisted) < len(matrix) / 2  # it did cut: most rows were never scored exactly


def test_a_generation_without_codes_is_scanned_whole_and_a_refresh_gives_it_codes(
    filed: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vector file written before the int8 codes existed is still read (exactly, every row); the next refresh,
    writing nothing else, adds its codes, and the answers stay the same."""
    build(filed, example_vault)
    root, stamp = filed.vector_dir, filed.get_meta(vectorfile.META_KEY)["stamp"]
    assert root is not None
    vecs = [EMB.embed_query(q) for q in QUESTIONS]
    before = [SearchIndex(filed).vector(v, 20) for v in vecs]
    for name in ("codes.npy", "scales.npy"):
        (root / stamp / name).unlink()
    vectorfile._loaded.clear()
    monkeypatch.setattr(vectorfile, "SHORTLIST_MIN", 0)
    old = SearchIndex(filed).matrix()
    assert old is not None and old.codes is None
    assert [SearchIndex(filed).vector(v, 20) for v in vecs] == before
    codes, scales = int8scan.quantize_rows(np.asarray(old.vectors))  # as another process's refresh adds them
    np.save(root / stamp / "codes.npy", codes)
    np.save(root / stamp / "scales.npy", scales)
    again = SearchIndex(filed).matrix()  # this process had loaded the generation without them: it reads them now
    assert again is not None and again.codes is not None and again is not old
    for name in ("codes.npy", "scales.npy"):
        (root / stamp / name).unlink()
    vectorfile._loaded.clear()
    _, synced = build(filed, example_vault)
    assert not synced["written"] and synced["stamp"] == stamp
    new = SearchIndex(filed).matrix()
    assert new is not None and new.codes is not None
    assert [SearchIndex(filed).vector(v, 20) for v in vecs] == before
    (root / stamp / "codes.npy").write_bytes(np.save.__doc__.encode()[:64])  # damaged: read as absent
    vectorfile._loaded.clear()
    damaged = SearchIndex(filed).matrix()
    assert damaged is not None and damaged.codes is None


def test_status_describes_the_file_the_graph_vouches_for(filed: Store, example_vault: Path) -> None:
    build(filed, example_vault)
    root, stamp = filed.vector_dir, filed.vector_state()[1]
    assert root is not None and stamp is not None
    current = vectorfile.describe(root, stamp)
    matrix = SearchIndex(filed).matrix()
    assert matrix is not None and current["state"] == "current" and current["passages"] == len(matrix)
    assert current["codes"] and not current["shortlist"] and current["bytes"] > matrix.vectors.nbytes
    assert vectorfile.describe(None, stamp) == {"state": "off"}
    vectorsync.hold(filed)  # a refresh stopped before it vouched again
    assert vectorfile.describe(root, filed.vector_state()[1]) == {"state": "none"}
    for f in (root / stamp).iterdir():
        f.unlink()
    vectorfile._loaded.clear()
    assert vectorfile.describe(root, stamp) == {"state": "missing", "stamp": stamp}


def test_a_generation_records_which_scan_is_faster_here_and_every_search_on_it_takes_that_one(
    filed: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The int8 product is faster than the float32 one on some machines and slower on others: a generation times
    both when written and keeps the choice in its scan.json, read by every process; one written before the choice
    keeps the shortlist."""
    build(filed, example_vault)
    root, stamp = filed.vector_dir, filed.get_meta(vectorfile.META_KEY)["stamp"]
    assert root is not None
    small = json.loads((root / stamp / vectorfile.SCAN_FILE).read_text())
    assert small == {"shortlist": False}  # under SHORTLIST_MIN rows the scan is exact anyway: nothing timed
    matrix = SearchIndex(filed).matrix()
    assert matrix is not None and not matrix.use_codes
    monkeypatch.setattr(vectorfile, "SHORTLIST_MIN", 0)
    monkeypatch.setattr(vectorfile, "SHORTLIST_FLOOR", 12)  # so that it really cuts this small vault
    vec = np.asarray(EMB.embed_query(QUESTIONS[0]), dtype=np.float32)
    assert matrix.shortlist(vec, 4, None) is None  # the recorded choice stands whatever the rows
    for gain, chosen in ((1e9, True), (0.0, False)):
        monkeypatch.setattr(vectorfile, "SHORTLIST_GAIN", gain)
        assert matrix.codes is not None and matrix.scales is not None
        timed = vectorfile.choose_scan(matrix.vectors, matrix.codes, matrix.scales)
        assert timed["shortlist"] is chosen and timed["exact_ms"] >= 0 and timed["shortlist_ms"] >= 0
    (root / stamp / vectorfile.SCAN_FILE).write_text(json.dumps({"shortlist": True}))
    vectorfile._loaded.clear()
    chosen_matrix = SearchIndex(filed).matrix()
    assert chosen_matrix is not None and chosen_matrix.use_codes
    assert chosen_matrix.shortlist(vec, 4, None) is not None
    assert vectorfile.describe(root, stamp)["shortlist"] is True
    (root / stamp / vectorfile.SCAN_FILE).unlink()  # a generation written before kb timed the two
    vectorfile._loaded.clear()
    older = SearchIndex(filed).matrix()
    assert older is not None and older.use_codes and vectorfile.describe(root, stamp)["scan"] == {}
