"""kb's read-only MCP server (stdio): `search`, `cypher`, `get_note` and `schema` over the vault's graph.

Privacy and read-only are enforced here and in kb.sandbox, not by the tool descriptions:
- every tool reads through kb.sandbox.PublicStore: one transaction per call that first removes private
  notes, chunks, claims, private-only entities and private evidence from its own view, then runs the
  tool's reads, then is rolled back, never committed: a query cannot see private text, whatever it is
  (private material a refresh commits during the call makes the call run again);
- ad-hoc Cypher first passes the text checks in kb.readonly (size and nesting caps included), then
  EXPLAIN in a read transaction: only query type "r" runs;
- every call has a wall-time deadline (`mcp_timeout_s`, at most 30 s): the server-side transaction
  timeout, and a client-side deadline that answers with a one-line error and terminates the call's
  transactions on the server;
- responses are capped at 8,000 tokens (whole rows dropped, with a notice; `mcp_max_tokens` lowers it)
  and long numeric lists (embeddings) are left out; the question `search` echoes and the text
  `get_note` returns are bounded too;
- `get_note` reads only public notes that are in the graph, by a vault-relative path that stays in the
  vault and does not resolve into a private folder.

On Neo4j Enterprise or Desktop the public view needs a user that may write (its writes are always rolled
back); kb's managed server is Community Edition, with a single admin user.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import neo4j
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from neo4j import exceptions as nx
from pydantic import Field

from kb import __version__, cypher
from kb.config import Config
from kb.embed import Embedder, make_embedder
from kb.embeddings import require_built_by
from kb.errors import ConfigError, KbError
from kb.readonly import (
    Refused,
    check_params,
    check_query_type,
    check_text,
    clean,
    collect_rows,
    dumps,
    in_folders,
    limits_for,
    vault_file,
)
from kb.sandbox import PublicStore, new_call_tag, retrying, set_call_tag
from kb.search.hybrid import Filters, iso_date
from kb.search.modes import run_search
from kb.search.results import NoteResult, shown_score
from kb.search.warm import warm_searches
from kb.store import connection_for, vector_dir_for
from kb.tokens import count_tokens, truncate_tokens

T = TypeVar("T")
log = logging.getLogger("kb.mcp")
SAMPLE = 200  # nodes or relationships sampled per label for the schema's property keys
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DATE = r"^\d{4}-\d{2}-\d{2}$"
GRACE_S = 1.0  # the client-side deadline: the server's transaction timeout plus this
MAX_QUESTION_CHARS = 2000  # a longer question is searched by its first 2,000 characters
ECHO_CHARS = 200  # the question `search` echoes back
MAX_ERROR_CHARS = 300
READ_BYTES_PER_TOKEN = 16  # get_note reads at most this many bytes per token of its budget


class ToolFailure(Exception):
    """An expected failure whose message goes back to the agent as a tool error."""


ReadOnlyStore = PublicStore  # the name earlier releases used


def _date(value: str | None, name: str) -> str | None:
    try:
        return iso_date(value, name)
    except ConfigError as exc:
        raise ToolFailure(str(exc)) from exc


def _timeout_text(timeout_s: float) -> str:
    return (
        f"timeout: the query did not finish within {timeout_s:g} s and was stopped: "
        "add LIMIT, narrow the MATCH, or aggregate"
    )


def _one_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= MAX_ERROR_CHARS else line[:MAX_ERROR_CHARS] + "…"


def error_text(exc: Exception, timeout_s: float) -> str:
    """What the agent reads for a failed call: one line, the server's message cut short."""
    if isinstance(exc, (Refused, ToolFailure, KbError)):
        return _one_line(str(exc))
    if isinstance(exc, nx.Neo4jError):
        code = exc.code or ""
        if "TimedOut" in code or code.endswith(".Terminated"):
            return _timeout_text(timeout_s)
        if code.endswith("Statement.AccessMode"):
            return "refused: writes are not allowed (the server rejected a write in a read transaction)"
        if "OutOfMemory" in code:
            return (
                "out of memory: the query needed more memory than the server allows and was stopped: "
                "build smaller values, add LIMIT, or aggregate"
            )
        if isinstance(exc, nx.CypherSyntaxError):
            return _one_line(f"Cypher syntax error: {exc.message}")
        return _one_line(f"Neo4j error {code}: {exc.message or ''}")
    if isinstance(exc, nx.DriverError):
        return _one_line(f"Neo4j is unreachable ({type(exc).__name__}: {exc}): check it with `kb db status`")
    log.exception("unexpected error in a kb tool")
    return _one_line(f"error: {type(exc).__name__}: {exc}")


