"""Graph search, the router, paths and timelines on the example vault's knowledge layer (real Neo4j)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import example_graph

from kb.cli import cli
from kb.cli.search import why_lines
from kb.embed import line_floor
from kb.embed.ollama import OllamaEmbedder
from kb.embed.onnx import OnnxEmbedder
from kb.sandbox import PublicStore
from kb.search.current import as_of_rows
from kb.search.graph import (
    PRESETS,
    GraphConfig,
    _lines,
    _told_apart,
    _unrepeated,
    graph_search,
    implied_types,
    trim,
)
from kb.search.hybrid import Filters, hybrid_search
from kb.search.lines import Line
from kb.search.modes import HYBRID_PRIOR, run_search
from kb.search.question import parse
from kb.search.rerank import claim_when
from kb.search.results import ChunkResult, NoteResult
from kb.search.router import route
from kb.search.timeprior import by_time
from kb.server import ServerInfo
from kb.store import Connection, KnowledgeStore, SearchIndex, Store

EMB = OnnxEmbedder()
CHAIN = "Who introduced the investor that led the seed round?"


@pytest.fixture(scope="module")
def built(
    neo4j_server: ServerInfo, connection: Connection, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Store]:
    """Built once: every test here only reads the graph."""
    with example_graph(neo4j_server, connection, tmp_path_factory.mktemp("graph")) as store:
        yield store


def texts(result: dict[str, Any]) -> list[str]:
    return [line["text"] for line in result["graph"]["lines"]]


def test_graph_lines_answer_a_chain_with_citations(built: Store) -> None:
    opted = graph_search(
        SearchIndex(built), KnowledgeStore(built), EMB, CHAIN, filters=Filters(include_private=True)
    ).to_json()
    lines = texts(opted)
    assert "INTRODUCED" in opted["graph"]["implied_relationships"]
    assert any(
        "Ingrid Solberg -introduced-> Tobias Reinholt" in t and "[Journal/2023-02-14.md, 2023-02-14]" in t
        for t in lines
    )
    assert any("invested in" in t and "Kestrel" in t for t in lines)
    assert all(t.count("[") >= 1 for t in lines)  # every line cites a note and date
    assert [r["path"] for r in opted["results"]] == [
        r["path"]
        for r in run_search(built, EMB, CHAIN, "hybrid", filters=Filters(include_private=True)).to_json()["results"]
    ]  # ranking untouched


def test_private_evidence_stays_out_by_default(built: Store) -> None:
    for question in (CHAIN, "How has the number of customers changed over time?"):
        blob = json.dumps(graph_search(SearchIndex(built), KnowledgeStore(built), EMB, question).to_json())
        assert "over dessert" not in blob and "Journal/" not in blob


def test_current_value_first_and_superseded_marked(built: Store) -> None:
    result = graph_search(
        SearchIndex(built), KnowledgeStore(built), EMB, "How has Lumen Ledger's customer count changed over time?"
    ).to_json()
    claims = [t for t in texts(result) if "customer_count" in t]
    assert claims and "CURRENT" in claims[0] and "341" in claims[0]
    assert any("superseded by" in t for t in claims)
    assert any("CONFLICTS with" in t for t in claims)


def test_deterministic_and_trim_measured(built: Store) -> None:
    runs = [
        graph_search(
            SearchIndex(built), KnowledgeStore(built), EMB, "What did the Lisbon office plan lead to?"
        ).to_json()
        for _ in range(2)
    ]
    strip = [{k: v for k, v in r.items() if k != "timing"} for r in runs]
    assert json.dumps(strip[0], sort_keys=True) == json.dumps(strip[1], sort_keys=True)
    untrimmed = graph_search(
        SearchIndex(built), KnowledgeStore(built), EMB, "What did the Lisbon office plan lead to?", PRESETS["no-trim"]
    ).to_json()
    assert runs[0]["graph"]["dropped_by_trim"] > 0 and untrimmed["graph"]["dropped_by_trim"] == 0
    assert runs[0]["graph"]["tokens"] <= 0.4 * 8000


def test_lines_below_the_floor_are_dropped_but_named_links_stay() -> None:
    def line(text: str, sim: float | None, kind: str = "claim", pinned: bool = False) -> Line:
        return Line(kind, text, "A.md", "2024-01-01", pinned, sim=sim)

    lines = [
        line("named link, far", 0.50, "link", pinned=True),
        line("asked timeline, far", 0.55, pinned=True),
        line("asked timeline, near", 0.70, pinned=True),
        line("seed link, far", 0.59, "link"),
        line("claim, near", 0.66),
        line("claim without a vector", None),
    ]
    kept, dropped = trim(lines, True, GraphConfig(), floor=0.60)
    assert [ln.text for ln in kept] == [
        "named link, far",
        "asked timeline, near",
        "claim, near",
    ]
    assert dropped == 3
    assert len(trim(lines, True, GraphConfig())[0]) == 5  # no floor: only the line without a vector is trimmed
    assert len(trim(lines, True, PRESETS["no-trim"], floor=0.60)[0]) == 6


def test_line_floor_is_the_embedders_measured_one() -> None:
    assert line_floor(EMB) == 0.60
    assert line_floor(OllamaEmbedder("bge-m3", "http://127.0.0.1:9")) == 0.0  # not measured: no floor
    assert line_floor(None) == 0.0


def test_line_floor_applies_only_to_a_language_the_embedder_reads(built: Store) -> None:
    """An English-trained model's similarities for a German question are all low: its lines are not floored."""
    german = "Wer hat den Investor vorgestellt, der die Seed-Runde angeführt hat?"
    args = (SearchIndex(built), KnowledgeStore(built), EMB, german)
    high = graph_search(*args, replace(GraphConfig(), line_floor=0.99)).to_json()
    none = graph_search(*args, replace(GraphConfig(), line_floor=0.0)).to_json()
    assert texts(high) and texts(high) == texts(none)
    english = (SearchIndex(built), KnowledgeStore(built), EMB, "What did the Lisbon office plan lead to?")
    floored = graph_search(*english, replace(GraphConfig(), line_floor=0.99)).to_json()
    free = graph_search(*english, replace(GraphConfig(), line_floor=0.0)).to_json()
    assert texts(free) and len(texts(floored)) < len(texts(free))
    assert graph_search(*english).to_json()["graph"]["config"]["line_floor"] == 0.60


