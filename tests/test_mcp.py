"""`kb mcp` end to end: the SDK's own stdio client against the server, over a real Neo4j."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import pytest
from conftest import REPO, make_config
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from kb.embed.onnx import OnnxEmbedder
from kb.embeddings import EmbedStep
from kb.errors import StoreError
from kb.mcp_server import ReadOnlyStore
from kb.progress import Bars
from kb.refresh import refresh
from kb.store import Connection, Store
from kb.tokens import count_tokens

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
TOOLS = {"search", "cypher", "get_note", "schema"}
LAUNCHER = f"""import sys
sys.path.insert(0, {str(REPO)!r})
from kb.cli import main
main()
"""
NOTES = {
    "People/Ann Lee.md": "---\ndate: 2024-03-05\ntags: [person]\n---\n# Ann Lee\n\nAnn Lee runs finance at "
    "Harbor Logistics and owns the fuel-card reconciliation.\n",
    "Projects/Fuel cards.md": "---\ndate: 2024-05-10\ntags: [project]\n---\n# Fuel cards\n\n## Background\n\n"
    + " ".join(f"In week {i} [[Ann Lee]] compared statements with the ledger by hand." for i in range(1, 121))
    + "\n\n## Decision\n\n"
    + "We chose automatic matching of fuel-card transactions "
    "by licence plate number, not by driver name, because drivers share cards. " * 6,
    "Journal/2025-01-15.md": "# 2025-01-15\n\nCall with Ann about pricing: three tiers, annual billing only.\n",
    "Archive/Old pricing.md": "---\ndate: 2023-02-01\n---\n# Old pricing\n\nA single flat price per seat.\n",
}


class Case(NamedTuple):
    name: str
    query: str
    expect: str  # "refused": a tool error starting "refused:"; "bounded": stopped by a limit
    params: dict[str, Any] | None = None


B = "\\"
HOSTILE: list[Case] = [
    Case("create node", "CREATE (n:Evil {x: 1}) RETURN n", "refused"),
    Case("merge node", "MERGE (n:Evil {x: 1}) RETURN n", "refused"),
    Case("set property", "MATCH (n:Note) SET n.evil = true", "refused"),
    Case("set map +=", "MATCH (n:Note) SET n += {evil: 1}", "refused"),
    Case("set label", "MATCH (n:Note) SET n:Evil", "refused"),
    Case("delete relationships", "MATCH ()-[r]->() DELETE r", "refused"),
    Case("detach delete all", "MATCH (n) DETACH DELETE n", "refused"),
    Case("remove property", "MATCH (n:Note) REMOVE n.title", "refused"),
    Case("create from params", "CREATE (n:Evil) SET n = $props", "refused", {"props": {"x": 1}}),
    Case("LOAD CSV file://", "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "refused"),
    Case("LOAD CSV http://", "LOAD CSV WITH HEADERS FROM 'http://127.0.0.1:9/x.csv' AS row RETURN row", "refused"),
    Case("CALL IN TRANSACTIONS", "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10 ROWS", "refused"),
    Case(
        "IN CONCURRENT TRANSACTIONS",
        "UNWIND range(1, 10) AS i CALL (i) { CREATE (:Evil {i: i}) } IN 2 CONCURRENT TRANSACTIONS",
        "refused",
    ),
    Case("dbms.components", "CALL dbms.components()", "refused"),
    Case("dbms create user", "CALL dbms.security.createUser('evil', 'evil-password', false)", "refused"),
    Case("dbms.listConfig", "CALL dbms.listConfig() YIELD name, value RETURN name, value", "refused"),
    Case("db.createLabel", "CALL db.createLabel('Evil')", "refused"),
    Case(
        "db.create.setNodeVectorProperty",
        "MATCH (c:Chunk) CALL db.create.setNodeVectorProperty(c, 'embedding', [1.0, 2.0])",
        "refused",
    ),
    Case("fulltext createNodeIndex", "CALL db.index.fulltext.createNodeIndex('evil', ['Note'], ['title'])", "refused"),
    Case("apoc.create.node", "CALL apoc.create.node(['Evil'], {x: 1}) YIELD node RETURN node", "refused"),
    Case("apoc.load.json /etc/passwd", "CALL apoc.load.json('file:///etc/passwd') YIELD value RETURN value", "refused"),
    Case(
        "apoc.cypher.run write",
        "CALL apoc.cypher.run('CREATE (n:Evil) RETURN n', {}) YIELD value RETURN value",
        "refused",
    ),
    Case(
        "apoc.cypher.doIt write",
        "CALL apoc.cypher.doIt('MATCH (n) DETACH DELETE n', {}) YIELD value RETURN value",
        "refused",
    ),
    Case(
        "apoc.periodic.iterate",
        "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {batchSize: 100})",
        "refused",
    ),
    Case("apoc.export to file", "CALL apoc.export.csv.all('/tmp/kb-mcp-evil.csv', {})", "refused"),
    Case("gds write", "CALL gds.pageRank.write('g', {writeProperty: 'evil'})", "refused"),
    Case("write after WITH", "MATCH (n:Note) WITH n LIMIT 1 CREATE (n)-[:EVIL]->(:Evil)", "refused"),
    Case("write in UNION", "MATCH (n:Note) RETURN n.path AS p UNION CREATE (e:Evil) RETURN e.x AS p", "refused"),
    Case(
        "write in CALL subquery", "MATCH (n:Note) CALL (n) { CREATE (n)-[:EVIL]->(:Evil) } RETURN count(*)", "refused"
    ),
    Case("mixed case", "cReAtE (n:Evil)", "refused"),
    Case("behind block comments", "/* harmless */ MATCH (n) /* RETURN n */ DETACH DELETE n", "refused"),
    Case("behind line comment", "// just reading\nCREATE (n:Evil)", "refused"),
    Case("unicode escape in keyword", "CR" + B + "u0045ATE (n:Evil)", "refused"),
    Case("unicode escape in procedure", "CALL apoc" + B + "u002Ecreate.node(['Evil'], {})", "refused"),
    Case("unicode escape in backticks", "CALL `db`.`cre" + B + "u0061teLabel`('Evil')", "refused"),
    Case("escaped quote hides a write", "RETURN '" + B + "u0027; CREATE (n:Evil) //'", "refused"),
    Case("two statements", "MATCH (n) RETURN count(n); CREATE (n:Evil)", "refused"),
    Case("escaped semicolon", "RETURN 1 " + B + "u003B CREATE (n:Evil)", "refused"),
    Case("CREATE INDEX", "CREATE INDEX evil FOR (n:Note) ON (n.evil)", "refused"),
    Case("DROP CONSTRAINT", "DROP CONSTRAINT note_path", "refused"),
    Case("DROP INDEX", "DROP INDEX chunk_text", "refused"),
    Case("SHOW USERS", "SHOW USERS", "refused"),
    Case("SHOW PRIVILEGES", "SHOW PRIVILEGES", "refused"),
    Case("USE system", "USE system SHOW USERS", "refused"),
    Case("TERMINATE TRANSACTIONS", "TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "refused"),
    Case("FOREACH write", "FOREACH (i IN range(1, 3) | CREATE (:Evil {i: i}))", "refused"),
    Case(
        "comprehension feeds a write",
        "WITH [x IN range(1, 3) | x * 2] AS xs FOREACH (x IN xs | MERGE (:Evil {x: x}))",
        "refused",
    ),
    Case("write in a pattern", "MATCH (a:Note), (b:Note) MERGE (a)-[:EVIL]->(b)", "refused"),
    Case("runaway UNWIND", "UNWIND range(1, 100000000000) AS x RETURN count(x)", "bounded"),
    Case(
        "cartesian product",
        "MATCH (a), (b), (c), (d), (e), (f), (g) WHERE a <> b AND b <> c AND c <> d "
        "AND d <> e AND e <> f AND f <> g RETURN count(*)",
        "bounded",
    ),
    Case("huge result", "UNWIND range(1, 1000000) AS x RETURN x, 'some padding text' AS pad", "bounded"),
    Case("embedding dump", "MATCH (c:Passage) RETURN c.embedding AS e, c", "bounded"),
]


def write_vault(root: Path) -> Path:
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def vault(tmp_path: Path, store: Store) -> Path:
    """Four notes plus a symlink to a file outside the vault, refreshed and embedded into a clean graph."""
    root = write_vault(tmp_path / "vault")
    (tmp_path / "secret.md").write_text("# Secret\n\nnot in the vault\n", encoding="utf-8")
    (root / "People" / "Sneaky.md").symlink_to(tmp_path / "secret.md")
    refresh(store, make_config(root, private_folders="Journal"), Bars(quiet=True), EmbedStep(OnnxEmbedder()))
    return root


def server_params(home: Path, vault: Path, **extra: Any) -> StdioServerParameters:
    """`kb mcp` as a subprocess, with the test server's credentials and an optional kb config file."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in extra.items()))
    launcher = home / "launch_kb.py"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    env = {k: os.environ[k] for k in ("KB_HOME", "NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "KB_EMBEDDER")}
    return StdioServerParameters(
        command=sys.executable, args=[str(launcher), "mcp"], env={**env, "KB_VAULT": str(vault)}, cwd=str(REPO)
    )


def with_client(params: StdioServerParameters, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Run `body` against a live server session and return what it returns."""

    async def main() -> Any:
        with open(Path(os.environ["KB_HOME"]) / "server-stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    return anyio.run(main)


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(session: ClientSession, tool: str, **args: Any) -> tuple[bool, str]:
    result = await session.call_tool(tool, args)
    return bool(result.is_error), text_of(result)


def graph_state(store: Store) -> dict[str, Any]:
    """Everything a write could change: node and relationship counts, labels, types, indexes, constraints."""
    return {
        "nodes": store.read("MATCH (n) RETURN count(n) AS n")[0]["n"],
        "rels": store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"],
        "props": store.read("MATCH (n) RETURN sum(size(keys(n))) AS n")[0]["n"],
        "labels": sorted(r["label"] for r in store.read("CALL db.labels() YIELD label RETURN label")),
        "types": sorted(r["t"] for r in store.read("CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t")),
        "indexes": store.index_names(),
        "constraints": [r["name"] for r in store.read("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name")],
    }


def before_notes(store: Store) -> int:
    """Public notes: what the MCP tools can count."""
    return int(store.read("MATCH (n:Note) WHERE NOT n.private RETURN count(n) AS n")[0]["n"])


def test_tools_are_listed_read_only_with_schemas(kb_env: Path, vault: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in with_client(server_params(kb_env, vault), body)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object"
        ann = tool.annotations
        assert ann is not None and ann.read_only_hint is True and ann.destructive_hint is False
        assert ann.open_world_hint is False
    search = tools["search"].input_schema["properties"]
    assert search["k"]["minimum"] == 1 and search["k"]["maximum"] == 50
    assert set(search) == {"question", "k", "folder", "tag", "since", "until", "mode", "as_of", "current"}
    assert search["mode"]["enum"] == ["auto", "hybrid", "graph"] and search["mode"]["default"] == "auto"
    assert tools["search"].input_schema["required"] == ["question"]
    assert tools["cypher"].input_schema["required"] == ["query"]
    assert tools["get_note"].input_schema["required"] == ["path"]


def test_each_tool_answers(kb_env: Path, vault: Path, store: Store) -> None:
    async def body(session: ClientSession) -> dict[str, tuple[bool, str]]:
        return {
            "search": await call(session, "search", question="matching by licence plate number", k=3),
            "filtered": await call(session, "search", question="pricing", since="2025-01-01", until="2025-12-31"),
            "bad_date": await call(session, "search", question="pricing", since="2025-02-30"),
            "as_of": await call(
                session, "search", question="What did fuel cards cost?", as_of="2024-03-31", current=True
            ),
            "bad_as_of": await call(session, "search", question="pricing", as_of="2024-13-01"),
            "cypher": await call(
                session,
                "cypher",
                query="MATCH (n:Note) WHERE n.date >= $d RETURN count(n) AS n",
                params={"d": "2024-01-01"},
            ),
            "syntax": await call(session, "cypher", query="MATCH (n:Note RETURN n"),
            "graph": await call(
                session,
                "cypher",
                query="MATCH p = (:Passage)-[:IN_CHUNK]->(c:Chunk)-[r:IN_NOTE]->(n:Note {path: $p}) "
                "RETURN p, r, n, date(n.date) AS d",
                params={"p": "People/Ann Lee.md"},
            ),
            "get_note": await call(session, "get_note", path="Projects/Fuel cards.md"),
            "private_note": await call(session, "get_note", path="Journal/2025-01-15.md"),
            "schema": await call(session, "schema"),
        }

    out = with_client(server_params(kb_env, vault), body)
    assert not any(out[k][0] for k in ("search", "filtered", "cypher", "graph", "get_note", "schema")), out
    top = json.loads(out["search"][1])["results"][0]
    assert top["path"] == "Projects/Fuel cards.md" and top["date"] == "2024-05-10"
    assert top["chunks"][0]["breadcrumb"] == "Fuel cards > Decision"
    assert top["chunks"][0]["citation"] == "Projects/Fuel cards.md (2024-05-10) › Fuel cards > Decision"
    assert "licence plate" in top["chunks"][0]["text"]
    # the only 2025 note is in the private Journal folder: agents do not get it, by search or by path
    assert json.loads(out["filtered"][1])["results"] == []
    assert out["private_note"][0] and out["private_note"][1].startswith("no note 'Journal/2025-01-15.md' among the")
    assert out["bad_date"][0] and "not a date" in out["bad_date"][1]
    assert out["bad_as_of"][0] and "not a date" in out["bad_as_of"][1]
    as_of = json.loads(out["as_of"][1])
    assert not out["as_of"][0] and as_of["as_of"] == "2024-03-31" and as_of["current_only"] is True
    assert as_of["mode"] == "graph" and as_of["router"]["reason"] == "claims as of a date"
    assert as_of["results"] and all(
        c["date"] is None or c["date"] <= "2024-03-31" for r in as_of["results"] for c in r["chunks"]
    )  # notes written by then
    # the cypher tool counts public notes only: the 2025 journal note is not in its view
    expected = store.read("MATCH (n:Note) WHERE n.date >= '2024-01-01' AND NOT n.private RETURN count(n) AS n")[0]["n"]
    assert json.loads(out["cypher"][1])["rows"] == [{"n": expected}] and expected == 2
    assert out["syntax"][0] and out["syntax"][1].startswith("Cypher syntax error: ") and "line 1" in out["syntax"][1]
    graph = json.loads(out["graph"][1])["rows"][0]
    assert graph["n"]["_labels"] == ["Note"] and graph["r"]["_type"] == "IN_NOTE" and graph["d"] == "2024-03-05"
    note = json.loads(out["get_note"][1])
    assert note["text"] == (vault / "Projects" / "Fuel cards.md").read_text(encoding="utf-8")
    assert note["metadata"]["date"] == "2024-05-10" and note["metadata"]["tags"] == ["project"]
    schema = json.loads(out["schema"][1])
    assert {"Note", "Chunk"} <= set(schema["labels"]) and "IN_NOTE" in schema["relationship_types"]
    assert "path" in schema["nodes"]["Note"]["properties"] and schema["nodes"]["Note"]["count"] == before_notes(store)
    assert "(:Chunk)-[:IN_NOTE]->(:Note)" in schema["relationships"]["IN_NOTE"]["patterns"]
    index = {i["name"]: i for i in schema["indexes"]}
    assert index["chunk_text"]["type"] == "FULLTEXT" and index["chunk_text"]["labels"] == ["Chunk"]


def test_get_note_stays_inside_the_vault(kb_env: Path, vault: Path) -> None:
    paths = [
        "../secret.md",
        "People/../../secret.md",
        "/etc/passwd",
        str(vault / "People" / "Ann Lee.md"),
        "People/Sneaky.md",
        "C:\\Windows\\win.ini",
    ]

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        return [await call(session, "get_note", path=p) for p in paths] + [
            await call(session, "get_note", path="People/Nobody.md")
        ]

    *escapes, missing = with_client(server_params(kb_env, vault), body)
    for path, (is_error, text) in zip(paths, escapes):
        assert is_error and text.startswith("refused: "), (path, text)
        assert "not in the vault" not in text
    assert missing[0] and "no note 'People/Nobody.md'" in missing[1]


def test_hostile_queries_are_refused_or_bounded(kb_env: Path, vault: Path, store: Store) -> None:
    before = graph_state(store)

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        out = [
            await call(session, "cypher", query=c.query, **({"params": c.params} if c.params else {})) for c in HOSTILE
        ]
        return out + [await call(session, "cypher", query="MATCH (n:Note) RETURN count(n) AS n")]

    *results, alive = with_client(server_params(kb_env, vault, mcp_timeout_s=3), body)
    failures = [
        (c.name, text[:160]) for c, (is_error, text) in zip(HOSTILE, results) if not outcome_ok(c, is_error, text)
    ]
    assert not failures, failures
    assert graph_state(store) == before
    assert not Path("/tmp/kb-mcp-evil.csv").exists()
    assert not alive[0] and json.loads(alive[1])["rows"] == [{"n": before_notes(store)}]


def test_the_public_view_never_commits(connection: Connection, store: Store) -> None:
    """Without the text and EXPLAIN checks a write runs in the view's transaction, and is rolled back."""
    with ReadOnlyStore(connection, 30) as ro:
        assert ro.read("CREATE (n:Evil {x: 1}) RETURN n.x AS x") == [{"x": 1}]
        with pytest.raises(StoreError):
            ro.run("CREATE (n:Evil)")
    assert store.read("MATCH (n) RETURN count(n) AS n") == [{"n": 0}]


def outcome_ok(case: Case, is_error: bool, text: str) -> bool:
    """A refusal is a tool error saying so; a bounded query timed out, or came back capped and valid."""
    if case.expect == "refused":
        return is_error and text.startswith("refused: ")
    if is_error:
        return text.startswith("timeout: ") and "within 3 s" in text
    payload = json.loads(text)
    return count_tokens(text) <= 8000 and (payload.get("rows_cut", 0) > 0 or "numbers left out" in text)


def test_config_lowers_the_token_cap(kb_env: Path, vault: Path) -> None:
    async def body(session: ClientSession) -> tuple[bool, str]:
        return await call(session, "cypher", query="UNWIND range(1, 5000) AS x RETURN x")

    is_error, text = with_client(server_params(kb_env, vault, mcp_max_tokens=500, mcp_timeout_s=1000), body)
    payload = json.loads(text)
    assert not is_error and count_tokens(text) <= 500
    assert payload["rows_returned"] + payload["rows_cut"] == 5000 and payload["rows_cut"] > 4000


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not on PATH")
def test_mcp_inspector_lists_the_tools(kb_env: Path, tmp_path: Path) -> None:
    params = server_params(kb_env, write_vault(tmp_path / "v"))
    env_args = [a for k, v in (params.env or {}).items() for a in ("-e", f"{k}={v}")]
    proc = subprocess.run(
        ["npx", "-y", INSPECTOR, "--cli", *env_args, params.command, *params.args, "--method", "tools/list"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {t["name"] for t in json.loads(proc.stdout)["tools"]}
    assert names == TOOLS


def test_a_promoted_note_says_why() -> None:
    from result_helpers import chunk, note

    from kb.mcp_server import _search_note

    moved = note("a.md", title="A", date="2026-01-01", promoted="states the current value", chunks=(chunk(text="341"),))
    out = _search_note(moved)
    assert out["promoted"] == "states the current value"
    assert out["chunks"][0]["citation"] == "a.md (2026-01-01) › A"
    assert "promoted" not in _search_note(replace(moved, promoted=None))
    demoted = _search_note(replace(moved, promoted=None, demoted="outdated claims (customer_count = 200)"))
    assert demoted["demoted"] == "outdated claims (customer_count = 200)" and "promoted" not in demoted


def test_the_warm_up_gives_way_to_a_call(kb_env: Path, vault: Path, store: Store) -> None:
    """Views hide private material by write locks, so a warm search's view and a call's wait on each other: a call
    stops the warm-up before its next search and waits only for the one in flight."""
    import threading
    import time

    from kb.config import load_config
    from kb.mcp_server import KbTools, WarmStopped

    tools = KbTools(load_config(flags={"vault": str(vault), "private_folders": ["Journal"]}))
    try:
        view = tools.store()
        inside, release, order = threading.Event(), threading.Event(), []

        def warm_search() -> None:
            with tools._warm_view(view):
                inside.set()
                release.wait(10)
            order.append("warm search")

        def call() -> None:
            tools._give_way()
            order.append("call")

        searching = threading.Thread(target=warm_search)
        searching.start()
        assert inside.wait(10)
        calling = threading.Thread(target=call)
        calling.start()
        time.sleep(0.3)
        assert order == []  # the call waits for the warm search in flight ...
        release.set()
        searching.join(10)
        calling.join(10)
        assert order == ["warm search", "call"]
        with pytest.raises(WarmStopped), tools._warm_view(view):  # ... and no warm search starts after it
            pass
        started = time.monotonic()
        tools.warm()  # a warm-up after a call runs nothing
        assert time.monotonic() - started < 2
        answered = tools.cypher("MATCH (n:Note) RETURN count(n) AS n")  # the call itself answers
        assert not answered.is_error and json.loads(text_of(answered))["rows"] == [{"n": before_notes(store)}]
    finally:
        tools.close()
