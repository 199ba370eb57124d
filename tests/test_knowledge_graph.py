"""The knowledge layer of the example vault, built from its shipped (recorded) extraction, in a real Neo4j."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import shared_build
from graphdump import dump

from kb.cli import cli
from kb.store import Connection, KnowledgeStore, Store


def invoke(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    return dict(data) if result.output.strip().startswith("{") else {"rows": data}


@pytest.fixture
def built(kb_env: Path, example_vault: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("KB_VAULT", str(example_vault))
    return invoke("refresh")["knowledge"]


@pytest.fixture
def built_once(
    kb_env: Path, example_vault: Path, connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """The same layer as `built`, built once for consecutive tests that only read it (they take `reader`)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("KB_VAULT", str(example_vault))
    return shared_build(connection, "knowledge: example vault", lambda _: dict(invoke("refresh")["knowledge"]))


def one(store: Store, query: str) -> Any:
    rows = store.read(query)
    return rows[0][next(iter(rows[0]))]


def test_refresh_writes_the_layer_from_the_cache_alone(built_once: dict[str, Any], reader: Store) -> None:
    built, store = built_once, reader
    assert built["status"] == "built" and built["extracted"] == 0 and built["cached"] == 34
    assert built["counts"]["entities"] > 50 and built["counts"]["claims"] > 200
    assert {t["path"] for t in built["triage"]} == {
        "ChatGPT/2023-08-22 CSV import and matching rules.md",
        "ChatGPT/2025-01-20 Pricing options.md",
    }
    # every claim's quote is in the chunk that supports it; every relationship carries its evidence
    assert one(store, "MATCH (c:Chunk)-[:SUPPORTS]->(cl:Claim) WHERE NOT c.text CONTAINS cl.quote RETURN count(*)") == 0
    rel = store.read(
        "MATCH (:Entity {name: 'Ingrid Solberg'})-[r:INTRODUCED]->(t:Entity {name: 'Tobias Reinholt'}) "
        "RETURN t.name AS t, properties(r) AS p"
    )
    assert len(rel) == 1  # one relationship per pair and type, whatever order the others come in
    p = rel[0]["p"]
    assert p["count"] >= 1 and p["evidence"] and p["chunk_ids"] and p["first_seen"] and p["modalities"] == ["fact"]
    assert (
        one(store, "MATCH (:Entity)-[r]->(:Entity) WHERE r.evidence IS NULL OR size(r.evidence) > 5 RETURN count(r)")
        == 0
    )


@pytest.mark.usefixtures("built_once")
def test_identity_company_product_namesakes_and_alias(reader: Store) -> None:
    store = reader
    names = {r["n"]: r["t"] for r in store.read("MATCH (e:Entity) RETURN e.name AS n, e.type AS t")}
    assert names["Lumen Ledger Ltd"] == "Organization" and names["Lumen Books"] == "Product"
    assert names["Mira Havel"] == "Person" and names.get("Mira Castell") == "Person"
    assert "Ledgerly" not in names  # a former name, given as an alias of one product only
    merged = store.read("MATCH (e:Entity {name: 'Lumen Books'}) RETURN e.aliases AS a, e.merge_log AS log")[0]
    assert "Ledgerly" in merged["a"] and '"rule": "alias"' in merged["log"]


@pytest.mark.usefixtures("built_once")
def test_timeline_superseded_conflict_and_plan(reader: Store) -> None:
    store = reader
    conflict = store.read(
        "MATCH (a:Claim {attribute: 'customer_count'})-[:CONFLICTS_WITH]-(b:Claim) "
        "WHERE a.note_date = '2024-06-30' RETURN a.value AS a, b.value AS b ORDER BY a"
    )
    assert {(r["a"], r["b"]) for r in conflict} == {("212", "218"), ("218", "212")}
    current = store.read(
        "MATCH (cl:Claim {attribute: 'customer_count', is_current: true})-[:ABOUT]->"
        "(:Entity {name: 'Lumen Ledger Ltd'}) RETURN cl.value AS v"
    )
    assert [r["v"] for r in current] == ["341 (current)"]
    old = store.read(
        "MATCH (cl:Claim {attribute: 'customer_count', value: '289'})-[:SUPERSEDED_BY]->(n:Claim) "
        "RETURN DISTINCT n.value AS v"
    )
    assert [r["v"] for r in old] == ["318"]
    assert one(store, "MATCH (p:Claim {modality: 'plan'})-[:SUPERSEDED_BY|CONFLICTS_WITH]-() RETURN count(*)") == 0
    assert one(store, "MATCH (p:Claim {modality: 'plan'})-[:FOLLOWED_BY]->(f:Claim) RETURN count(*)") > 0


