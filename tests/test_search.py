"""Embeddings and hybrid search against a real Neo4j with the offline embedder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE_VAULT, make_config, shared_build

from kb.embed.onnx import OnnxEmbedder
from kb.embeddings import EmbedStep
from kb.errors import EmbedderError
from kb.progress import Bars
from kb.refresh import Summary, refresh
from kb.search.fusion import FUSION_PRESETS, FusionConfig
from kb.search.hybrid import Filters, fuse, fuse_passages, hybrid_search, lucene_query, per_chunk
from kb.store import Connection, SearchIndex, Store

EMB = OnnxEmbedder()


def build(store: Store, vault: Path, embedder: object = EMB, reembed: bool = False) -> Summary:
    return refresh(store, make_config(vault), Bars(quiet=True), EmbedStep(embedder, reembed=reembed))  # type: ignore[arg-type]


@pytest.fixture
def example_store(connection: Connection, reader: Store, tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The example vault's structure and vectors, built once for consecutive tests that only read it."""

    def make(st: Store) -> dict[str, Any]:
        vault = tmp_path_factory.mktemp("example") / "vault"
        shutil.copytree(EXAMPLE_VAULT, vault, symlinks=True)
        return dict(build(st, vault).to_json())

    shared_build(connection, "search: example vault", make)
    return reader


def paths(result: dict) -> list[str]:  # type: ignore[type-arg]
    return [r["path"] for r in result["results"]]


def search(store: Store, q: str, **kw: object) -> dict:  # type: ignore[type-arg]
    return hybrid_search(SearchIndex(store), EMB, q, **kw).to_json()  # type: ignore[arg-type]


def test_finds_the_right_notes(example_store: Store) -> None:
    store = example_store
    assert "People/Tobias Reinholt.md" in paths(search(store, "Who is the partner at Kestrel Capital?", k=3))
    hit = search(store, "AutoMatch match rate", k=5)["results"][0]
    assert hit["path"] == "wiki/entities/AutoMatch.md" and hit["date"] == "2023-11-20"
    assert hit["chunks"][0]["text"] and hit["keyword_rank"] and hit["vector_rank"]


def test_tag_and_date_filters(example_store: Store) -> None:
    store = example_store
    tagged = search(store, "customers", filters=Filters(tag="metric"))
    assert tagged["results"] and all(p.startswith("Company/Metrics/") for p in paths(tagged))
    dated = search(store, "pricing", filters=Filters(since="2025-01-01"))
    assert dated["results"] and all(r["chunks"][0]["date"] >= "2025-01-01" for r in dated["results"])


@pytest.mark.parametrize(
    "q",
    [
        '"unclosed',
        "price: per seat",
        "AutoMatch AND OR NOT",
        "*",
        "[x TO",
        "a\\b (",
        "~fuzzy^2 && || !",
        "/regex/",
        "?",
    ],
)
def test_hostile_lucene_is_escaped(example_store: Store, q: str) -> None:
    result = search(example_store, q, k=5)
    assert isinstance(result["results"], list)


def test_same_question_same_order(example_store: Store) -> None:
    store = example_store
    runs = [search(store, "what did the board say about hiring?") for _ in range(3)]
    assert len({json.dumps(r["results"], sort_keys=True) for r in runs}) == 1


def test_a_leg_of_weight_zero_is_not_run(example_store: Store) -> None:
    store = example_store
    kw = search(store, "AutoMatch match rate", k=5, fusion=FUSION_PRESETS["keyword"])
    vec = search(store, "AutoMatch match rate", k=5, fusion=FUSION_PRESETS["vector"])
    assert kw["results"] and all(r["vector_rank"] is None for r in kw["results"]) and kw["timing"]["vector_ms"] < 1
    assert vec["results"] and all(r["keyword_rank"] is None for r in vec["results"])


def test_filters_are_inside_the_index_query(store: Store, example_vault: Path) -> None:
    build(store, example_vault)
    flt = Filters(folder="Company")
    before = search(store, "pricing decision for client files", k=10, filters=flt)
    for i in range(60):
        (example_vault / "Zzz").mkdir(exist_ok=True)
        (example_vault / f"Zzz/pricing {i}.md").write_text(
            f"# Pricing decision {i}\nThe pricing decision for client files, per-client-file pricing again {i}."
        )
    build(store, example_vault)
    after = search(store, "pricing decision for client files", k=10, filters=flt)
    # the same notes, all in the folder; their order may move with the keyword scores' statistics (60 new notes
    # share the question's words), the vector leg's ranks may not
    assert sorted(paths(after)) == sorted(paths(before)) and all(p.startswith("Company/") for p in paths(after))
    assert {r["path"]: r["vector_rank"] for r in after["results"]} == {
        r["path"]: r["vector_rank"] for r in before["results"]
    }
    unfiltered = search(store, "pricing decision for client files", k=10)
    assert any(p.startswith("Zzz/") for p in paths(unfiltered))


def test_lucene_query_builder() -> None:
    assert lucene_query('What is "AutoMatch": AND *?') == "+search:(automatch) -privacy:kbprivate"
    assert lucene_query("???") is None
    q = lucene_query(
        "fees", Filters(folder="/Company/", tag="#Client/Active", since="2024-01-01", include_private=True)
    )
    assert q is not None and q.startswith("+search:(fees) +facets:kbf_") and "+facets:kbt_" in q
    assert q.endswith("+facets:[kbd_20240101 TO kbd_99991231]")