def _result(payload: Any = None, error: str | None = None) -> CallToolResult:
    if error is not None:
        return CallToolResult(content=[TextContent(type="text", text=error)], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=dumps(payload))])


def run_with_deadline(
    work: Callable[[], Any], timeout_s: float, on_timeout: Callable[[str], object] = lambda tag: None
) -> CallToolResult:
    """Run one tool body in a thread tagged for termination; past the deadline the call is abandoned, its
    server transactions are terminated, and the agent gets a one-line timeout error."""
    tag = new_call_tag()
    box: dict[str, Any] = {}

    def target() -> None:
        set_call_tag(tag)
        try:
            box["payload"] = work()
        except Exception as exc:  # every failure becomes a tool error, never a crashed server
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"kb-call-{tag}", daemon=True)
    thread.start()
    thread.join(timeout_s + GRACE_S)
    if thread.is_alive():
        on_timeout(tag)
        return _result(error=_timeout_text(timeout_s))
    if "error" in box:
        return _result(error=error_text(box["error"], timeout_s))
    return _result(box["payload"])


def _trim_search(payload: dict[str, Any], max_tokens: int) -> None:
    """Drop whole chunks (then emptied notes), then graph lines, from the end until the response fits."""
    dropped, lines = 0, payload.get("graph_lines", [])
    notes = payload["results"]
    while (notes or lines) and count_tokens(dumps(payload)) > max_tokens:
        if notes:
            notes[-1]["chunks"].pop()
            dropped += 1
            if not notes[-1]["chunks"]:
                notes.pop()
            payload["notice"] = f"{dropped} lower-ranked chunks were cut to stay within {max_tokens} tokens"
        else:
            lines.pop()
            payload["notice"] = f"every chunk and some graph lines were cut to stay within {max_tokens} tokens"


def _search_note(note: NoteResult) -> dict[str, Any]:
    path, date = note.path, note.date
    chunks = [
        {
            "citation": f"{path} ({c.date or date or 'undated'}) › {c.breadcrumb}",
            "breadcrumb": c.breadcrumb,
            "date": c.date,
            "text": c.text,
        }
        for c in note.chunks
    ]
    out: dict[str, Any] = {
        "rank": note.rank,
        "path": path,
        "title": note.title,
        "date": date,
        "score": shown_score(note.score),
        "chunks": chunks,
    }
    # graph mode moved it: it states the value asked for, or only old claims; and how its claims read
    for key, why in (
        ("promoted", note.promoted),
        ("demoted", note.demoted),
        ("standing", note.standing),
        ("standing_claim", note.standing_claim),
    ):
        if why:
            out[key] = why
    return out


def _props(tx: neo4j.ManagedTransaction, pattern: str) -> dict[str, list[str]]:
    """Property keys and value types seen on a sample of the nodes or relationships in `pattern`."""
    return {r["k"]: r["types"] for r in tx.run(cypher.property_sample(pattern, SAMPLE))}