def test_router_rules() -> None:
    assert route("How has our MRR changed since 2023?")[0] == "graph"
    assert route("Who introduced us to Kestrel?")[0] == "graph"
    assert route("Was the Lisbon office planned or did it actually open?")[0] == "graph"
    assert route("What does AutoMatch do?") == (
        "hybrid",
        "a single fact, roll-up, theme or paraphrase: hybrid search answers it",
    )
    assert implied_types("which clients use AutoMatch?") == ["CLIENT_OF", "USES"]


def _note(path: str, chunk: str, tokens: int) -> NoteResult:
    return NoteResult(1, path, None, None, 1.0, 1, 1, (ChunkResult(chunk, None, None, "text", tokens, 1.0, 1, 1),))


def test_lines_the_context_already_tells_are_dropped() -> None:
    results = [_note("A.md", "a1", 1000), _note("Big.md", "b1", 9000)]  # Big.md's chunk falls outside the room

    def line(text: str, path: str, chunk: str, pinned: bool = False, order: int = 2) -> Line:
        return Line("claim", text, path, "2024-01-01", pinned, order, chunk=chunk)

    lines = [
        line("own chunk read", "A.md", "a1"),
        line("other chunk of a read note", "A.md", "a2"),
        line("unread note", "B.md", "c1"),
        line("note beyond the room", "Big.md", "b1"),
        line("X v = 1 (CURRENT)", "A.md", "a1", pinned=True, order=0),
        line("X v = 1 (CURRENT); CONFLICTS with 2 [C.md, same date]", "A.md", "a1", pinned=True, order=0),
        line("X v = 0 (was); superseded by 1 as of 2024", "A.md", "a1", pinned=True),
        line("Y v = 3 (CURRENT)", "A.md", "a2", pinned=True, order=0),
    ]
    kept, dropped = _unrepeated(lines, results, GraphConfig())
    assert [ln.text for ln in kept] == [
        "unread note",
        "note beyond the room",
        "X v = 1 (CURRENT); CONFLICTS with 2 [C.md, same date]",
        "X v = 0 (was); superseded by 1 as of 2024",
        "Y v = 3 (CURRENT)",
    ]
    assert dropped == 3
    whole = _unrepeated(lines, results, GraphConfig(), whole_timelines=True)[0]  # a change question's timelines
    assert [ln.text for ln in lines if ln not in whole] == ["own chunk read", "other chunk of a read note"]
    table = [replace(ln, timeline="X\x00v") if ln.text.startswith("X v") else ln for ln in lines]
    # a1 states two values of X's v: the line that says which one is current stays
    assert "X v = 1 (CURRENT)" in [ln.text for ln in _unrepeated(table, results, GraphConfig(), _told_apart(table))[0]]
    assert _told_apart(table) == {("X\x00v", "a1")}
    before = _unrepeated(lines, results, GraphConfig(read_notes=False, read_current=False))[0]
    assert [ln.text for ln in lines if ln not in before] == ["own chunk read"]


