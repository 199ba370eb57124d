"""Search indexes that do not depend on the database's history, and an empty index that binds no embedder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import make_config

import kb.store as kb_store
from kb import cypher
from kb.embed.onnx import OnnxEmbedder
from kb.embeddings import EmbedStep
from kb.errors import EmbedderError
from kb.progress import Bars
from kb.refresh import refresh
from kb.search.hybrid import Filters, hybrid_search
from kb.store import SearchIndex, Store

EMB = OnnxEmbedder()
QUESTIONS = (
    "pricing decision for client files",
    "Who is the partner at Kestrel Capital?",
    "AutoMatch match rate",
    "what did the board say about hiring?",
)


def build(store: Store, vault: Path, embedder: Any = EMB) -> None:
    refresh(store, make_config(vault), Bars(quiet=True), EmbedStep(embedder))


def rankings(store: Store) -> list[list[tuple[Any, ...]]]:
    out = []
    for q in QUESTIONS:
        res = hybrid_search(SearchIndex(store), EMB, q, k=10, filters=Filters(include_private=True)).to_json()
        out.append([(r["path"], r["score"], r["keyword_rank"], r["vector_rank"]) for r in res["results"]])
    return out


def keyword_scores(store: Store) -> list[float]:
    return [r["score"] for r in SearchIndex(store).keyword("+(pricing client files)", 20)]


@pytest.fixture
def vault_b(example_vault: Path, tmp_path: Path) -> Path:
    """The example vault without its meetings and metrics: vault A holds text B does not."""
    b = tmp_path / "vault-b"
    shutil.copytree(example_vault, b, symlinks=True)
    shutil.rmtree(b / "Company" / "Meetings")
    shutil.rmtree(b / "Company" / "Metrics")
    return b


def test_vault_b_ranks_as_on_a_fresh_database(store: Store, example_vault: Path, vault_b: Path) -> None:
    build(store, vault_b)
    fresh, fresh_kw = rankings(store), keyword_scores(store)
    store.clear()
    build(store, example_vault)
    store.clear()  # a vault switch
    build(store, vault_b)
    assert rankings(store) == fresh and keyword_scores(store) == fresh_kw


def test_rebuilt_indexes_forget_deleted_notes(
    store: Store, example_vault: Path, vault_b: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kb.refresh.REBUILD_SHARE", 100.0)  # no rebuild by itself here
    build(store, vault_b)
    fresh_kw = keyword_scores(store)
    store.clear()
    build(store, example_vault)
    for name in ("Meetings", "Metrics"):
        shutil.rmtree(example_vault / "Company" / name)
    build(store, example_vault)  # the same notes as vault B, after deletes
    assert keyword_scores(store) != fresh_kw  # deleted entries still weigh in Lucene's statistics
    store.rebuild_search_indexes()
    assert keyword_scores(store) == fresh_kw


def refresh_to(store: Store, vault: Path, **kw: Any) -> Any:
    return refresh(store, make_config(vault), Bars(quiet=True), EmbedStep(EMB), **kw)


def test_refresh_on_another_vault_rebuilds_the_indexes(store: Store, example_vault: Path, vault_b: Path) -> None:
    """No clear: `kb refresh` pointed at vault B after vault A ranks B as a fresh database does."""
    build(store, vault_b)
    fresh, fresh_kw = rankings(store), keyword_scores(store)
    store.clear()
    build(store, example_vault)
    summary = refresh_to(store, vault_b)
    assert summary.indexes_rebuilt == "another vault was in the database" and summary.removed
    got = rankings(store)
    for f, g in zip(fresh, got):
        assert g == f, [(x, y) for x, y in zip(f, g) if x != y][:3]
    assert keyword_scores(store) == fresh_kw
    assert refresh_to(store, vault_b).indexes_rebuilt is None  # once only


def test_many_deletes_rebuild_the_indexes_by_themselves(store: Store, example_vault: Path, vault_b: Path) -> None:
    build(store, vault_b)
    fresh_kw = keyword_scores(store)
    store.clear()
    build(store, example_vault)
    (example_vault / "Company" / "Meetings" / "Kickoff.md").unlink()
    summary = refresh_to(store, example_vault)  # a few passages gone: under the share, no rebuild
    assert summary.removed == ["Company/Meetings/Kickoff.md"] and summary.indexes_rebuilt is None
    assert 0 < store.get_meta("indexes")["churn"] < 0.25 * store.counts()["passages"]
    for name in ("Meetings", "Metrics"):
        shutil.rmtree(example_vault / "Company" / name)
    summary = refresh_to(store, example_vault)
    assert (
        summary.indexes_rebuilt is not None and "rewritten or deleted since the last build" in summary.indexes_rebuilt
    )
    assert keyword_scores(store) == fresh_kw and store.get_meta("indexes")["churn"] == 0


def test_rebuild_indexes_flag(kb_env: Path, example_vault: Path, store: Store) -> None:
    from test_cli import invoke

    code, out = invoke("refresh", "--vault", str(example_vault), "--json")
    assert code == 0 and json.loads(out)["indexes_rebuilt"] is None
    code, out = invoke("refresh", "--vault", str(example_vault), "--rebuild-indexes", "--json")
    data = json.loads(out)
    assert code == 0 and data["indexes_rebuilt"] == "asked for" and data["counts"]["pending"] == 0
    assert SearchIndex(store).keyword("+(pricing)", 5)


class DownEmbedder:
    """A configured embedder that is not running (Ollama down): it has dimensions but makes no vector."""

    model_name, dimensions, identity = "bge-m3", 1024, "ollama:bge-m3:1024"

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbedderError("cannot reach Ollama at http://127.0.0.1:11434 (ConnectError)")

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_an_index_made_before_any_vector_binds_no_embedder(store: Store, example_vault: Path) -> None:
    with pytest.raises(EmbedderError, match="cannot reach Ollama"):
        build(store, example_vault, DownEmbedder())
    assert store.get_meta("embedder")["identity"] == "ollama:bge-m3:1024"
    build(store, example_vault)  # the user switches to the offline embedder: no --reembed needed
    assert store.get_meta("embedder")["identity"] == EMB.identity and store.counts()["pending"] == 0
    with pytest.raises(EmbedderError, match="built with onnx:all-MiniLM-L6-v2-int8:384:r2 but the configured"):
        build(store, example_vault, DownEmbedder())  # now vectors exist: a switch needs --reembed


@pytest.mark.parametrize("exact_max", [kb_store.EXACT_VECTOR_MAX, 0], ids=["scan", "index"])
@pytest.mark.parametrize(
    ("filters", "limit"),
    [
        ({"folder": "Company"}, 5),
        ({"since": "2024-01-01"}, 8),
        ({"folder": "People"}, 60),
        ({"since": "2025-06-01"}, 40),
    ],
)
def test_filtered_vector_leg_is_the_exact_filtered_top(
    store: Store,
    example_vault: Path,
    filters: dict[str, str],
    limit: int,
    exact_max: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A graph this small is scanned whole; above EXACT_VECTOR_MAX (here 0) the index first when enough
    candidates pass, an exact scan when too few do: either way the filtered top."""
    monkeypatch.setattr(kb_store, "EXACT_VECTOR_MAX", exact_max)
    build(store, example_vault)
    vec = EMB.embed_query("what did we decide about pricing for client files?")
    rows = store.read(
        "MATCH (p:Passage) WHERE p.embedding IS NOT NULL RETURN p.id AS id, p.folder_key AS folder, "
        "p.date AS date, p.embedding AS v"
    )
    passing = [
        r
        for r in rows
        if r["folder"].startswith(filters.get("folder", "") + ("/" if "folder" in filters else ""))
        and (r["date"] or "") >= filters.get("since", "")
    ]
    cos = {r["id"]: sum(a * b for a, b in zip(r["v"], vec)) for r in passing}
    expected = sorted(cos, key=lambda i: (-cos[i], i))[:limit]
    got = SearchIndex(store).vector(vec, limit, {**filters})
    assert [r["passage"] for r in got] == expected
    assert len(expected) == min(limit, len(passing)) and len(passing) < len(rows)