def read_schema(tx: neo4j.ManagedTransaction) -> dict[str, Any]:
    """Labels, relationship types, property keys per label and type, and indexes."""
    q = cypher.quote_name
    labels = [r["label"] for r in tx.run(cypher.schema_labels())]
    types = [r["t"] for r in tx.run(cypher.schema_relationship_types())]
    nodes = {
        label: {
            "count": tx.run(cypher.label_count(label)).single(strict=True)["n"],
            "properties": _props(tx, f"(x:{q(label)})"),
        }
        for label in labels
    }
    rels = {}
    for t in types:
        pairs = tx.run(cypher.relationship_endpoints(t, SAMPLE))
        rels[t] = {
            "count": tx.run(cypher.relationship_count(t)).single(strict=True)["n"],
            "patterns": sorted({f"(:{':'.join(p['f'])})-[:{t}]->(:{':'.join(p['t'])})" for p in pairs}),
            "properties": _props(tx, f"()-[x:{q(t)}]->()"),
        }
    indexes = [r.data() for r in tx.run(cypher.schema_indexes())]
    return {
        "labels": labels,
        "relationship_types": types,
        "nodes": nodes,
        "relationships": rels,
        "indexes": indexes,
        "notes": [
            "Long numeric lists (Chunk.embedding) are left out of cypher results.",
            f"Full text: {cypher.FULLTEXT_EXAMPLE}",
        ],
    }


class WarmStopped(KbError):
    """The warm-up stopped because a tool call came."""