def test_path_and_timeline_commands(built: Store) -> None:
    runner = CliRunner()
    path = runner.invoke(cli, ["path", "Ingrid Solberg", "Harrow Freight", "--json"])
    assert path.exit_code == 0, path.output
    data = json.loads(path.output)
    hubs = {r["n"] for r in built.read("MATCH (e:HubEntity) RETURN e.name AS n")}
    assert data["names"][0] == "Ingrid Solberg" and data["names"][-1] == "Harrow Freight"
    assert len(data["steps"]) <= 4 and not set(data["names"][1:-1]) & hubs
    assert all(s["evidence"] and s["source"].get("path") for s in data["steps"])
    then = runner.invoke(cli, ["timeline", "Lumen Ledger Ltd", "customer_count", "--as-of", "2024-12-31", "--json"])
    rows = json.loads(then.output)["claims"]
    assert rows[0]["is_current"] and rows[0]["value"] == "247"
    now = json.loads(runner.invoke(cli, ["timeline", "Lumen Ledger Ltd", "customer_count", "--json"]).output)
    assert now["claims"][0]["value"] == "341 (current)"


def test_search_cli_auto_says_why(built: Store) -> None:
    result = CliRunner().invoke(cli, ["search", CHAIN, "--mode", "auto", "--json"])
    data = json.loads(result.output)
    assert data["mode"] == "graph" and data["router"]["reason"].startswith("introductions")


def test_notes_with_the_current_value_go_first(built: Store) -> None:
    question = "How many customers does Lumen Ledger have these days?"
    private = Filters(include_private=True)
    graph = graph_search(SearchIndex(built), KnowledgeStore(built), EMB, question, filters=private).to_json()
    plain = graph_search(
        SearchIndex(built), KnowledgeStore(built), EMB, question, PRESETS["no-promote"], private
    ).to_json()
    # the fused order, before hybrid mode's own time prior
    hybrid = run_search(built, EMB, question, "hybrid", filters=private, hybrid_prior=None).to_json()
    assert [r["path"] for r in plain["results"]] == [r["path"] for r in hybrid["results"]]
    top = graph["results"][0]
    assert top["promoted"] == "states the current value" and top["rank"] == 1
    current = [t for t in texts(graph) if "customer_count = 341" in t and "(CURRENT" in t]
    assert current and f"[{top['path']}," in " ".join(current), (top["path"], current)
    assert [r["rank"] for r in graph["results"]] == list(range(1, len(graph["results"]) + 1))
    assert len(graph["results"]) == len(hybrid["results"])


def test_a_change_question_keeps_hybrids_order_and_gets_the_whole_timeline(built: Store) -> None:
    """How something changed: the timeline in the lines is the answer; no note is moved to the top for it."""
    question = "How has Lumen Ledger's customer count changed over time?"
    private = Filters(include_private=True)
    graph = graph_search(SearchIndex(built), KnowledgeStore(built), EMB, question, filters=private).to_json()
    hybrid = run_search(built, EMB, question, "hybrid", filters=private).to_json()
    assert graph["question"]["intent"] == "change"
    assert [r["path"] for r in graph["results"]] == [r["path"] for r in hybrid["results"]]
    assert not graph["graph"]["reranked"] and not any(r.get("promoted") for r in graph["results"])
    assert any("hybrid's order kept" in rule for rule in graph["question"]["rules"])
    timeline = [t for t in texts(graph) if "customer_count" in t]
    assert any("(CURRENT" in t for t in timeline) and any("superseded by" in t for t in timeline)
    as_of = graph_search(
        SearchIndex(built), KnowledgeStore(built), EMB, question, filters=private, as_of="2026-12-01"
    ).to_json()
    assert as_of["results"][0].get("promoted")  # as of a day, the value current then still comes first


def test_the_chunks_claims_come_in_the_same_read(built: Store) -> None:
    """graph_context also returns what re-ranking reads of the given chunks' claims; given none, none."""
    question = "How many customers does Lumen Ledger have?"
    private = Filters(include_private=True)
    hits = hybrid_search(SearchIndex(built), EMB, question, filters=private)
    ids = sorted({c.id for r in hits.notes for c in r.chunks})
    stems = ["customer", "ledger", "lumen", "many"]

    def read(chunks: list[str]) -> list[dict[str, Any]]:
        ks = KnowledgeStore(built)
        args = (question, "lumen ledger customers", [], [], 0, False, [], stems, EMB.embed_query(question))
        return ks.graph_context(*args, 5, 5, 10, 10, True, chunks, stems, 3)["chunk_claims"]

    rows = read(ids)
    assert rows and {r["chunk"] for r in rows} <= set(ids)
    assert [r["chunk"] for r in rows] == sorted(r["chunk"] for r in rows)
    assert any(r["claim"]["attribute"] == "customer_count" and r["entry"] for r in rows)
    assert read([]) == []


