"""Cypher builders checked as strings: the parameters each one needs, and the guards they must keep."""

from __future__ import annotations

import re

import pytest

from kb import cypher

GRAPH_PARAMS = {
    "question",
    "as_of",
    "words",
    "pronouns",
    "chunk_ids",
    "seeds",
    "two_hops",
    "types",
    "asked",
    "qvec",
    "limit",
    "seed_limit",
    "per_entity",
    "others",
    "fetch",
    "private",
    "claim_chunk_ids",
    "claim_stems",
    "per_chunk",
    "claim_fetch",
}


def params(statement: str) -> set[str]:
    return set(re.findall(r"\$(\w+)", statement))


def test_graph_context_reads_only_known_parameters() -> None:
    with_vectors, without = cypher.graph_context(True), cypher.graph_context(False)
    assert params(with_vectors) <= GRAPH_PARAMS and params(without) <= GRAPH_PARAMS - {"fetch", "claim_fetch"}
    assert cypher.CLAIM_LINE_INDEX in with_vectors and cypher.CLAIM_LINE_INDEX not in without
    assert with_vectors.endswith("RETURN named, seeds, links, hops, asked + others AS claims, chunk_claims, owner")


def test_graph_context_never_passes_through_a_hub_and_hides_private_evidence() -> None:
    text = cypher.graph_context(True)
    assert "NOT m:HubEntity" in text  # two hops: a hub may end a path, never be its middle
    assert "$private OR size(coalesce(r.public_chunk_ids, [])) > 0" in text
    assert "ELSE r.public_evidence[..1]" in text and "$private OR NOT coalesce(cl.private, false)" in text


def test_graph_context_keeps_to_what_was_known_as_of_a_day() -> None:
    """Every claim and link read passes the as-of test ($as_of null: all of them)."""
    for text in (cypher.graph_context(True), cypher.graph_context(False)):
        assert text.count("coalesce(cl.valid_from, cl.note_date, '') <= $as_of") == 2  # the asked and the others
        assert "coalesce(r.first_seen, '') <= $as_of" in text and "coalesce(r2.first_seen, '') <= $as_of" in text


def test_claim_line_index_and_claim_edges() -> None:
    assert "`vector.dimensions`: 384" in cypher.claim_line_index(384)
    assert "[:SUPERSEDED_BY]" in cypher.create_claim_edges("SUPERSEDED_BY")
    with pytest.raises(ValueError, match="not a claim edge"):
        cypher.create_claim_edges("DETACH DELETE")


def test_index_plumbing_builders() -> None:
    assert cypher.await_indexes(3600) == "CALL db.awaitIndexes(3600)"
    assert cypher.index_names() == "SHOW INDEXES YIELD name RETURN name ORDER BY name"
    assert cypher.drop_index("a`b") == "DROP INDEX `a``b` IF EXISTS"


def test_the_bench_reads_the_public_vector_index_raw_and_every_public_vector() -> None:
    ids, props = cypher.vector_index_raw(props=False), cypher.vector_index_raw(props=True)
    for q in (ids, props):
        assert f"queryNodes('{cypher.PASSAGE_VECTOR_INDEX}', $candidates, $vec)" in q
        assert q.endswith("ORDER BY score DESC LIMIT $limit") and "similarity" not in q  # the index's own scores
    assert "elementId(c) AS e" in ids and "c.id AS passage" in props
    every = cypher.embedded_vectors()
    assert "p.embedding IS NOT NULL" in every and "embedding_private" not in every and every.endswith("ORDER BY p.id")


def test_the_vector_file_reads_only_public_vectors_and_one_meta_stamp() -> None:
    passages, chunks = cypher.public_vector_listing()
    for q in (passages, cypher.public_vectors(), cypher.visible_passage_hashes()):
        assert ".embedding IS NOT NULL" in q and "embedding_private" not in q and "private" not in q.split("WHERE")[0]
    assert "WHERE NOT coalesce(c.private, false)" in chunks and "embedding" not in chunks
    # collect() skips nulls: every collected value has a default, so the lists stay aligned
    args = [part[:12] for part in (passages + chunks).split("collect(")[1:]]
    assert args == [
        "p.id) AS ids",
        "coalesce(p.h",
        "c.id) AS ids",
        "coalesce(c.n",
        "coalesce(c.d",
        "coalesce(c.f",
        "reduce(s = '",
    ]
    assert "t IN coalesce(c.tags, [])" in chunks
    state = cypher.vector_state()
    assert "count(p) AS n" in state and "KbMeta {key: $key}" in state and "OPTIONAL MATCH" in state
    assert "p.hash AS hash" in cypher.visible_passage_hashes()
    assert cypher.drop_search_indexes() == cypher.drop_fulltext_indexes() + cypher.drop_vector_indexes()
    assert "p.hash AS hash" in cypher.pending_passages()  # the embedding step keys this run's vectors by hash


def test_boxed_reads_every_parameter_from_one_map_and_leaves_literals_alone() -> None:
    text = cypher.graph_context(True)
    boxed = cypher.boxed(text)
    assert params(boxed) == {cypher.BOXED}
    assert set(re.findall(r"\$p\.(\w+)", boxed)) == params(text)
    assert cypher.boxed("RETURN '$a' AS x, $b AS y, \"it\\\"s $c\" AS z, 'don\\'t $d' + $e") == (
        "RETURN '$a' AS x, $p.b AS y, \"it\\\"s $c\" AS z, 'don\\'t $d' + $p.e"
    )
    # the name-occurs regex keeps its escapes: only its parameters change
    assert cypher.boxed(cypher._OCCURS).replace("$p.", "$") == cypher._OCCURS