def test_private_notes_only_on_request(store: Store, example_vault: Path, tmp_path: Path) -> None:
    refresh(store, make_config(example_vault, private_folders="Journal"), Bars(quiet=True), EmbedStep(EMB))
    question = "Ingrid introduced Tobias over coffee"
    default = search(store, question, k=20)
    assert default["results"] and not any(p.startswith("Journal/") for p in paths(default))
    for flt in (Filters(), Filters(since="2020-01-01")):
        opted = search(store, question, k=20, filters=Filters(flt.folder, flt.tag, flt.since, include_private=True))
        assert any(p.startswith("Journal/") for p in paths(opted))
    count = "MATCH (c:Passage) WHERE c.private AND c.{} IS NOT NULL RETURN count(c) AS n"
    assert store.read(count.format("embedding"))[0]["n"] == 0
    assert store.read(count.format("embedding_private"))[0]["n"] > 0
    (tmp_path / "none.yaml").write_text("private_folders: []\n")
    public = make_config(example_vault, overrides=str(tmp_path / "none.yaml"))
    assert public.private_folders == ()
    refresh(store, public, Bars(quiet=True), EmbedStep(EMB), unmark_private=True)  # Journal made public: vectors move
    assert any(p.startswith("Journal/") for p in paths(search(store, question, k=20)))


def test_fusion_ties_break_on_id() -> None:
    hits = fuse(
        [{"id": "b", "path": "x"}, {"id": "a", "path": "y"}], [{"id": "a", "path": "y"}, {"id": "b", "path": "x"}]
    )
    assert [h.id for h in hits] == ["a", "b"] and hits[0].score == hits[1].score


class CountingEmbedder:
    """The offline embedder, counting texts and optionally failing after some batches."""

    model_name = EMB.model_name
    dimensions = EMB.dimensions
    identity = EMB.identity

    def __init__(self, fail_after: int | None = None) -> None:
        self.texts = 0
        self.calls = 0
        self.fail_after = fail_after

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise EmbedderError("stand-in failure")
        self.calls += 1
        self.texts += len(texts)
        return EMB.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return EMB.embed_query(text)


def test_only_changed_chunks_are_embedded_again(store: Store, example_vault: Path) -> None:
    first = CountingEmbedder()
    s = build(store, example_vault, first)
    assert first.texts == s.counts["passages"] == s.embedded > s.counts["chunks"]
    note = example_vault / "People/Jonas Ekberg.md"
    note.write_text(note.read_text() + "\nAdded a line.\n")
    second = CountingEmbedder()
    s = build(store, example_vault, second)
    assert s.changed == ["People/Jonas Ekberg.md"] and second.texts == 1
    shutil.move(example_vault / "People/Mira Havel.md", example_vault / "Clients/Mira Havel.md")
    third = CountingEmbedder()
    s = build(store, example_vault, third)
    moved = store.read("MATCH (p:Passage {note_path: 'Clients/Mira Havel.md'}) RETURN count(p) AS n")[0]["n"]
    assert s.added == ["Clients/Mira Havel.md"] and third.texts == moved > 0  # the path is part of what is embedded


def test_interrupted_embedding_resumes_without_paying_twice(
    store: Store, example_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kb.embeddings.BATCH", 4)
    broken = CountingEmbedder(fail_after=2)
    with pytest.raises(EmbedderError):
        build(store, example_vault, broken)
    assert store.counts()["pending"] == store.counts()["passages"] - 8
    rest = CountingEmbedder()
    build(store, example_vault, rest)
    assert broken.texts + rest.texts == store.counts()["passages"] and store.counts()["pending"] == 0


def test_embedder_mismatch_is_an_error_until_reembed(store: Store, example_vault: Path) -> None:
    build(store, example_vault)
    store.set_meta("embedder", {"identity": "ollama:bge-m3:1024", "dimensions": 1024})
    with pytest.raises(
        EmbedderError,
        match=r"built with ollama:bge-m3:1024 but the configured embedder is "
        r"onnx:all-MiniLM-L6-v2-int8:384:r2: run `kb refresh --reembed`",
    ):
        build(store, example_vault)
    s = build(store, example_vault, reembed=True)
    assert s.embedded == s.counts["passages"] and store.get_meta("embedder")["identity"] == EMB.identity


def test_each_leg_ranks_a_chunk_at_its_best_passage() -> None:
    kw = [
        {"id": "c1", "path": "a", "passage": "c1:2"},
        {"id": "c2", "path": "b", "passage": "c2:0"},
        {"id": "c1", "path": "a", "passage": "c1:0"},
    ]
    vec = [{"id": "c2", "path": "b", "passage": "c2:1"}, {"id": "c1", "path": "a", "passage": "c1:1"}]
    assert [r["passage"] for r in per_chunk(kw)] == ["c1:2", "c2:0"]
    hits = fuse_passages(kw, vec, FusionConfig(rrf_k=10))
    assert [(h.id, h.keyword_rank, h.vector_rank) for h in hits] == [("c1", 1, 2), ("c2", 2, 1)]
    assert hits[0].score == hits[1].score == 1 / 11 + 1 / 12
    weighted = fuse_passages(kw, vec, FusionConfig(rrf_k=10, keyword_weight=0.5))
    assert [h.id for h in weighted] == ["c2", "c1"]  # the vector leg now counts more
    by_passage = fuse_passages(kw, vec, FusionConfig(rrf_k=10, passage_fusion=True))
    assert [h.id for h in by_passage] == ["c1", "c2"] and by_passage[0].score == 1 / 11  # no passage in both legs