def test_as_of_fetches_the_claims_known_that_day(built: Store) -> None:
    """With --as-of the statement keeps to claims known that day before it picks the newest or nearest: picking
    first and leaving later claims out afterwards left an early day with none of its values."""
    question = "How many customers does Lumen Ledger have?"
    ks = KnowledgeStore(built)
    stems = ["customer", "count"]
    args = (question, "lumen ledger customers", [], [], 0, False, [], stems, EMB.embed_query(question), 5, 5)

    def claims(as_of: str | None) -> list[dict[str, Any]]:
        """The claims of the attribute asked for (customer count), two per entity."""
        return [r for r in ks.graph_context(*args, 2, 2, True, as_of=as_of)["claims"] if r["asked"]]

    day = "2023-12-31"
    newest = claims(None)
    assert newest and not as_of_rows(newest, day)  # the newest two are later: read afterwards, nothing is left
    known = claims(day)
    assert known and all(claim_when(r["claim"]) <= day and r["claim"]["note_date"] <= day for r in known)
    assert any(r["claim"]["attribute"] == "customer_count" and "133" in str(r["claim"]["value"]) for r in known)


def test_read_maps_returns_what_read_does(built: Store) -> None:
    """For a statement of maps, lists and values, the records as decoded equal data()'s copies."""
    statement = (
        "MATCH (e:Entity) WITH e ORDER BY e.key LIMIT 5 "
        "RETURN e.key AS key, {name: e.name, aliases: e.aliases, n: [1, 2.5, null]} AS m"
    )
    rows = built.read(statement)
    assert len(rows) == 5 and built.read_maps(statement) == rows


def test_a_named_year_asks_for_the_value_then(built: Store) -> None:
    result = graph_search(
        SearchIndex(built),
        KnowledgeStore(built),
        EMB,
        "How many customers did Lumen Ledger have in 2023?",
        filters=Filters(include_private=True),
    ).to_json()
    promoted = [r for r in result["results"] if r.get("promoted")]
    assert promoted and all(r["promoted"] == "states the value as of 2023-12-31" for r in promoted)
    assert result["results"][0] is promoted[0]
    assert "| 2023-12-31 | 133 |" in " ".join(c["text"] for c in promoted[0]["chunks"])  # the 2023 year-end row


def test_as_of_and_current_through_the_cli(built: Store) -> None:
    ask = ["search", "How many customers does Lumen Ledger have?", "--include-private", "--json"]
    then = json.loads(CliRunner().invoke(cli, ask + ["--mode", "auto", "--as-of", "2023-12-31"]).output)
    assert then["router"] == {"mode": "graph", "reason": "claims as of a date", "rules": ["intent value (en rule)"]}
    assert then["question"]["as_of"] == "2023-12-31"
    assert all(c["date"] is None or c["date"] <= "2023-12-31" for r in then["results"] for c in r["chunks"])
    lines = texts(then)
    assert any("customer_count = 133" in t and "(CURRENT" in t for t in lines), lines  # the value that day
    assert not any("customer_count = 341" in t for t in lines)  # not yet written
    now = json.loads(CliRunner().invoke(cli, ask + ["--mode", "graph", "--current"]).output)
    assert now["question"]["current_only"] and texts(now)
    assert not any(" (was" in t or "superseded by" in t for t in texts(now)), texts(now)
    shown = CliRunner().invoke(
        cli,
        ["search", "How many customers did Lumen Ledger have last year?", "--mode", "graph", "--as-of", "2024-06-30"],
    )
    assert "read 'last year' as 2023-01-01..2023-12-31" in shown.output, shown.output
    bad = CliRunner().invoke(cli, ask + ["--as-of", "2023-31-12"])
    assert bad.exit_code != 0 and "--as-of '2023-31-12' is not a date: use YYYY-MM-DD" in bad.output


def test_a_language_the_rules_do_not_read_keeps_hybrid_order(built: Store) -> None:
    question = "Quantos clientes tem a Lumen Ledger hoje?"  # Portuguese: no intent is read
    private = Filters(include_private=True)
    graph = graph_search(SearchIndex(built), KnowledgeStore(built), EMB, question, filters=private).to_json()
    hybrid = run_search(built, EMB, question, "hybrid", filters=private).to_json()
    assert graph["question"]["language"] is None and graph["question"]["intent"] == "other"
    assert [r["path"] for r in graph["results"]] == [r["path"] for r in hybrid["results"]]
    assert graph["graph"]["reranked"] == [] and texts(graph)  # nothing moved, graph lines still added


