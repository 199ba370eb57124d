"""Hostile privacy probes through a real MCP client: no private text from any tool, however it is asked for.

The example vault's Journal folder is private. Private material is read from the graph with full access
(chunk text and breadcrumbs, note titles and paths, claim quotes and values, evidence phrases taken from
private chunks, entities known only from private notes, tags only private notes carry), then every probe's
output is searched for any 20-character window of it (case-folded, whitespace collapsed; windows that also
occur in public text do not count), forwards and reversed, in each string and in all strings joined, with
lists of character codes decoded. Zero leaks is the only pass.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner
from mcp import ClientSession
from test_mcp import call, server_params, with_client

from kb.cli import cli
from kb.sandbox import PublicStore, ViewChanged
from kb.store import Connection, Store

WINDOW = 20
PRIVATE = "Journal"


class Probe(NamedTuple):
    name: str
    tool: str
    args: dict[str, Any]
    empty: bool = False  # cypher: the rows must be empty (the probe selects private material only)


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).casefold().strip()


class Secrets:
    """Private text as windows and short items, minus whatever public text also contains."""

    def __init__(self, private: list[str], short: list[str], public: list[str]) -> None:
        corpus = "\n".join(norm(p) for p in public)
        self.windows = {w for t in private for w in _windows(norm(t)) if w not in corpus}
        self.short = sorted({norm(s) for s in short if len(norm(s)) >= 6 and norm(s) not in corpus})

    def leaks(self, output: str, asked: Any = None) -> list[str]:
        """The private runs found in one tool output, apart from what the probe itself `asked` with."""
        found: list[str] = []
        own = sorted({norm(s) for s in _strings(asked or {}) if len(s) >= 6}, key=len, reverse=True)
        for text in _candidates(output):
            for s in own:
                text = text.replace(s, " ")
            for i in range(max(len(text) - WINDOW + 1, 0)):
                if text[i : i + WINDOW] in self.windows:
                    found.append(text[i : i + WINDOW])
                    break
            found += [s for s in self.short if s in text]
        return sorted(set(found))


def _windows(text: str) -> Iterator[str]:
    if len(text) < WINDOW:
        if len(text) >= 6:
            yield text
        return
    for i in range(len(text) - WINDOW + 1):
        yield text[i : i + WINDOW]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        if value and all(isinstance(v, int) and not isinstance(v, bool) and 0 < v < 0x110000 for v in value):
            yield "".join(chr(v) for v in value)  # character codes
        for v in value:
            yield from _strings(v)


def _candidates(output: str) -> list[str]:
    try:
        strings = list(_strings(json.loads(output)))
    except ValueError:
        strings = [output]
    texts = [norm(s) for s in [output, *strings, "".join(strings)]]
    return texts + [t[::-1] for t in texts]


@pytest.fixture
def hostile_vault(kb_env: Path, example_vault: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example vault built with its recorded knowledge layer; then a public note is replaced by a
    symlink to a private one and a folder symlink to Journal is added (after the refresh, as an attacker
    with write access to the vault would)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    kb_env.mkdir(parents=True, exist_ok=True)
    (kb_env / "config.toml").write_text(f'private_folders = ["{PRIVATE}"]\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["refresh", "--vault", str(example_vault), "--json"])
    assert result.exit_code == 0, result.output
    assert store.read("MATCH (c:Chunk) WHERE c.private RETURN count(c) AS n")[0]["n"] >= 2
    mira = example_vault / "People" / "Mira Havel.md"
    mira.unlink()
    mira.symlink_to(Path("..") / PRIVATE / "2025-06-30.md")
    (example_vault / "AJournal").symlink_to(PRIVATE)
    return example_vault


def secrets_of(store: Store, vault: Path) -> Secrets:
    """Everything private in the graph, and the public text it must be told apart from."""

    def one(query: str) -> list[Any]:
        return [r["x"] for r in store.read(query)]

    private = (
        one("MATCH (c:Chunk) WHERE c.private RETURN c.text AS x")
        + one("MATCH (cl:Claim) WHERE cl.private RETURN cl.quote AS x")
        + [
            e
            for row in one(
                "MATCH ()-[r]->() WHERE r.evidence IS NOT NULL "
                "RETURN [e IN r.evidence WHERE NOT e IN coalesce(r.public_evidence, [])] AS x"
            )
            for e in row
        ]
    )
    short = (
        one("MATCH (c:Chunk) WHERE c.private RETURN c.breadcrumb AS x")
        + one("MATCH (n:Note) WHERE n.private RETURN n.title AS x")
        + one("MATCH (n:Note) WHERE n.private RETURN n.path AS x")
        + one("MATCH (cl:Claim) WHERE cl.private RETURN cl.value AS x")
        + one("MATCH (e:Entity) WHERE e.private_only RETURN e.name AS x")
        + [a for row in one("MATCH (e:Entity) WHERE e.private_only RETURN e.aliases AS x") for a in row]
        + one("MATCH (t:Tag) WHERE NOT EXISTS { MATCH (n:Note)-[:TAGGED]->(t) WHERE NOT n.private } RETURN t.name AS x")
    )
    public = (
        one("MATCH (c:Chunk) WHERE NOT c.private RETURN c.breadcrumb + ' ' + c.text AS x")
        + one("MATCH (n:Note) WHERE NOT n.private RETURN n.path + ' ' + n.title + ' ' + n.frontmatter AS x")
        + one("MATCH (n:Note)-[:LINKS_TO]->(m:Missing) WHERE NOT n.private RETURN m.key + ' ' + m.name AS x")
        + one("MATCH (cl:Claim) WHERE NOT cl.private RETURN cl.quote + ' ' + cl.value AS x")
        + [
            e
            for row in one("MATCH ()-[r]->() WHERE r.public_evidence IS NOT NULL RETURN r.public_evidence AS x")
            for e in row
        ]
        + [PRIVATE]
        + [
            p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(vault.rglob("*.md"))
            if p.is_file()
            and not p.is_symlink()
            and not p.relative_to(vault).as_posix().startswith(PRIVATE + "/")
            and "AJournal" not in p.parts
        ]
    )
    assert len(private) > 10 and short
    return Secrets(private, short, public)


def cy(name: str, query: str, empty: bool = False, **params: Any) -> Probe:
    return Probe(name, "cypher", {"query": query, **({"params": params} if params else {})}, empty)


def probes(store: Store, vault: Path) -> list[Probe]:
    """Every way we thought of to reach private text; the ids and phrases come from the full graph."""
    priv = store.read(
        "MATCH (c:Chunk) WHERE c.private RETURN c.text AS t, elementId(c) AS eid, id(c) AS nid, "
        "c.id AS cid ORDER BY c.id"
    )
    notes = store.read("MATCH (n:Note) WHERE n.private RETURN n.path AS p, elementId(n) AS eid ORDER BY p")
    claim = store.read(
        "MATCH (cl:Claim) WHERE cl.private RETURN cl.quote AS q, elementId(cl) AS eid ORDER BY cl.id LIMIT 1"
    )[0]
    hidden = store.read("MATCH (e:Entity) WHERE e.private_only RETURN e.name AS n ORDER BY n LIMIT 1")[0]["n"]
    text, phrase = priv[0]["t"], " ".join(priv[0]["t"].split()[5:11])
    eids = [r["eid"] for r in priv] + [r["eid"] for r in notes] + [claim["eid"]]
    path = notes[0]["p"]
    return [
        cy("private chunk text", "MATCH (c:Chunk) WHERE c.private RETURN c.text", True),
        cy("private flag by property map", "MATCH (c:Chunk {private: true}) RETURN properties(c) AS p", True),
        cy("every chunk, whole nodes", "MATCH (c:Chunk) RETURN c ORDER BY c.id"),
        cy(
            "chunks by note path",
            f"MATCH (c:Chunk) WHERE c.note_path STARTS WITH '{PRIVATE}' RETURN c.text, c.breadcrumb",
            True,
        ),
        cy("chunks by folder, case-folded", "MATCH (c:Chunk) WHERE toLower(c.folder) = 'journal' RETURN c", True),
        cy("every note with front matter", "MATCH (n:Note) RETURN n.path, n.title, n.frontmatter, n.aliases"),
        cy(
            "keys() and values of private notes",
            "MATCH (n:Note) WHERE n.private RETURN keys(n) AS k, [k IN keys(n) | n[k]] AS v",
            True,
        ),
        cy("map projection .*", "MATCH (c:Chunk) RETURN c {.*} AS c"),
        cy("collect every text", "MATCH (c:Chunk) RETURN collect(c.text) AS all"),
        cy(
            "reduce into one string",
            "MATCH (c:Chunk) WITH collect(c.text) AS ts RETURN reduce(s = '', t IN ts | s + t) AS blob",
        ),
        cy("substring pieces", "MATCH (c:Chunk) RETURN substring(c.text, 0, 40) AS a, substring(c.text, 40, 40) AS b"),
        cy("split into words", "MATCH (c:Chunk) RETURN split(c.text, ' ') AS words"),
        cy("reverse and upper", "MATCH (c:Chunk) RETURN reverse(c.text) AS r, toUpper(c.breadcrumb) AS u"),
        cy("characters one by one", "MATCH (c:Chunk) WHERE c.tokens > 0 RETURN split(c.text, '') AS chars"),
        cy(
            "character codes",
            "MATCH (c:Chunk) RETURN [i IN range(0, size(c.text) - 1) | "
            "toInteger(apoc.text.code(substring(c.text, i, 1)))] AS codes",
        ),
        cy("left/right/trim", "MATCH (c:Chunk) RETURN left(c.text, 30), right(c.text, 30), trim(c.text)"),
        cy(
            "min/max over text",
            "MATCH (c:Chunk) RETURN min(c.text) AS lo, max(c.text) AS hi, collect(DISTINCT c.breadcrumb) AS crumbs",
        ),
        cy("order by text", "MATCH (c:Chunk) RETURN c.text ORDER BY c.text DESC LIMIT 5"),
        cy("paths through notes", "MATCH p = (a:Note)-[:LINKS_TO*1..3]-(b:Note) RETURN p LIMIT 200"),
        cy(
            "neighbours of private notes",
            f"MATCH (n)-[r]-(m:Note) WHERE m.path STARTS WITH '{PRIVATE}' RETURN n, r, m",
            True,
        ),
        cy("every relationship's properties", "MATCH (a)-[r]->(b) RETURN type(r), properties(r) LIMIT 2000"),
        cy("private claims", "MATCH (cl:Claim) WHERE cl.private RETURN cl.quote, cl.value", True),
        cy("every claim", "MATCH (cl:Claim) RETURN cl.note_path, cl.quote, cl.value, cl.line"),
        cy("claims of private chunks", "MATCH (c:Chunk)-[:SUPPORTS]->(cl:Claim) WHERE c.private RETURN cl", True),
        cy("claims by note path", f"MATCH (cl:Claim) WHERE cl.note_path STARTS WITH '{PRIVATE}' RETURN cl", True),
        cy(
            "timeline edges",
            "MATCH (a:Claim)-[r:SUPERSEDED_BY|CONFLICTS_WITH|FOLLOWED_BY]-(b:Claim) RETURN a.quote, b.quote, b.value",
        ),
        cy(
            "evidence and lines",
            "MATCH ()-[r]->() WHERE r.evidence IS NOT NULL RETURN r.evidence, r.line, r.chunk_ids, r.public_evidence",
        ),
        cy("private-only entities", "MATCH (e:Entity) WHERE e.private_only RETURN e", True),
        cy("every entity's names", "MATCH (e:Entity) RETURN e.name, e.aliases, e.key, e.names_text, e.merge_log"),
        cy("entities of private chunks", "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE c.private RETURN e.name", True),
        cy(
            "full-text on the privacy field",
            "CALL db.index.fulltext.queryNodes('chunk_text', 'privacy:kbprivate') YIELD node RETURN node.text",
            True,
        ),
        cy(
            "full-text on a private phrase",
            "CALL db.index.fulltext.queryNodes('chunk_text', $q) YIELD node, score RETURN node.text, score",
            q=f'"{phrase}"',
        ),
        cy(
            "full-text on entity names",
            "CALL db.index.fulltext.queryNodes('entity_names', $q) YIELD node RETURN node",
            q=hidden,
        ),
        cy(
            "chunk vector indexes (if any)",
            "MATCH (c) WHERE c.embedding IS NOT NULL WITH c.embedding AS v LIMIT 1 "
            "CALL db.index.vector.queryNodes('chunk_embedding_private', 10, v) YIELD node, score "
            "RETURN node.text, score",
        ),
        cy(
            "public vector index",
            "MATCH (c) WHERE c.embedding IS NOT NULL WITH c.embedding AS v LIMIT 1 "
            "CALL db.index.vector.queryNodes('passage_embedding', 100, v) YIELD node RETURN node.text, node.private",
        ),
        cy("private passages", "MATCH (p:Passage) WHERE p.private RETURN p.text", True),
        cy("every passage", "MATCH (p:Passage) RETURN p.text, p.breadcrumb"),
        cy("passages of private chunks", "MATCH (p:Passage)-[:IN_CHUNK]->(c:Chunk) WHERE c.private RETURN p", True),
        cy(
            "passage full-text",
            "CALL db.index.fulltext.queryNodes('passage_text', $q) YIELD node RETURN node.text",
            True,
            q=f'"{phrase}"',
        ),
        cy(
            "private passage vectors",
            "MATCH (p:Passage) WHERE p.embedding IS NOT NULL WITH p.embedding AS v LIMIT 1 "
            "CALL db.index.vector.queryNodes('passage_embedding_private', 10, v) YIELD node RETURN node.text",
            True,
        ),
        cy(
            "claim-line vector index",
            "MATCH (cl:Claim) WHERE cl.line_vec IS NOT NULL WITH cl.line_vec AS v LIMIT 1 "
            "CALL db.index.vector.queryNodes('claim_lines', 500, v) YIELD node RETURN node.quote, node.value",
        ),
        cy("error echoes a value (date)", "MATCH (c:Chunk) WHERE c.private RETURN date(c.text)", True),
        cy(
            "error echoes a value (toInteger on a list)",
            "MATCH (c:Chunk) WITH c ORDER BY c.private DESC LIMIT 1 RETURN toInteger([c.text])",
        ),
        cy(
            "error echoes a value (lucene parse)",
            "MATCH (c:Chunk) WHERE c.private CALL "
            "db.index.fulltext.queryNodes('chunk_text', c.text + ' AND (') YIELD node RETURN node",
            True,
        ),
        cy(
            "error echoes a value (type error)",
            "MATCH (c:Chunk) WITH c ORDER BY c.private DESC LIMIT 1 RETURN c.text - 1",
        ),
        cy("elementId look-up", "MATCH (n) WHERE elementId(n) IN $ids RETURN n", True, ids=eids),
        cy("id() look-up", "MATCH (n) WHERE id(n) IN $ids RETURN properties(n)", True, ids=[r["nid"] for r in priv]),
        cy("chunk id look-up", "MATCH (c:Chunk) WHERE c.id IN $ids RETURN c", True, ids=[r["cid"] for r in priv]),
        cy("note by path", "MATCH (n:Note {path: $p}) RETURN n", True, p=path),
        cy(
            "boolean oracle on the true prefix",
            "MATCH (c:Chunk) WHERE c.text STARTS WITH $p RETURN count(*) AS n",
            p=text[:12],
        ),
        cy("oracle by CONTAINS", "MATCH (c:Chunk) WHERE c.text CONTAINS $p RETURN c.note_path", True, p=phrase),
        cy("privacy counts", "MATCH (c:Chunk) RETURN c.private AS p, count(*) AS n"),
        cy("label counts", "MATCH (n) RETURN labels(n) AS l, count(*) AS n"),
        cy(
            "UNION of private reads",
            "MATCH (c:Chunk) WHERE c.private RETURN c.text AS t UNION "
            "MATCH (n:Note) WHERE n.private RETURN n.title AS t",
            True,
        ),
        cy(
            "subquery and OPTIONAL MATCH",
            "CALL () { OPTIONAL MATCH (c:Chunk) WHERE c.private RETURN c } RETURN c.text AS t",
        ),
        cy("pattern comprehension", "MATCH (n:Note) RETURN n.path, [(n)<-[:IN_NOTE]-(c) | c.text] AS texts"),
        cy(
            "EXISTS over private links",
            "MATCH (n:Note) WHERE EXISTS { MATCH (n)-[:LINKS_TO]-(m:Note) WHERE m.private } RETURN n.path",
            True,
        ),
        cy("tags", "MATCH (t:Tag) RETURN t.name ORDER BY t.name"),
        cy("folders", "MATCH (f:Folder) RETURN f.path ORDER BY f.path"),
        cy("missing link targets", "MATCH (m:Missing) RETURN m.key, m.name, m.kind"),
        cy("attachments", "MATCH (a:Attachment) RETURN a.path"),
        cy("kb metadata", "MATCH (k:KbMeta) RETURN properties(k) AS p"),
        cy(
            "db listing procedures",
            "CALL db.labels() YIELD label WITH collect(label) AS l "
            "CALL db.propertyKeys() YIELD propertyKey RETURN l, collect(propertyKey) AS k",
        ),
        cy(
            "schema procedures",
            "CALL db.schema.nodeTypeProperties() YIELD nodeType, propertyName RETURN nodeType, propertyName",
        ),
        cy("schema visualization", "CALL db.schema.visualization() YIELD nodes, relationships RETURN nodes"),
        cy("SHOW INDEXES YIELD *", "SHOW INDEXES YIELD *"),
        cy("apoc meta (if present)", "CALL apoc.meta.data() YIELD label, property RETURN label, property"),
        cy(
            "shortest path through a private entity",
            "MATCH (a:Entity), (b:Entity) WHERE a <> b "
            "WITH a, b LIMIT 200 MATCH p = shortestPath((a)-[*..4]-(b)) RETURN [n IN nodes(p) | n.name] AS names",
        ),
        Probe("get_note of a private note", "get_note", {"path": path}),
        Probe("get_note, other case", "get_note", {"path": path.lower()}),
        Probe("get_note with ./", "get_note", {"path": "./" + path}),
        Probe("get_note with //", "get_note", {"path": path.replace("/", "//")}),
        Probe("get_note through ..", "get_note", {"path": "People/../" + path}),
        Probe("get_note, absolute path", "get_note", {"path": str(vault / path)}),
        Probe("get_note, symlink replacing a public note", "get_note", {"path": "People/Mira Havel.md"}),
        Probe("get_note, folder symlink", "get_note", {"path": "A" + path}),
        Probe("get_note, URL-encoded", "get_note", {"path": path.replace("/", "%2F")}),
        Probe("search quoting a private phrase", "search", {"question": phrase, "mode": "hybrid"}),
        Probe("search in graph mode for a private-only entity", "search", {"question": hidden, "mode": "graph"}),
        Probe(
            "search auto for private facts",
            "search",
            {"question": "Who introduced Tobias at dinner on Valentine's Day, and what about Dad's operation?"},
        ),
        Probe("search with the private folder", "search", {"question": phrase, "folder": PRIVATE}),
        Probe("search with a private-only tag", "search", {"question": "journal", "tag": "journal"}),
        Probe("search for a private claim quote", "search", {"question": claim["q"], "mode": "graph"}),
        Probe("schema", "schema", {}),
    ]


def test_no_private_text_through_any_tool(kb_env: Path, hostile_vault: Path, store: Store) -> None:
    secrets = secrets_of(store, hostile_vault)
    checker_works(secrets, store, hostile_vault)
    todo = probes(store, hostile_vault)
    assert len(todo) >= 40

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        return [await call(session, p.tool, **p.args) for p in todo]

    outputs = with_client(server_params(kb_env, hostile_vault, private_folders=[PRIVATE]), body)
    leaks = [(p.name, found) for p, (_, text) in zip(todo, outputs) if (found := secrets.leaks(text, p.args))]
    assert leaks == [], "\n".join(map(str, leaks))
    not_empty = [
        (p.name, text[:200])
        for p, (is_error, text) in zip(todo, outputs)
        if p.empty and not (not is_error and json.loads(text)["rows"] == [])
    ]
    assert not_empty == []
    by_name = {p.name: out for p, out in zip(todo, outputs)}
    assert json.loads(by_name["boolean oracle on the true prefix"][1])["rows"] == [{"n": 0}]
    assert json.loads(by_name["privacy counts"][1])["rows"] == [
        {"p": False, "n": store.read("MATCH (c:Chunk) WHERE NOT c.private RETURN count(c) AS n")[0]["n"]}
    ]
    for name, (is_error, text) in by_name.items():
        if name.startswith("get_note"):
            assert is_error and (text.startswith("no note ") or text.startswith("refused: ")), (name, text)
    # the public part is still there: the probes did not pass by seeing nothing at all
    assert "Kickoff" in by_name["every note with front matter"][1]
    assert json.loads(by_name["search quoting a private phrase"][1])["results"]


def checker_works(secrets: Secrets, store: Store, hostile_vault: Path) -> None:
    """The leak check itself: private text, reversed, as character codes or split, is found; public is not."""
    text = store.read("MATCH (c:Chunk) WHERE c.private RETURN c.text AS t ORDER BY c.id LIMIT 1")[0]["t"]
    piece = text[100:140]
    assert secrets.leaks(json.dumps({"rows": [{"t": piece}]}))
    assert secrets.leaks(json.dumps({"rows": [{"t": piece[::-1].upper()}]}))
    assert secrets.leaks(json.dumps({"rows": [{"c": [ord(ch) for ch in piece]}]}))
    assert secrets.leaks(json.dumps({"rows": [{"c": list(piece)}]}))
    public = (hostile_vault / "People" / "Ingrid Solberg.md").read_text(encoding="utf-8")
    assert not secrets.leaks(json.dumps({"text": public}))
    assert os.path.islink(hostile_vault / "People" / "Mira Havel.md")


def test_private_material_committed_during_a_call_is_never_returned(connection: Connection, store: Store) -> None:
    """Each statement reads the latest committed state, so a refresh can commit a private note after the view
    hid the others: the view looks again after the reads and throws such an answer away."""
    store.run("CREATE (:Note {path: 'People/a.md', title: 'Public', private: false})")
    secret = "CREATE (:Note {path: 'Journal/late.md', title: 'written during the call', private: true})"
    titles = "MATCH (n:Note) RETURN n.title AS t ORDER BY t"
    with PublicStore(connection, 30, [PRIVATE]) as view:
        with pytest.raises(ViewChanged):
            with view.view() as tx:
                store.run(secret)
                assert [r["t"] for r in tx.run(titles)] == ["Public", "written during the call"]
        store.run("MATCH (n:Note {path: 'Journal/late.md'}) DELETE n")
        calls = []

        def work(tx: Any) -> list[str]:
            if not calls:
                store.run(secret)
            calls.append(1)
            return [r["t"] for r in tx.run(titles)]

        assert view.read_tx(work) == ["Public"] and len(calls) == 2
    assert store.read("MATCH (n:Note) RETURN count(n) AS n") == [{"n": 2}]


def test_every_read_of_the_public_store_is_in_the_view(connection: Connection, store: Store) -> None:
    """read_maps (graph search's read) hides private material as read does: it must not bypass the view."""
    store.run(
        "CREATE (:Note {path: 'People/a.md', title: 'Public', private: false}), "
        "(:Note {path: 'Journal/b.md', title: 'Secret', private: true})"
    )
    titles = "MATCH (n:Note) RETURN n.title AS t ORDER BY t"
    with PublicStore(connection, 30, [PRIVATE]) as view:
        assert view.read(titles) == view.read_maps(titles) == [{"t": "Public"}]
    assert store.read_maps(titles) == [{"t": "Public"}, {"t": "Secret"}]