@pytest.mark.usefixtures("built_once")
def test_hubs_and_canonical_notes(reader: Store) -> None:
    store = reader
    hubs = {r["n"] for r in store.read("MATCH (e:HubEntity) RETURN e.name AS n")}
    assert "Lumen Ledger Ltd" in hubs and "Harrow Freight" not in hubs
    described = store.read("MATCH (e:Entity)-[:DESCRIBED_BY]->(n:Note) RETURN e.name AS e, n.path AS p ORDER BY e")
    assert {"e": "AutoMatch", "p": "wiki/entities/AutoMatch.md"} in described
    assert KnowledgeStore(store).owner() == {"key": "thing:lumen ledger", "name": "Lumen Ledger Ltd"}  # "we"


def test_entities_show_gives_the_timeline_current_first(built_once: dict[str, Any]) -> None:
    shown = invoke("entities", "show", "Lumen Ledger Ltd")
    counts = [r["claim"] for r in shown["claims"] if r["claim"]["attribute"] == "customer_count"]
    assert counts[0]["is_current"] and counts[0]["value"] == "341 (current)"
    result = CliRunner().invoke(cli, ["entities", "show", "HIS"])
    assert result.exit_code == 1 and "no entity named 'HIS'" in result.output


def test_an_override_wins(built: dict[str, Any], store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "overrides.yaml").write_text(
        "private_folders: [Journal]\nmerges_vetoed:\n  - [Ledgerly, Lumen Books]\n"
    )
    monkeypatch.setenv("KB_OVERRIDES", str(tmp_path / "overrides.yaml"))
    invoke("rebuild-entities")
    assert one(store, "MATCH (e:Entity {name: 'Ledgerly'}) RETURN count(e)") == 1
    log = invoke("entities", "merges")["rows"]
    assert any(r["rule"] == "vetoed" and "ledgerly" in r["from"] for r in log)


def test_rebuild_is_identical_under_two_hash_seeds(built: dict[str, Any], store: Store) -> None:
    dumps = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", "from kb.cli import main; main()", "rebuild-entities", "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        dumps.append(
            [
                line
                for line in dump(store)
                if '"Entity"' in line
                or '"Claim"' in line
                or "SUPPORTS" in line
                or "SUPERSEDED_BY" in line
                or "CONFLICTS_WITH" in line
                or "MENTIONS" in line
            ]
        )
    assert dumps[0] == dumps[1] and len(dumps[0]) > 500


def test_a_layer_deleted_but_not_rewritten_is_rewritten_next_run(built: dict[str, Any], store: Store) -> None:
    before = dump(store)
    KnowledgeStore(store).clear()  # as if a rebuild was killed right after deleting the old layer
    assert one(store, "MATCH (e:Entity) RETURN count(e)") == 0
    again = invoke("refresh")["knowledge"]
    assert again["rebuilt"] and again["counts"] == built["counts"]
    assert dump(store) == before


def test_a_rebuild_keeps_the_line_vectors_or_refuses(
    built: dict[str, Any], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rebuilt with the embedder that made the graph's vectors, every claim keeps its line vector; with another
    one configured, the rebuild stops with the fix instead of writing a layer without them."""
    lines = "MATCH (c:Claim) RETURN count(c.line_vec) = count(c) AND count(c) > 0 AS all_have"
    invoke("rebuild-entities")
    assert one(store, lines) is True
    monkeypatch.setenv("KB_EMBEDDER", "ollama:bge-m3")
    result = CliRunner().invoke(cli, ["rebuild-entities", "--json"])
    assert result.exit_code != 0 and "the vector index was built with onnx:" in result.output, result.output
    assert "KB_EMBEDDER" in result.output
    assert one(store, lines) is True  # nothing was rewritten