def test_we_reads_as_the_vaults_owner_for_a_value(built: Store) -> None:
    """A value question that says "we" and names no entity asks about the owner (the entity most claims are
    about): its outdated counts go below the current one; for "now" the owner lifts nothing (for a named period
    it does), and a did-it-happen question is not read that way."""
    ks, index, private = KnowledgeStore(built), SearchIndex(built), Filters(include_private=True)
    result = graph_search(index, ks, EMB, "How many customers do we have now?", filters=private).to_json()
    assert "'we' read as Lumen Ledger Ltd, the entity most claims are about" in result["question"]["rules"]
    demoted = [r for r in result["results"] if r.get("demoted") and not r["path"].startswith("ChatGPT/")]
    assert demoted and all("customer_count" in r["demoted"] for r in demoted)
    chats = [r for r in result["results"] if r["path"].startswith("ChatGPT/") and r.get("demoted")]
    assert all("a saved AI chat" in r["demoted"] for r in chats)  # what the AI was told is not the record
    assert not any(r.get("promoted") for r in result["results"])
    assert result["results"][0]["path"] == "Company/Metrics/Metrics dashboard.md"
    # each note whose claims were read says how: the demoted ones as outdated, with the claim that decided it
    readings = {r["path"]: (r.get("standing"), r.get("standing_claim")) for r in result["results"]}
    assert all(readings[r["path"]][0] == "outdated" and "(as of " in readings[r["path"]][1] for r in demoted)
    assert any(standing == "states" for standing, _ in readings.values())
    assert {s for s, _ in readings.values()} <= {"states", "outdated", "not_fact", "none", None}
    happened = graph_search(index, ks, EMB, "Did we ever open an office in Berlin?", filters=private).to_json()
    assert not any("read as" in r for r in happened["question"]["rules"])
    # for a value in a named period the owner's timeline does lift the note stating it, with its chunk
    dated = graph_search(index, ks, EMB, "How many customers did we have at the end of 2023?", filters=private)
    top = dated.to_json()["results"][0]
    assert top["promoted"] == "states the value as of 2023-12-31"
    assert "| 2023-12-31 | 133 |" in " ".join(c["text"] for c in top["chunks"])
    assert all(r.standing == "states" for r in dated.notes if r.promoted)  # a lifted note reads as stating it
    asked = "How many customers did we have at the end of 2023?"
    text = CliRunner().invoke(cli, ["search", asked, "--mode", "graph", "--include-private"]).output
    read = [line.strip() for line in text.splitlines() if line.strip().startswith("(claims read: ")]
    assert "(claims read: states it, customer_count = 133 (as of 2023-12-31))" in read
    assert "(claims read: outdated, customer_count = 212 (as of 2024-06-30))" in read
    # a note lifted by a claim its chunks' nearest claims do not hold: said without a claim, never "None"
    lifted = replace(dated.notes[0], standing_claim=None)
    assert why_lines(lifted) == ["(promoted: states the value as of 2023-12-31)", "(claims read: states it)"]
    assert why_lines(replace(lifted, promoted=None, demoted="outdated claims (x = 1)", standing="outdated")) == [
        "(demoted: outdated claims (x = 1))"
    ]


def test_the_configured_ai_chat_folders_reach_graph_search(built: Store) -> None:
    """kb search reads ai_chat_folders from the config (the re-ranking's saved-chat rule); run_search takes them."""
    result = run_search(built, EMB, CHAIN, "graph", ai_chat_folders=("Chats", "Claude")).to_json()
    assert result["graph"]["config"]["ai_chat_folders"] == ("Chats", "Claude")
    config = Path(os.environ["KB_HOME"]) / "config.toml"
    before = config.read_text(encoding="utf-8") if config.exists() else None
    try:
        config.write_text((before or "") + '\nai_chat_folders = ["Claude chats"]\n', encoding="utf-8")
        out = CliRunner().invoke(cli, ["search", CHAIN, "--mode", "graph", "--json"])
        assert json.loads(out.output)["graph"]["config"]["ai_chat_folders"] == ["Claude chats"], out.output
    finally:
        if before is None:
            config.unlink()
        else:
            config.write_text(before, encoding="utf-8")


def test_graph_search_takes_its_vector_languages_from_the_embedder(built: Store) -> None:
    """The offline model reads English only: a German question is matched by stems (shown in the config)."""
    result = graph_search(SearchIndex(built), KnowledgeStore(built), EMB, "Wie viele Kunden hat Lumen Ledger?")
    assert result.to_json()["graph"]["config"]["vector_languages"] == ("en",)
    chosen = graph_search(
        SearchIndex(built), KnowledgeStore(built), EMB, CHAIN, replace(GraphConfig(), vector_languages=("de",))
    )
    assert chosen.to_json()["graph"]["config"]["vector_languages"] == ("de",)  # a preset may set them