class KbTools:
    """The four tools over one lazily opened public-view store and embedder."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.limits = limits_for(cfg.mcp_max_tokens, cfg.mcp_timeout_s)
        self._lock = threading.Lock()
        self._store: PublicStore | None = None
        self._embedder: Embedder | None = None
        # the warm-up gives way to the agent: views hide private material by write locks, so a warm search's view
        # and a call's wait on each other (a call waited past a 2 s deadline on a loaded machine); a call stops the
        # warm-up before its next search and waits only for the one in flight
        self._calls = threading.Event()
        self._warm_step = threading.Lock()

    def store(self) -> PublicStore:
        with self._lock:
            if self._store is None:
                store = PublicStore(
                    connection_for(self.cfg),
                    self.limits.timeout_s,
                    self.cfg.private_folders,
                    vector_dir_for(self.cfg),
                )
                store.warm()
                self._store = store
            return self._store

    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.cfg)
            return self._embedder

    def warm(self) -> None:
        """Connect, load the embedder and plan the search statements before the first call (in a thread at start:
        the first search on a just-started server otherwise waits seconds for them)."""
        try:
            store, emb = self.store(), self.embedder()
            warm_searches(store, emb, each=lambda: self._warm_view(store))
        except Exception:  # a call stopped it, or the first call meets the same failure and reports it
            pass

    @contextlib.contextmanager
    def _warm_view(self, store: PublicStore) -> Iterator[object]:
        """One warm search's view, unless a call has come: then the warm-up stops (WarmStopped)."""
        with self._warm_step:
            if self._calls.is_set():
                raise WarmStopped("a tool call came: the warm-up gives way")
            with store.view() as tx:
                yield tx

    def _give_way(self) -> None:
        """Stop the warm-up and wait for its search in flight, if any."""
        self._calls.set()
        with self._warm_step:
            pass

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def _call(self, work: Callable[[], Any], embedder: bool = False) -> CallToolResult:
        """Connect (and load the embedder) first, then run `work` within the wall-time deadline."""
        try:
            store = self.store()
            if embedder:
                self.embedder()
        except Exception as exc:
            return _result(error=error_text(exc, self.limits.timeout_s))
        self._give_way()
        return run_with_deadline(lambda: retrying(work), self.limits.timeout_s, store.terminate)

    def search(
        self,
        question: Annotated[str, Field(min_length=1, description="What to look for, in plain words.")],
        k: Annotated[int, Field(ge=1, le=50, description="How many notes to return.")] = 10,
        folder: Annotated[str | None, Field(description="Only notes in this folder and below.")] = None,
        tag: Annotated[str | None, Field(description="Only notes with this tag (nested tags count).")] = None,
        since: Annotated[
            str | None, Field(pattern=DATE, description="Only chunks dated on or after YYYY-MM-DD.")
        ] = None,
        until: Annotated[
            str | None, Field(pattern=DATE, description="Only chunks dated on or before YYYY-MM-DD.")
        ] = None,
        mode: Annotated[
            Literal["auto", "hybrid", "graph"],
            Field(
                description="auto (default: a rule-based router picks), hybrid (keyword + vector; a question naming "
                "its time has its first notes ordered by date too), or graph "
                "(hybrid plus dated, modality-labelled claim and relationship lines)."
            ),
        ] = "auto",
        as_of: Annotated[
            str | None,
            Field(
                pattern=DATE,
                description="Read the vault as of YYYY-MM-DD: "
                "notes written by then, claims valid then, that day's value "
                "first.",
            ),
        ] = None,
        current: Annotated[bool, Field(description="Leave outdated claims out of the graph lines.")] = False,
    ) -> CallToolResult:
        """Search the vault: ranked notes with dated citations and chunk text; in graph mode also claim
        timelines (current value first, superseded values and plans marked) and relationships with evidence, and
        for each note whose claims it read, how (standing: states / outdated / not_fact / none, with the claim and
        its date)."""
        return self._call(
            lambda: self._search(
                question,
                k,
                Filters(folder, tag, _date(since, "since"), _date(until, "until")),
                mode,
                _date(as_of, "as_of"),
                current,
            ),
            embedder=True,
        )

    def _search(
        self,
        question: str,
        k: int,
        filters: Filters,
        mode: str = "hybrid",
        as_of: str | None = None,
        current: bool = False,
    ) -> dict[str, Any]:
        store, emb = self.store(), self.embedder()
        asked = question[:MAX_QUESTION_CHARS]
        with store.view():
            require_built_by(store, emb, "set KB_EMBEDDER or run `kb refresh --reembed`")
            result = run_search(
                store,
                emb,
                asked,
                mode,
                k,
                filters,
                as_of=as_of,
                current=current,
                ai_chat_folders=self.cfg.ai_chat_folders,
            )
        echo = question if len(question) <= ECHO_CHARS else question[:ECHO_CHARS] + "…"
        payload: dict[str, Any] = {"query": echo, "mode": result.mode, "filters": result.filters}
        if len(question) > MAX_QUESTION_CHARS:
            payload["question_notice"] = (
                f"the question has {len(question)} characters: its first {MAX_QUESTION_CHARS} were searched"
            )
        if result.router is not None:
            payload["router"] = result.router.to_json()
        if result.question is not None and result.question.readings:
            payload["dates_read"] = result.question.readings
        if as_of or current:
            payload["as_of"], payload["current_only"] = as_of, current
        if result.graph is not None:
            payload["graph_lines"] = [line.text for line in result.graph.lines]
        payload["results"] = [_search_note(n) for n in result.notes]
        _trim_search(payload, self.limits.max_tokens)
        return payload

    def cypher(
        self,
        query: Annotated[str, Field(min_length=1, description="One read-only Cypher statement.")],
        params: Annotated[dict[str, Any] | None, Field(description="Query parameters ($name).")] = None,
    ) -> CallToolResult:
        """Run one read-only Cypher query (counts, filters, traversals) over the vault's public part; writes
        and admin commands are refused."""
        return self._call(lambda: self._cypher(query, params or {}))

    def _cypher(self, query: str, params: dict[str, Any]) -> dict[str, Any]:
        check_text(query)
        check_params(params)
        store = self.store()
        check_query_type(store.query_type(query, params))
        return store.read_tx(lambda tx: collect_rows(tx.run(query, params), self.limits.max_tokens))

    def get_note(
        self,
        path: Annotated[
            str,
            Field(
                min_length=1,
                description="Vault-relative path of the note, e.g. 'People/Ann Lee.md' (as search results give it).",
            ),
        ],
    ) -> CallToolResult:
        """One note's full text and its metadata (date, title, tags, aliases, folder) by vault-relative path."""
        return self._call(lambda: self._get_note(path))

    def _get_note(self, path: str) -> dict[str, Any]:
        vault = self.cfg.require_vault()
        rel, file = vault_file(vault, path)
        target = file.relative_to(vault.resolve()).as_posix()
        with self.store().view() as tx:
            rows = tx.run(cypher.notes_by_path(), paths=sorted({rel, target})).data()
        found = {r["path"]: r for r in rows}
        folders = [*self.cfg.private_folders, *(rows[0]["folders"] if rows else [])]
        if rel not in found or target not in found or in_folders(rel, folders) or in_folders(target, folders):
            raise ToolFailure(
                f"no note {path[:200]!r} among the notes agents may read (private notes are never "
                "given out): check the path (search results give it) or run `kb refresh`"
            )
        meta = {k: v for k, v in clean(found[rel]["props"]).items() if k not in ("links_raw", "link_sig", "hash")}
        if isinstance(meta.get("frontmatter"), str):
            meta["frontmatter"] = json.loads(meta["frontmatter"])
        if not file.is_file():
            raise ToolFailure(f"{rel} is in the graph but not on disk (or not a regular file): run `kb refresh`")
        return self._note_payload(rel, meta, file)

    def _note_payload(self, rel: str, meta: dict[str, Any], file: Path) -> dict[str, Any]:
        """The note's text within the token budget; the answer says when it was cut."""
        limit = self.limits.max_tokens * READ_BYTES_PER_TOKEN
        with open(file, "rb") as fh:
            raw = fh.read(limit + 1)
        text = raw[:limit].decode("utf-8", errors="replace")
        payload: dict[str, Any] = {"path": rel, "metadata": meta, "text": text}
        room = max(self.limits.max_tokens - count_tokens(dumps({**payload, "text": ""})) - 60, 0)
        tokens = count_tokens(text)
        if tokens > room or len(raw) > limit:
            payload["text"] = truncate_tokens(text, room)
            more = "more than " if len(raw) > limit else ""
            payload["notice"] = f"the text was cut to {room} of {more}{tokens} tokens (use search for the rest)"
        return payload

    def schema(self) -> CallToolResult:
        """The graph's labels, relationship types, property keys (with value types) per label, and indexes."""
        return self._call(self._schema)

    def _schema(self) -> dict[str, Any]:
        payload = self.store().read_tx(read_schema)
        if count_tokens(dumps(payload)) > self.limits.max_tokens:
            payload = {
                "labels": payload["labels"],
                "relationship_types": payload["relationship_types"],
                "notice": "the full schema is too large: query db.schema.nodeTypeProperties() instead",
            }
        return payload


