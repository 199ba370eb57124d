"""kb's read-only MCP server (stdio): `search`, `cypher`, `get_note` and `schema` over the vault's graph.

Read-only is enforced here, not by the tool descriptions:
- every query runs in a READ_ACCESS session through `execute_read`, with a transaction timeout;
- ad-hoc Cypher first passes the text checks in kb.readonly, then EXPLAIN: only query type "r" runs;
- responses are capped at 8,000 tokens (whole rows dropped, with a notice) and long numeric lists
  (embeddings) are left out; queries time out after 30 s. Both limits can be lowered in the kb config
  (`mcp_max_tokens`, `mcp_timeout_s`), never raised past those maxima, and never from a tool call;
- `get_note` reads only notes that are in the graph, by a vault-relative path that stays in the vault.

A second wall on Neo4j Enterprise or Desktop: connect as a read-only user.
    CREATE USER kb_reader SET PASSWORD 'choose-a-password' CHANGE NOT REQUIRED;
    GRANT ROLE reader TO kb_reader;
and run `NEO4J_USER=kb_reader NEO4J_PASSWORD=... kb mcp`. kb's managed server is Community Edition,
which has a single admin user and no roles, so there the checks in this module hold on their own.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Annotated, Any, Callable, Literal, Mapping, TypeVar

import neo4j
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from neo4j import exceptions as nx
from pydantic import Field

from kb import __version__
from kb.config import Config
from kb.embed import Embedder, make_embedder
from kb.embeddings import require_built_by
from kb.errors import ConfigError, KbError, StoreError
from kb.readonly import Refused, check_query_type, check_text, clean, collect_rows, dumps, limits_for, vault_file
from kb.store import Connection, Store, connection_for
from kb.tokens import count_tokens, truncate_tokens
from search.hybrid import Filters, iso_date
from search.modes import run_search

T = TypeVar("T")
log = logging.getLogger("kb.mcp")
SAMPLE = 200  # nodes or relationships sampled per label for the schema's property keys
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
DATE = r"^\d{4}-\d{2}-\d{2}$"


class ToolFailure(Exception):
    """An expected failure whose message goes back to the agent as a tool error."""


class ReadOnlyStore(Store):
    """A Store whose reads are timed read transactions and whose write methods refuse."""

    def __init__(self, conn: Connection, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        super().__init__(conn)

    def read_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        """Run `work` in a read transaction on a READ_ACCESS session, bounded by the timeout."""
        def unit(tx: neo4j.ManagedTransaction) -> T:
            return work(tx)
        timed = neo4j.unit_of_work(timeout=self.timeout_s)(unit)
        with self.driver.session(database=self.conn.database, default_access_mode=neo4j.READ_ACCESS) as session:
            return session.execute_read(timed)

    def read(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        return self.read_tx(lambda tx: [r.data() for r in tx.run(statement, params)])

    def run(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        raise StoreError("the MCP server is read-only")

    def run_batch(self, statements: Any) -> None:
        raise StoreError("the MCP server is read-only")

    def run_autocommit(self, statement: str, **params: Any) -> None:
        raise StoreError("the MCP server is read-only")


def _date(value: str | None, name: str) -> str | None:
    try:
        return iso_date(value, name)
    except ConfigError as exc:
        raise ToolFailure(str(exc)) from exc


def error_text(exc: Exception, timeout_s: float) -> str:
    """What the agent reads for a failed call."""
    if isinstance(exc, (Refused, ToolFailure, KbError)):
        return str(exc)
    if isinstance(exc, nx.Neo4jError):
        code = exc.code or ""
        if "TimedOut" in code or code.endswith(".Terminated"):
            return (f"timeout: the query did not finish within {timeout_s:g} s and was stopped: "
                    "add LIMIT, narrow the MATCH, or aggregate")
        if code.endswith("Statement.AccessMode"):
            return "refused: writes are not allowed (the server rejected a write in a read transaction)"
        if isinstance(exc, nx.CypherSyntaxError):
            return f"Cypher syntax error: {exc.message}"
        return f"Neo4j error {code}: {exc.message}"
    if isinstance(exc, nx.DriverError):
        return f"Neo4j is unreachable ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    log.exception("unexpected error in a kb tool")
    return f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _call(work: Callable[[], Any], timeout_s: float) -> CallToolResult:
    """Run one tool body: its JSON as text, or a tool error with a useful message."""
    try:
        payload = work()
    except Exception as exc:  # every failure becomes a tool error, never a crashed server
        return CallToolResult(content=[TextContent(type="text", text=error_text(exc, timeout_s))], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=dumps(payload))])


def _trim_search(payload: dict[str, Any], max_tokens: int) -> None:
    """Drop whole chunks (then emptied notes) from the end until the response fits."""
    dropped = 0
    notes = payload["results"]
    while notes and count_tokens(dumps(payload)) > max_tokens:
        notes[-1]["chunks"].pop()
        dropped += 1
        if not notes[-1]["chunks"]:
            notes.pop()
        payload["notice"] = f"{dropped} lower-ranked chunks were cut to stay within {max_tokens} tokens"


def _search_note(note: Mapping[str, Any]) -> dict[str, Any]:
    path, date = note["path"], note["date"]
    chunks = [{"citation": f"{path} ({c['date'] or date or 'undated'}) › {c['breadcrumb']}",
               "breadcrumb": c["breadcrumb"], "date": c["date"], "text": c["text"]} for c in note["chunks"]]
    out = {"rank": note["rank"], "path": path, "title": note["title"], "date": date, "score": note["score"],
           "chunks": chunks}
    if note.get("promoted"):  # graph mode moved it to the top: it states the value asked for
        out["promoted"] = note["promoted"]
    return out


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _props(tx: neo4j.ManagedTransaction, pattern: str) -> dict[str, list[str]]:
    """Property keys and value types seen on a sample of the nodes or relationships in `pattern`."""
    query = (f"MATCH {pattern} WITH x LIMIT {SAMPLE} UNWIND keys(x) AS k "
             "RETURN k, collect(DISTINCT valueType(x[k]))[..3] AS types ORDER BY k")
    return {r["k"]: r["types"] for r in tx.run(query)}


def read_schema(tx: neo4j.ManagedTransaction) -> dict[str, Any]:
    """Labels, relationship types, property keys per label and type, and indexes."""
    labels = [r["label"] for r in tx.run("CALL db.labels() YIELD label RETURN label ORDER BY label")]
    types = [r["t"] for r in tx.run("CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t ORDER BY t")]
    nodes = {label: {"count": tx.run(f"MATCH (x:{_quote(label)}) RETURN count(x) AS n").single(strict=True)["n"],
                     "properties": _props(tx, f"(x:{_quote(label)})")} for label in labels}
    rels = {}
    for t in types:
        pairs = tx.run(f"MATCH (a)-[x:{_quote(t)}]->(b) WITH a, b LIMIT {SAMPLE} "
                       "RETURN DISTINCT labels(a) AS f, labels(b) AS t")
        rels[t] = {"count": tx.run(f"MATCH ()-[x:{_quote(t)}]->() RETURN count(x) AS n").single(strict=True)["n"],
                   "patterns": sorted({f"(:{':'.join(p['f'])})-[:{t}]->(:{':'.join(p['t'])})" for p in pairs}),
                   "properties": _props(tx, f"()-[x:{_quote(t)}]->()")}
    indexes = [r.data() for r in tx.run(
        "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state "
        "RETURN name, type, entityType AS entity, labelsOrTypes AS labels, properties, state ORDER BY name")]
    return {"labels": labels, "relationship_types": types, "nodes": nodes, "relationships": rels,
            "indexes": indexes, "notes": [
                "Long numeric lists (Chunk.embedding) are left out of cypher results.",
                "Full text: CALL db.index.fulltext.queryNodes('chunk_text', 'word') YIELD node, score"]}


class KbTools:
    """The four tools over one lazily opened read-only store and embedder."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.limits = limits_for(cfg.extra)
        self._lock = threading.Lock()
        self._store: ReadOnlyStore | None = None
        self._embedder: Embedder | None = None

    def store(self) -> ReadOnlyStore:
        with self._lock:
            if self._store is None:
                self._store = ReadOnlyStore(connection_for(self.cfg), self.limits.timeout_s)
            return self._store

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.cfg)
            return self._embedder

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def _call(self, work: Callable[[], Any]) -> CallToolResult:
        return _call(work, self.limits.timeout_s)

    def search(self, question: Annotated[str, Field(min_length=1, description="What to look for, in plain words.")],
               k: Annotated[int, Field(ge=1, le=50, description="How many notes to return.")] = 10,
               folder: Annotated[str | None, Field(description="Only notes in this folder and below.")] = None,
               tag: Annotated[str | None, Field(description="Only notes with this tag (nested tags count).")] = None,
               since: Annotated[str | None, Field(pattern=DATE, description="Only chunks dated on or after "
                                                  "YYYY-MM-DD.")] = None,
               until: Annotated[str | None, Field(pattern=DATE, description="Only chunks dated on or before "
                                                  "YYYY-MM-DD.")] = None,
               mode: Annotated[Literal["auto", "hybrid", "graph"], Field(
                   description="auto (default: a rule-based router picks), hybrid (keyword + vector), or graph "
                               "(hybrid plus dated, modality-labelled claim and relationship lines).")] = "auto",
               ) -> CallToolResult:
        """Search the vault: ranked notes with dated citations and chunk text; in graph mode also claim
        timelines (current value first, superseded values and plans marked) and relationships with evidence."""
        return self._call(lambda: self._search(question, k, Filters(folder, tag, _date(since, "since"),
                                                                     _date(until, "until")), mode))

    def _search(self, question: str, k: int, filters: Filters, mode: str = "hybrid") -> dict[str, Any]:
        store = self.store()
        emb = self.embedder()
        require_built_by(store, emb, "set KB_EMBEDDER or run `kb refresh --reembed`")
        result = run_search(store, emb, question, mode, k, filters)
        payload: dict[str, Any] = {"query": question, "mode": result["mode"], "filters": result["filters"]}
        if "router" in result:
            payload["router"] = result["router"]
        if "graph" in result:
            payload["graph_lines"] = [line["text"] for line in result["graph"]["lines"]]
        payload["results"] = [_search_note(n) for n in result["results"]]
        _trim_search(payload, self.limits.max_tokens)
        return payload

    def cypher(self, query: Annotated[str, Field(min_length=1, description="One read-only Cypher statement.")],
               params: Annotated[dict[str, Any] | None, Field(description="Query parameters ($name).")] = None,
               ) -> CallToolResult:
        """Run one read-only Cypher query (counts, filters, traversals); writes and admin commands are refused."""
        return self._call(lambda: self._cypher(query, params or {}))

    def _cypher(self, query: str, params: dict[str, Any]) -> dict[str, Any]:
        check_text(query)

        def work(tx: neo4j.ManagedTransaction) -> dict[str, Any]:
            check_query_type(tx.run("EXPLAIN " + query, params).consume().query_type)
            return collect_rows(tx.run(query, params), self.limits.max_tokens)
        return self.store().read_tx(work)

    def get_note(self, path: Annotated[str, Field(min_length=1, description="Vault-relative path of the note, "
                                                  "e.g. 'People/Ann Lee.md' (as search results give it).")],
                 ) -> CallToolResult:
        """One note's full text and its metadata (date, title, tags, aliases, folder) by vault-relative path."""
        return self._call(lambda: self._get_note(path))

    def _get_note(self, path: str) -> dict[str, Any]:
        rel, file = vault_file(self.cfg.require_vault(), path)
        rows = self.store().read("MATCH (n:Note {path: $path}) RETURN properties(n) AS props", path=rel)
        if not rows:
            raise ToolFailure(f"no note {rel!r} in the graph: check the path (search results give it) "
                              "or run `kb refresh`")
        if rows[0]["props"].get("private"):
            raise ToolFailure(f"refused: {rel} is in a private folder; kb does not hand private notes to agents")
        meta = {k: v for k, v in clean(rows[0]["props"]).items() if k not in ("links_raw", "link_sig", "hash")}
        if isinstance(meta.get("frontmatter"), str):
            meta["frontmatter"] = json.loads(meta["frontmatter"])
        if not file.is_file():
            raise ToolFailure(f"{rel} is in the graph but not on disk: run `kb refresh`")
        text = file.read_text(encoding="utf-8", errors="replace")
        payload: dict[str, Any] = {"path": rel, "metadata": meta, "text": text}
        room = self.limits.max_tokens - count_tokens(dumps({**payload, "text": ""})) - 60
        if count_tokens(text) > room:
            payload["text"] = truncate_tokens(text, max(room, 0))
            payload["notice"] = f"the text was cut to {max(room, 0)} of {count_tokens(text)} tokens"
        return payload

    def schema(self) -> CallToolResult:
        """The graph's labels, relationship types, property keys (with value types) per label, and indexes."""
        return self._call(self._schema)

    def _schema(self) -> dict[str, Any]:
        payload = self.store().read_tx(read_schema)
        if count_tokens(dumps(payload)) > self.limits.max_tokens:
            payload = {"labels": payload["labels"], "relationship_types": payload["relationship_types"],
                       "notice": "the full schema is too large: query db.schema.nodeTypeProperties() instead"}
        return payload


INSTRUCTIONS = ("kb answers questions from the user's Markdown vault. Use `search` first: cite notes by the "
                "citation it gives (path, date, breadcrumb) and prefer recent dates. Use `get_note` for a whole "
                "note, `schema` before writing Cypher, and `cypher` for counts and filters. Everything is read-only.")


def build_server(cfg: Config) -> tuple[MCPServer[Any], KbTools]:
    """The MCP server with the four read-only tools registered."""
    tools = KbTools(cfg)
    server: MCPServer[Any] = MCPServer("kb", instructions=INSTRUCTIONS, version=__version__)
    for name, title, fn in (("search", "Search the vault", tools.search),
                            ("cypher", "Read-only Cypher", tools.cypher),
                            ("get_note", "Read one note", tools.get_note), ("schema", "Graph schema", tools.schema)):
        server.add_tool(fn, name=name, title=title, annotations=READ_ONLY, structured_output=False)
    return server, tools


def serve(cfg: Config) -> None:
    """Serve kb over stdio until the client closes the connection."""
    server, tools = build_server(cfg)
    try:
        server.run("stdio")
    finally:
        tools.close()