def test_graph_search_orders_a_state_questions_first_notes_by_time(built: Store) -> None:
    """The time order runs on every graph search of a state question (said in the rules); `no-time` leaves it out,
    and a question asking no time is not re-ordered."""
    ks, index, private = KnowledgeStore(built), SearchIndex(built), Filters(include_private=True)
    question = "How many customers do we have now?"
    timed = graph_search(index, ks, EMB, question, filters=private)
    plain = graph_search(index, ks, EMB, question, PRESETS["no-time"], filters=private)
    assert "time: newer notes first" in timed.question.rules
    assert not any(r.startswith("time:") for r in plain.question.rules)
    dated = graph_search(index, ks, EMB, "How many customers did we have at the end of 2023?", filters=private)
    assert "time: notes written in 2023-12-01..2023-12-31, then just after it, first" in dated.question.rules
    why = graph_search(index, ks, EMB, "Why did we raise the price?", filters=private)
    assert not any(r.startswith("time:") for r in why.question.rules)
    # the time order only re-orders the first ten notes: the same ten lead either way
    assert sorted(n.path for n in timed.notes[:10]) == sorted(n.path for n in plain.notes[:10])


def test_hybrid_mode_orders_by_time_only_a_question_that_names_its_time(built: Store) -> None:
    """Hybrid search re-orders its first notes by date for a question about now or a named period, and keeps the
    fused order for one that names no time, whether something happened among them."""
    private, moved = Filters(include_private=True), []
    for question, reading in (
        ("How many customers do we have now?", "time: newer notes first"),
        ("How many customers did we have at the end of 2023?", "time: notes written in 2023-12-01..2023-12-31"),
    ):
        timed = run_search(built, EMB, question, "hybrid", filters=private, today=dt.date(2026, 12, 1))
        fused = run_search(built, EMB, question, "hybrid", filters=private, hybrid_prior=None)
        q = parse(question, dt.date(2026, 12, 1))
        assert [n.path for n in timed.notes] == [n.path for n in by_time(fused.notes, q, None, HYBRID_PRIOR)]
        assert [n.rank for n in timed.notes] == list(range(1, len(timed.notes) + 1))
        assert timed.question is not None and any(r.startswith(reading) for r in timed.question.rules)
        moved.append([n.path for n in timed.notes] != [n.path for n in fused.notes])
    assert any(moved)  # the prior moved notes of the example vault
    for question in ("Did Lumen Ledger ever open an office in Lisbon?", "Why did we raise the price?"):
        kept = run_search(built, EMB, question, "hybrid", filters=private)
        fused = run_search(built, EMB, question, "hybrid", filters=private, hybrid_prior=None)
        assert [n.path for n in kept.notes] == [n.path for n in fused.notes]
        assert kept.question is not None and not any(r.startswith("time:") for r in kept.question.rules)


def test_hybrid_mode_keeps_the_fused_order_for_how_something_changed_unless_as_of(built: Store) -> None:
    """A change question that says "now" keeps hybrid's fused order and says why; with --as-of its notes are
    read in time as any other question's."""
    private, question = Filters(include_private=True), "How has our seat price changed from launch to now?"
    assert parse(question, dt.date(2026, 12, 1)).intent == "change"
    kept = run_search(built, EMB, question, "hybrid", filters=private, today=dt.date(2026, 12, 1))
    fused = run_search(built, EMB, question, "hybrid", filters=private, hybrid_prior=None)
    assert [n.path for n in kept.notes] == [n.path for n in fused.notes]
    assert kept.question is not None and "time: how it changed, fused order kept" in kept.question.rules
    dated = run_search(built, EMB, question, "hybrid", filters=private, as_of="2026-12-01")
    assert dated.question is not None and "time: newer notes first (up to 2026-12-01)" in dated.question.rules


def test_graph_search_embeds_the_question_once_beside_the_full_text_legs(built: Store) -> None:
    """Graph search takes the question's vector from hybrid's legs (embedded while the full-text queries run,
    not before them) and scores its lines with that same vector."""
    calls: list[str] = []

    class Counting:
        model_name = EMB.model_name
        dimensions = EMB.dimensions
        identity = EMB.identity

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return EMB.embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            calls.append(text)
            return EMB.embed_query(text)

    res = graph_search(
        SearchIndex(built), KnowledgeStore(built), Counting(), CHAIN, filters=Filters(include_private=True)
    )
    assert calls == [CHAIN]
    assert res.timing["embed_ms"] > 0  # measured inside hybrid's legs: before, the vector came in ready (0 ms)
    assert res.graph is not None and res.graph.lines and all(line.sim is not None for line in res.graph.lines)
    plain = graph_search(SearchIndex(built), KnowledgeStore(built), EMB, CHAIN, filters=Filters(include_private=True))
    assert [line.text for line in res.graph.lines] == [line.text for line in plain.graph.lines]  # type: ignore[union-attr]