INSTRUCTIONS = (
    "kb answers questions from the user's Markdown vault. Use `search` first: cite notes by the "
    "citation it gives (path, date, breadcrumb) and prefer recent dates. Use `get_note` for a whole "
    "note, `schema` before writing Cypher, and `cypher` for counts and filters. Everything is read-only, "
    "and notes in the user's private folders are not visible to these tools."
)


def build_server(cfg: Config) -> tuple[MCPServer[Any], KbTools]:
    """The MCP server with the four read-only tools registered."""
    tools = KbTools(cfg)
    server: MCPServer[Any] = MCPServer("kb", instructions=INSTRUCTIONS, version=__version__)
    for name, title, fn in (
        ("search", "Search the vault", tools.search),
        ("cypher", "Read-only Cypher", tools.cypher),
        ("get_note", "Read one note", tools.get_note),
        ("schema", "Graph schema", tools.schema),
    ):
        server.add_tool(fn, name=name, title=title, annotations=READ_ONLY, structured_output=False)
    return server, tools


def serve(cfg: Config) -> None:
    """Serve kb over stdio until the client closes the connection."""
    server, tools = build_server(cfg)
    threading.Thread(target=tools.warm, name="kb-warm", daemon=True).start()
    try:
        server.run("stdio")
    finally:
        tools.close()
