"""The example vault, built into a real Neo4j, matches what examples/VAULT.md says it holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_config

from kb.progress import Bars
from kb.refresh import Summary, refresh
from kb.store import Store


@pytest.fixture
def built(store: Store, example_vault: Path) -> Summary:
    return refresh(store, make_config(example_vault, private_folders="Journal"), Bars(quiet=True))


def one(store: Store, query: str, **params: object) -> object:
    rows = store.read(query, **params)
    return rows[0][next(iter(rows[0]))] if rows else None


def test_counts(store: Store, built: Summary) -> None:
    assert len(built.added) == 26 and built.counts["notes"] == 26
    assert one(store, "MATCH (:Note)-[r:LINKS_TO]->(:Note) RETURN count(DISTINCT [startNode(r), endNode(r)])") >= 50
    assert one(store, "MATCH (:Note)-[r:ATTACHES]->(a:Attachment) RETURN count(r)") == 3
    # Inside a table Obsidian escapes the pipe: ![[Seed deck 2023.pdf\|deck]] is the file, not a missing note
    assert (
        one(store, "MATCH (:Note {path:'Journal/2023-02-14.md'})-[:ATTACHES]->(a) RETURN a.path")
        == "attachments/Seed deck 2023.pdf"
    )
    assert (
        one(
            store,
            "MATCH (:Note {path:'Journal/2023-02-14.md'})-[r:LINKS_TO {display: 'kickoff notes'}]->(t) RETURN t.path",
        )
        == "Company/Meetings/Kickoff.md"
    )
    assert (
        one(
            store,
            "MATCH (n:Note {path:'Archive/Untitled.md'}) OPTIONAL MATCH (c:Chunk)-[:IN_NOTE]->(n) RETURN count(c)",
        )
        == 0
    )
    tags = [r["n"] for r in store.read("MATCH (t:Tag) RETURN t.name AS n ORDER BY n")]
    assert len(tags) == 31 and "client/active" in tags and "threshold" not in tags and "1" not in tags


def test_missing_targets_and_the_alias_hint(built: Summary) -> None:
    missing = {m["name"]: m for m in built.missing}
    assert sorted(missing) == [
        "Hiring plan 2025",
        "Ledgerly",
        "Lisbon office",
        "Lumen Pay",
        "Sunita Rao",
        "Xero integration",
        "churn-chart.png",
    ]
    assert sum(m["links"] for m in built.missing) == 8
    assert missing["Ledgerly"]["alias_of"] == ["wiki/entities/Lumen Books.md"]
    assert missing["churn-chart.png"]["kind"] == "attachment"


def test_dates_duplicates_and_case(store: Store, built: Summary) -> None:
    dates = {
        r["p"]: (r["d"], r["s"])
        for r in store.read("MATCH (n:Note) RETURN n.path AS p, n.date AS d, n.date_source AS s")
    }
    assert dates["Company/Meetings/2023-05-02 Board call.md"] == ("2023-05-02", "file name")
    assert dates["Company/Decisions/Decision - rename Ledgerly to Lumen Books.md"][1] == "front matter created"
    assert dates["wiki/entities/PACE framework.md"][1] == "file mtime"
    assert one(store, "MATCH (n:Note {path:'Company/Metrics/Metrics dashboard.md'}) RETURN n.updated") == "2026-04-02"
    kick = store.read(
        "MATCH (s:Note)-[:LINKS_TO]->(t:Note) WHERE t.title = 'Kickoff' RETURN s.path AS s, t.path AS t ORDER BY s, t"
    )
    assert {"s": "People/Ingrid Solberg.md", "t": "Company/Meetings/Kickoff.md"} in kick
    assert {"s": "People/Mira Havel.md", "t": "Clients/Harrow Freight/Kickoff.md"} in kick
    assert (
        one(
            store,
            "MATCH (:Note {path:'People/Mira Havel.md'})-[:LINKS_TO]->"
            "(t:Note {path:'Clients/Harrow Freight/Harrow Freight.md'}) RETURN count(*)",
        )
        >= 1
    )


def test_bad_files_warn_and_are_kept(store: Store, built: Summary) -> None:
    warned = " ".join(built.warnings)
    assert "Company/Metrics/2024-06-30 Q2 investor update.md: malformed YAML" in warned
    assert "Archive/Old pricing page.md: not valid UTF-8" in warned
    assert [s["path"] for s in built.skipped] == ["Archive/.Investor letter draft.md.icloud"]
    assert (
        one(
            store,
            "MATCH (n:Note {path:'Company/Metrics/2024-06-30 Q2 investor update.md'})-[:LINKS_TO]->() RETURN count(*)",
        )
        == 4
    )
    crlf = one(store, "MATCH (c:Chunk)-[:IN_NOTE]->(:Note {path:'People/Tobias Reinholt.md'}) RETURN c.text")
    assert isinstance(crlf, str) and "\r" not in crlf


def test_private_notes_are_marked(store: Store, built: Summary) -> None:
    rows = store.read("MATCH (n:Note) WHERE n.private RETURN n.path AS p ORDER BY p")
    assert [r["p"] for r in rows] == ["Journal/2023-02-14.md", "Journal/2025-06-30.md"]
    assert one(store, "MATCH (c:Chunk) WHERE c.private RETURN count(c)") == 2


def test_long_note_is_chunked_with_breadcrumbs(store: Store, built: Summary) -> None:
    rows = store.read(
        "MATCH (c:Chunk)-[:IN_NOTE]->(:Note {path:'Company/Meetings/2024-11-08 Strategy offsite.md'}) "
        "RETURN c.breadcrumb AS b, c.tokens AS t ORDER BY c.ord"
    )
    assert len(rows) >= 4 and all(r["t"] <= 1000 for r in rows)
    assert all(r["b"].startswith("2024-11-08 Strategy offsite") for r in rows)
    assert (
        one(
            store,
            "MATCH (a:Chunk)-[:NEXT_CHUNK]->(b:Chunk)-[:IN_NOTE]->(:Note {path:"
            "'Company/Meetings/2024-11-08 Strategy offsite.md'}) RETURN count(*)",
        )
        == len(rows) - 1
    )