def test_the_warm_up_sends_every_statement_a_search_sends(built: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kb db start` and the MCP server plan the search statements before the first question (kb.search.warm):
    without loading a model, the warm-up sends every read statement that searches of several shapes send."""
    from kb.search.warm import stand_in, warm_searches

    sent: list[str] = []
    for name in ("read", "read_maps"):
        real = getattr(built, name)
        monkeypatch.setattr(
            built, name, lambda statement, _real=real, **params: sent.append(statement) or _real(statement, **params)
        )
    assert stand_in(built) is not None and stand_in(built).identity == EMB.identity  # type: ignore[union-attr]
    took = warm_searches(built)
    assert took is not None and took.seconds > 0 and took.searches > 1  # planned, then warmed on the vault's words
    warmed = set(sent)
    sent.clear()
    for question in ("What does Lumen Ledger charge now?", "Did we ever launch the mobile app?", CHAIN):
        for mode in ("hybrid", "graph", "auto"):
            run_search(built, EMB, question, mode=mode)
    assert set(sent) - warmed == set()
    assert len(warmed) >= 5


def test_the_warm_up_searches_the_vaults_own_words_within_its_count_and_budget(built: Store) -> None:
    """After the planning search, the warm-up runs searches on phrases of the vault's first chunks (a cold server
    is slow until it has served a while: kb.search.warm), at most `count`, and none once `budget_s` is spent."""
    from kb.search import warm

    asked: list[str] = []
    vectors: list[list[float]] = []
    real = warm.run_search

    def counted(store: Store, embedder: object, question: str, **kw: object) -> object:
        asked.append(question)
        if isinstance(embedder, warm.FixedVector):
            vectors.append(embedder.embed_query(question))
        return real(store, embedder, question, **kw)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(warm, "run_search", counted)
        warmed = warm.warm_searches(built, count=5)
        assert warmed is not None and warmed.searches == 6
        assert asked[0] == warm.WARM_QUESTION and len(set(asked[1:])) == 5
        first = [r["text"] for r in built.read("MATCH (c:Chunk) RETURN c.text AS text ORDER BY c.id LIMIT 5")]
        words = {w for t in first for w in t.split()}
        assert all(set(p.split()) <= words for p in asked[1:])  # the vault's own words
        # every search runs its vector leg, each with a vector of its own (more of the graph read before a question)
        assert len(vectors) == len(asked) and len({tuple(v) for v in vectors}) == len(set(asked))
        asked.clear()
        spent = warm.warm_searches(built, count=5, budget_s=0)
        assert spent is not None and spent.searches == 1 and len(asked) == 1
    stand = warm.stand_in(built)
    assert stand is not None
    one, again, other = (stand.embed_query(t) for t in ("alpha beta", "alpha beta", "gamma delta"))
    assert one == again != other and len(one) == EMB.dimensions
    assert abs(sum(x * x for x in one) - 1.0) < 1e-9
    assert warm.phrases(["one two three four five six seven eight", "", "12 34", "alpha beta"], words=3) == [
        "one two three",
        "alpha beta",
    ]
    row = {"folder": "Clients/Acme", "tags": ["deal/won"]}
    shapes = [warm.variant(i, row) for i in range(12)]
    assert {m for m, _ in shapes} == {"hybrid", "graph"}
    assert {(f.folder, f.tag, f.since) for _, f in shapes} == {
        (None, None, None),
        ("Clients", None, None),
        (None, "deal/won", None),
        (None, None, warm.SINCE),
    }
    assert warm.variant(3, {"folder": "", "tags": []})[1] == warm.Filters()  # nothing to filter by: plain


def test_db_start_and_the_mcp_server_warm_up_and_a_failed_warm_up_only_warns(built: Store, tmp_path: Path) -> None:
    """`kb db start` plans the searches on a graph holding a vault, and says why when it could not (the server
    runs all the same); the MCP server's warm-up connects and loads the embedder before the first call."""
    from kb.cli.db import _plan_searches
    from kb.config import load_config
    from kb.mcp_server import KbTools

    planned = _plan_searches(load_config())
    # the example graph, through the CLI's config
    assert planned["searches_planned_s"] >= 0 and planned["warm_searches"] > 1
    unreachable = load_config(home=tmp_path, env={"NEO4J_URI": "bolt://127.0.0.1:1", "NEO4J_PASSWORD": "x"})
    assert "cannot reach Neo4j" in _plan_searches(unreachable)["searches_not_planned"]
    tools = KbTools(load_config())
    spans: list[tuple[float, float]] = []
    real_view = PublicStore.view

    @contextlib.contextmanager
    def timed_view(self: PublicStore) -> Iterator[Any]:
        outer = getattr(self._local, "tx", None) is None
        t0 = time.perf_counter()
        with real_view(self) as tx:
            yield tx
        if outer:
            spans.append((t0, time.perf_counter()))

    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(PublicStore, "view", timed_view)
            tools.warm()
        assert tools._store is not None and tools._embedder is not None
        # one short view a search (the view's locks on private material held for one search, not the warm-up)
        whole = spans[-1][1] - spans[0][0]
        assert len(spans) > 2 and max(b - a for a, b in spans) < whole / 2
    finally:
        tools.close()
    broken = KbTools(unreachable)
    broken.warm()  # the first call reports the failure, not the warm-up thread
    assert broken._store is None


def test_a_chain_question_starts_from_more_of_the_top_notes_entities(built: Store) -> None:
    """Lines start from 4 of the top notes' entities (more left the chunks holding the answer out of the budget);
    a question naming a relationship ("who introduced") starts from 8: its answer is a line."""
    cfg = GraphConfig()
    index, ks, private = SearchIndex(built), KnowledgeStore(built), Filters(include_private=True)

    def seeded(question: str) -> int:
        report = graph_search(index, ks, EMB, question, filters=private).graph
        assert report is not None
        return sum(not e["named"] for e in report.entry_entities)

    assert seeded("How many customers do we have now?") == cfg.seeds < cfg.chain_seeds
    assert cfg.seeds < seeded(CHAIN) <= cfg.chain_seeds


def test_a_hub_found_only_in_the_top_notes_gives_its_claims_not_its_links(built: Store) -> None:
    """Reading every link of the vault's most linked entities was most of graph search's time on a large graph;
    a hub the question names still gives its strongest links."""
    ks, index, private = KnowledgeStore(built), SearchIndex(built), Filters(include_private=True)
    seen: list[dict[str, Any]] = []
    read = ks.graph_context
    ks.graph_context = lambda *a, **k: seen.append(read(*a, **k)) or seen[-1]  # type: ignore[method-assign]

    def context(question: str) -> dict[str, Any]:
        graph_search(index, ks, EMB, question, filters=private)
        return seen[-1]

    question = "How many customers do we have now?"
    before = context(question)
    linked = [s for s in before["seeds"] if any(h["entry"] == s["key"] for h in before["links"])]
    assert linked, "the example vault's top notes name an entity with links"
    hub = linked[0]
    built.run("MATCH (e:Entity {key: $key}) SET e:HubEntity", key=hub["key"])
    try:
        after = context(question)
        assert hub["key"] in [s["key"] for s in after["seeds"]]  # still a seed: its claims are read
        assert not any(h["entry"] == hub["key"] for h in after["links"])
        named = context(f"What does {hub['name']} do?")
        assert any(h["entry"] == hub["key"] for h in named["links"])
    finally:
        built.run("MATCH (e:Entity {key: $key}) REMOVE e:HubEntity", key=hub["key"])


def test_only_the_asked_timelines_nearest_the_question_are_pinned() -> None:
    """A word the question only mentions can name many attributes ("customers": every customer_* one); the
    `pin_timelines` timelines whose lines are nearest the question are pinned, the others go to the trim."""

    def claim(attribute: str, value: str, sim: float, current: bool) -> dict[str, Any]:
        c = {"attribute": attribute, "value": value, "modality": "fact", "valid_from": "2025-01", "quote": value}
        c |= {"note_path": f"Shop/{attribute}.md", "note_date": "2025-01-02", "is_current": current}
        return {"entry": "thing:shop", "entity": "Shop", "claim": c, "sup": [], "conf": [], "then": [], "score": sim}

    rows = [claim(f"customer_{n}", f"v{n}-{k}", 0.5 + n / 100, k == 0) for n in range(8) for k in range(4)]
    ctx: dict[str, list[dict[str, Any]]] = {"links": [], "hops": [], "claims": [{**r, "asked": True} for r in rows]}
    lines = _lines(ctx, {"thing:shop": "Shop"}, [], True, 60, 3, 6)
    pinned = [ln for ln in lines if ln.pinned]
    assert {ln.timeline.split("\x00")[1] for ln in pinned} == {f"customer_{n}" for n in range(2, 8)}  # nearest six
    assert all(sum(ln.timeline == t.timeline for ln in pinned) <= 3 for t in pinned)  # three lines each
    assert len(lines) == len(rows)  # the rest stay for the trim
    assert len([ln for ln in _lines(ctx, {"thing:shop": "Shop"}, [], True, 60, 3, 100) if ln.pinned]) == 8 * 3