def test_a_small_graph_is_scanned_not_read_through_the_approximate_index(
    store: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to EXACT_VECTOR_MAX passages the vector leg scores every passage, so its top cannot depend on how the
    index graph grew: it is the exact top even with the vector indexes gone; above the bound it reads them."""
    build(store, example_vault)
    vec = EMB.embed_query("who introduced the seed investor?")
    rows = store.read("MATCH (p:Passage) WHERE p.embedding IS NOT NULL RETURN p.id AS id, p.embedding AS v")
    cos = {r["id"]: sum(a * b for a, b in zip(r["v"], vec)) for r in rows}
    expected = sorted(cos, key=lambda i: (-cos[i], i))[:30]
    assert 30 < len(rows) <= kb_store.EXACT_VECTOR_MAX == 1000
    store.drop_vector_index()
    assert [r["passage"] for r in SearchIndex(store).vector(vec, 30)] == expected
    monkeypatch.setattr(kb_store, "EXACT_VECTOR_MAX", len(rows) - 1)
    with pytest.raises(Exception, match="passage_embedding"):
        SearchIndex(store).vector(vec, 30)


def test_a_new_cut_re_derives_every_note_once_and_keeps_the_vectors(
    store: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade that cuts chunks or passages another way re-parses unchanged notes; equal passages keep
    their vectors (nothing is embedded twice), and the next run writes nothing."""
    import kb.refresh as refresh_module

    first = refresh_to(store, example_vault)
    assert first.rederived is None and first.embedded > 0
    before = rankings(store)
    monkeypatch.setattr(refresh_module, "DERIVE_VERSION", refresh_module.DERIVE_VERSION + 1)
    again = refresh_to(store, example_vault)
    assert again.rederived is not None and "this kb cuts by v" in again.rederived
    assert sorted(again.changed) == sorted(first.added) and again.embedded == 0
    assert rankings(store) == before
    last = refresh_to(store, example_vault)
    assert last.rederived is None and last.wrote_nothing


GRAPH_QUESTIONS = (
    "How has Lumen Ledger's customer count changed over time?",
    "Who introduced the investor that led the seed round?",
    "What did the Lisbon office plan lead to?",
)


def graph_rankings(store: Store) -> list[dict[str, Any]]:
    from kb.search.graph import graph_search
    from kb.store import KnowledgeStore

    out = []
    for q in GRAPH_QUESTIONS:
        res = graph_search(SearchIndex(store), KnowledgeStore(store), EMB, q, filters=Filters(include_private=True))
        out.append({k: v for k, v in res.to_json().items() if k != "timing"})
    return out


def entity_scores(store: Store) -> list[tuple[str, float]]:
    query = "CALL db.index.fulltext.queryNodes('entity_names', $q) YIELD node, score RETURN node.key AS k, score"
    rows = store.read(query, q="lumen OR ledger OR kestrel OR lisbon OR seed")
    return sorted(((r["k"], r["score"]) for r in rows), key=lambda r: (-r[1], r[0]))  # ties: node ids vary


def test_graph_search_ranks_as_on_a_fresh_database(kb_env: Path, store: Store, example_vault: Path) -> None:
    """Entity names and claim lines are indexed too: the vault's graph search (lines, scores, order) is the same
    after another vault's layer was built and replaced (no clear), and after a vault switch (clear). The
    claim-line index's own scores were not: it scores quantized vectors, quantized by indexing order."""
    from test_cli import invoke

    a = example_vault.parent / "vault-a"
    shutil.copytree(example_vault, a, symlinks=True)
    shutil.rmtree(a / "Company" / "Meetings")  # A holds entities and claims B does not, and lacks some of B's

    def build_with_knowledge(vault: Path) -> None:
        code, out = invoke("refresh", "--vault", str(vault), "--json")
        assert code == 0 and json.loads(out)["knowledge"]["counts"]["entities"] > 0, out

    build_with_knowledge(example_vault)
    fresh, fresh_entities = graph_rankings(store), entity_scores(store)
    assert fresh_entities
    build_with_knowledge(a)
    build_with_knowledge(example_vault)  # another vault's layer was written and replaced
    assert entity_scores(store) == fresh_entities
    same_graph(graph_rankings(store), fresh)
    build_with_knowledge(a)
    store.clear()
    build_with_knowledge(example_vault)
    assert entity_scores(store) == fresh_entities
    same_graph(graph_rankings(store), fresh)


def same_graph(got: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> None:
    for q, g, f in zip(GRAPH_QUESTIONS, got, fresh):
        assert g["results"] == f["results"], q
        assert g["graph"]["lines"] == f["graph"]["lines"], (q, g["graph"]["lines"], f["graph"]["lines"])
        assert g == f, (q, [k for k in f if g.get(k) != f[k]])


def test_a_claims_neighbours_come_in_a_fixed_order(store: Store) -> None:
    """Lines cite a claim's first conflicts and successors: listed in the order the store holds them, they
    changed after a rebuild; now by date, value and id, whatever order they were written in."""
    from kb import cypher

    store.run(
        "CREATE (e:Entity {key: 'thing:acme', name: 'Acme'}) "
        "CREATE (c:Chunk {id: 'c2'}), (d:Chunk {id: 'c1'}) "
        "CREATE (cl:Claim {id: 'a', attribute: 'price', value: '$3', note_date: '2024-01-01'})-[:ABOUT]->(e) "
        "CREATE (c)-[:SUPPORTS]->(cl), (d)-[:SUPPORTS]->(cl) "
        "WITH cl UNWIND [['z', '2024-03-01', '$5'], ['y', '2024-01-01', '$4'], ['x', '2024-02-01', '$2']] AS r "
        "CREATE (cl)-[:CONFLICTS_WITH]->(:Claim {id: r[0], note_date: r[1], value: r[2]}) "
        "WITH DISTINCT cl UNWIND [['q', '2025-01-01'], ['p', '2024-06-01']] AS r "
        "CREATE (cl)-[:SUPERSEDED_BY]->(:Claim {id: r[0], note_date: r[1], value: r[0]})"
    )
    query = (
        "CALL () { MATCH (cl:Claim {id: 'a'})-[:ABOUT]->(e:Entity) WITH e.key AS k, e, cl, true AS asked, "
        "0.0 AS score " + cypher._TIMELINE + " AS rows } RETURN rows"
    )
    row = store.read(query)[0]["rows"][0]
    assert [x["value"] for x in row["conf"]] == ["$4", "$2", "$5"]  # by date
    assert [x["value"] for x in row["sup"]] == ["p", "q"] and row["chunk"] == "c1"


def test_a_first_build_fills_its_search_indexes_once_and_a_killed_one_is_repaired(
    store: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first build of BULK_NOTES notes or more writes into no full-text index and none of the range indexes its
    writes do not read, and fills them at its end, ranking exactly as a build that wrote into them; killed before
    its end, the next refresh recreates and fills them."""
    import kb.refresh as kb_refresh

    build(store, example_vault)
    written_into = keyword_scores(store)
    store.clear()
    monkeypatch.setattr(kb_refresh, "BULK_NOTES", 1)
    dropped: list[bool] = []
    real = Store.set_bulk_indexes

    def spy(self: Store, present: bool) -> None:
        dropped.append(present)
        real(self, present)

    monkeypatch.setattr(Store, "set_bulk_indexes", spy)
    fresh: list[bool] = []
    real_write = kb_refresh.write_batch

    def writes(*args: Any) -> int:
        fresh.append(args[4])  # chunks and passages created, not merged
        return real_write(*args)

    with monkeypatch.context() as m:
        m.setattr(kb_refresh, "write_batch", writes)
        build(store, example_vault)
    assert dropped == [False, True] and keyword_scores(store) == written_into
    assert fresh and all(fresh)

    store.clear()
    dropped.clear()

    calls: list[int] = []

    def killed(*args: Any, **kwargs: Any) -> int:
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt  # killed after the first batch of notes was written
        return real_write(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(kb_refresh, "write_batch", killed)
        m.setattr(kb_refresh, "BATCH_NOTES", 5)
        with pytest.raises(KeyboardInterrupt):
            build(store, example_vault)
    bulk = {"chunk_text", "passage_text", *cypher.BULK_UNUSED}
    assert dropped == [False] and not bulk & set(store.index_names())
    assert 0 < store.counts()["notes"] <= 5
    fresh.clear()
    with monkeypatch.context() as m:
        m.setattr(kb_refresh, "write_batch", writes)
        build(store, example_vault)  # not a first build: schema set-up recreates and fills them before the writes
    assert dropped == [False] and bulk <= set(store.index_names())
    assert fresh and not any(fresh)  # the killed run's notes are in the graph: merged
    assert keyword_scores(store) == written_into
