"""The graph store: kb's domain operations on Neo4j (notes, chunks, links, embeddings, search)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
from neo4j import exceptions as nx

from kb import cypher, vectorfile
from kb.config import Config
from kb.errors import StoreError, redact_uri

MIN_VERSION = (5, 13)  # vector indexes in Community


@dataclass(frozen=True)
class Connection:
    uri: str
    user: str
    password: str
    database: str


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


class Store:
    """One driver to one database; every method is a domain operation."""

    parallel_reads = True  # every read opens a session of its own, so reads may overlap (the driver is thread-safe)
    hides_material = False  # whether reads see less than the graph holds (the MCP server's public view)

    def __init__(self, conn: Connection, vector_dir: Path | None = None) -> None:
        self.conn = conn
        self.vector_dir = vector_dir  # where this database's vector file lives (kb.vectorfile); None: not used
        try:
            self.driver = neo4j.GraphDatabase.driver(
                conn.uri, auth=(conn.user, conn.password), notifications_min_severity="OFF"
            )
            self.driver.verify_connectivity()
        except nx.AuthError as exc:
            raise StoreError(
                f"Neo4j at {redact_uri(conn.uri)} refused the login for user '{conn.user}': "
                "set NEO4J_PASSWORD (or neo4j_password in the kb config) to the right password"
            ) from exc
        except (nx.ServiceUnavailable, OSError, ValueError, nx.ConfigurationError) as exc:
            raise StoreError(
                f"cannot reach Neo4j at {redact_uri(conn.uri)} "
                f"({_first_line(exc).replace(conn.uri, redact_uri(conn.uri))}): start it with "
                "`kb db start` or set NEO4J_URI to a running server"
            ) from exc
        self.version = self._check_version()
        self.line_index_seen = False

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------
    def run(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        """Run one statement in a write transaction and return its rows."""
        with self.driver.session(database=self.conn.database) as session:
            return session.execute_write(lambda tx: [r.data() for r in tx.run(statement, unlogged(params))])

    def read(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        """Run one read-only statement as an auto-commit transaction (one round trip less than a managed one), its
        parameters in one map (cypher.boxed: one plan, whatever their sizes)."""
        with self.driver.session(database=self.conn.database, default_access_mode=neo4j.READ_ACCESS) as session:
            return [r.data() for r in session.run(*boxed(statement, params))]

    def read_maps(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        """read() for a statement that returns only maps, lists and plain values (never a node, relationship or
        path): the records as the driver decoded them, without data()'s second walk over every value (1.5 ms of
        graph search's one record)."""
        with self.driver.session(database=self.conn.database, default_access_mode=neo4j.READ_ACCESS) as session:
            return [dict(r) for r in session.run(*boxed(statement, params))]

    def run_batch(self, statements: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Several statements in one transaction: all of them land, or none."""

        def work(tx: neo4j.ManagedTransaction) -> None:
            for query, params in statements:
                tx.run(query, unlogged(params)).consume()

        with self.driver.session(database=self.conn.database) as session:
            session.execute_write(work)

    def run_autocommit(self, statement: str, **params: Any) -> None:
        with self.driver.session(database=self.conn.database) as session:
            session.run(statement, unlogged(params)).consume()

    def _check_version(self) -> str:
        """The server's version from the login verify_connectivity made (its agent, "Neo4j/5.26.31"): no query."""
        try:
            agent = self.driver.get_server_info().agent
        except (nx.Neo4jError, nx.DriverError) as exc:
            raise StoreError(f"Neo4j at {self.conn.uri}: {_first_line(exc)}") from exc
        version = agent.partition("/")[2] or "0"
        if _version_tuple(version) < MIN_VERSION:
            raise StoreError(
                f"Neo4j at {self.conn.uri} is version {version}; kb needs 5.13 or newer for "
                "vector indexes: upgrade the server (5.26 LTS or a current release)"
            )
        return version

    # -- schema and metadata -------------------------------------------
    def init_schema(self) -> None:
        """Create constraints and indexes (idempotent) and record the schema version."""
        recorded = self.get_meta("schema").get("version")
        if recorded is not None and recorded < 2:
            self.run_autocommit(cypher.drop_fulltext_index())  # its definition changed in version 2
        if recorded is not None and recorded < 3:
            self.run_autocommit(cypher.backfill_folder_keys())
        if recorded is not None and recorded < 4:
            for stmt in cypher.passage_upgrade():
                self.run_autocommit(stmt)
        if recorded is not None and recorded < 5:
            self.run_autocommit(cypher.passage_search_upgrade())
            churn = int(self.get_meta("indexes").get("churn", 0)) + self.counts()["passages"]
            self.set_meta("indexes", {"churn": churn})  # every entry rewritten: the refresh rebuilds the indexes
        for stmt in cypher.schema_statements():
            self.run_autocommit(stmt)
        self.set_meta("schema", {"version": cypher.SCHEMA_VERSION})
        self.await_indexes()

    def await_indexes(self, seconds: int = 300) -> None:
        self.run_autocommit(cypher.await_indexes(seconds))

    def get_meta(self, key: str) -> dict[str, Any]:
        rows = self.read(cypher.get_meta(), key=key)
        return dict(rows[0]["props"]) if rows else {}

    def set_meta(self, key: str, props: Mapping[str, Any]) -> None:
        self.run(cypher.set_meta(), key=key, props=dict(props))

    def index_names(self) -> list[str]:
        return [r["name"] for r in self.read(cypher.index_names())]

    # -- notes ----------------------------------------------------------
    def note_states(self) -> dict[str, dict[str, Any]]:
        rows = self.read(cypher.note_states())[0]["states"]
        return {p: {"path": p, "hash": h, "size": s, "mtime": m} for p, h, s, m in rows}

    def counts(self) -> dict[str, int]:
        rows = self.read(cypher.counts())
        return {k: int(v) for k, v in rows[0].items()}

    def missing_report(self) -> list[dict[str, Any]]:
        rows = self.read(cypher.missing_report())
        keys = ("key", "name", "kind", "links", "sources")
        return [dict(zip(keys, row)) for row in (rows[0]["rows"] if rows else [])]

    def note_aliases(self) -> list[tuple[str, list[str]]]:
        return [(r["path"], list(r["aliases"])) for r in self.read(cypher.aliases())]

    def notes_with_warnings(self) -> list[dict[str, Any]]:
        return self.read(cypher.notes_with_warnings())

    def note_real_paths(self, private_only: bool = False) -> list[tuple[str, str]]:
        """Each note's path and, for a symlink, the path of the note it points at (or only private notes)."""
        return [(r["path"], r["real"]) for r in self.read(cypher.note_real_paths(private_only))]

    def raw_links(self) -> Iterator[dict[str, Any]]:
        yield from self.read(cypher.all_raw_links())

    def raw_links_suspect(self) -> Iterator[dict[str, Any]]:
        yield from self.read(cypher.suspect_raw_links())

    def clear(self) -> None:
        """Delete every node, then recreate the search indexes empty: deleted entries would otherwise keep
        weighing in Lucene's term statistics and the vector graph, so rankings would depend on history."""
        self.run_autocommit(cypher.delete_everything())
        self.rebuild_search_indexes(vectors=False)

    def holds_chunks(self) -> bool:
        return bool(self.read(cypher.holds_chunks())[0]["any"])

    def set_bulk_indexes(self, present: bool) -> None:
        """Drop the indexes a first build writes into none of (cypher.bulk_indexes), or create them (idempotent)
        and wait until they are filled from the nodes."""
        for stmt in cypher.bulk_indexes() if present else cypher.drop_bulk_indexes():
            self.run_autocommit(stmt)
        if present:
            self.await_indexes(3600)

    def rebuild_search_indexes(self, vectors: bool = True) -> None:
        """Drop and recreate the full-text indexes (and, with `vectors`, the passage vector indexes at the
        recorded dimensions); Neo4j repopulates them from the nodes."""
        dims = self.get_meta("embedder").get("dimensions") if vectors else None
        for stmt in cypher.drop_search_indexes():
            self.run_autocommit(stmt)
        for stmt in cypher.fulltext_indexes() + (cypher.vector_indexes(int(dims)) if dims else []):
            self.run_autocommit(stmt)
        self.await_indexes(3600)  # a large vault's vectors take minutes to index again

    # -- embeddings -----------------------------------------------------
    def pending_passages(self, limit: int) -> list[dict[str, Any]]:
        return self.read(cypher.pending_passages(), limit=limit)

    def has_vectors(self) -> bool:
        return bool(self.read(cypher.embedded_passages())[0]["any"])

    def set_embeddings(self, rows: list[dict[str, Any]], embedder: str) -> None:
        self.run(cypher.set_embeddings(), rows=rows, embedder=embedder)

    def mark_all_pending(self) -> None:
        self.run_autocommit(cypher.mark_all_pending())

    def public_vector_listing(self) -> list[vectorfile.Listed]:
        """Every public passage holding a vector, with what the vector file keeps beside it, in id order."""
        passages_query, chunks_query = cypher.public_vector_listing()
        passages, chunks = self.read(passages_query)[0], self.read(chunks_query)[0]
        facets = {
            cid: (path, date or None, key, tuple(sorted(t for t in tags.split("\n") if t)))
            for cid, path, date, key, tags in zip(
                chunks["ids"], chunks["paths"], chunks["dates"], chunks["keys"], chunks["tags"], strict=True
            )
        }
        out = []
        for pid, digest in zip(passages["ids"], passages["hashes"], strict=True):
            facet = facets.get(pid.rsplit(":", 1)[0])
            if facet is None:
                raise StoreError("the graph changed while kb listed its vectors: run `kb refresh` again")
            out.append(vectorfile.Listed(pid, facet[0], digest, facet[1], facet[2], facet[3]))
        return sorted(out, key=lambda row: row.passage)

    def public_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return {r["id"]: r["vec"] for r in self.read(cypher.public_vectors(), ids=list(ids))}

    def vector_state(self) -> tuple[int, str | None]:
        """How many passages the graph holds, and the stamp of the vector file it vouches for (or None)."""
        rows = self.read(cypher.vector_state(), key=vectorfile.META_KEY)
        return (int(rows[0]["n"]), rows[0]["stamp"]) if rows else (0, None)

    def ensure_vector_index(self, dims: int) -> None:
        for stmt in cypher.vector_indexes(dims):
            self.run_autocommit(stmt)
        self.await_indexes()

    def drop_vector_index(self) -> None:
        for stmt in cypher.drop_vector_indexes():
            self.run_autocommit(stmt)


# Above EXACT_VECTOR_MAX the index is asked for this many times the candidates kept (bench/vector_recall.py, 1,500
# notes, 20,413 passages: recall of the exact top 100 fresh / after every passage was rewritten 0.955 / 0.948 at 2x,
# 0.979 / 0.978 at 4x, 0.991 / 0.994 at 8x; bench/search_latency.py at 13,284 notes: p50 75.6, 86.3, 101.1 ms)
VECTOR_OVERFETCH = 4
# Up to this many passages the vector leg scores every one (about 19 µs each here: 20 ms at 1,000): the index is
# approximate, and rebuilt over a rewritten graph it missed a true neighbour (ranks 25-90) of the top 100 for 29
# of 592 questions over the shared vault, where the first build missed none, so rankings followed the history
EXACT_VECTOR_MAX = 1000
FILTERED_OVERFETCH = 10  # a filter passing one passage in ten still fills the list from the index


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def connection_for(cfg: Config) -> Connection:
    """The server to use: the configured one, else kb's managed server (started if needed)."""
    if cfg.neo4j_uri:
        if not cfg.neo4j_password:
            raise StoreError(
                f"NEO4J_URI is {redact_uri(cfg.neo4j_uri)} but no password is set: set NEO4J_PASSWORD "
                "or neo4j_password in the kb config"
            )
        return Connection(cfg.neo4j_uri, cfg.neo4j_user, cfg.neo4j_password, cfg.neo4j_database)
    from kb import server

    info = server.start(cfg)
    return Connection(info.uri, info.user, info.password, cfg.neo4j_database)


def boxed(statement: str, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A read statement and its parameters as sent: all of them in one map (cypher.boxed)."""
    return cypher.boxed(statement), unlogged({cypher.BOXED: dict(params)})


class _Unlogged(list[Any]):
    """A list parameter shown by its length: the driver formats every RUN's parameters for its debug log before
    it knows whether that log is on (`" ".join(map(repr, fields))`)."""

    def __repr__(self) -> str:
        return f"<{len(self)} items>"


class _UnloggedMap(dict[str, Any]):
    """A map parameter shown by its keys (see _Unlogged)."""

    def __repr__(self) -> str:
        return f"<map of {', '.join(sorted(self))}>"


def unlogged(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters as sent, their lists and maps repr'd by size: the same values on the wire (the packer takes
    subclasses), but no repr of every row's text and vector per statement: kb's own CPU in a re-derive of 13,284
    notes 13.2-13.4 -> 8.3-8.9 s (bench vault, warm server, runs in turns). A driver debug log shows sizes, not
    private text."""
    return {
        k: _Unlogged(v) if isinstance(v, list) else _UnloggedMap(v) if isinstance(v, dict) else v
        for k, v in params.items()
    }


def vector_dir_for(cfg: Config) -> Path:
    """The vector file's folder in the kb home, one per database (kb's managed server, or a configured one)."""
    key = hashlib.sha256(f"{cfg.neo4j_uri or 'managed'}\x00{cfg.neo4j_database}".encode()).hexdigest()[:12]
    return cfg.home / "vectors" / key


def open_store(cfg: Config) -> Store:
    return Store(connection_for(cfg), vector_dir_for(cfg))


def _rows(store: Store, statement: str, **params: Any) -> list[dict[str, Any]]:
    return store.read(statement, **params)


def _without_hash(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "hash"}


def _scan_params(
    vec: list[float], limit: int, active: Mapping[str, Any], filters: Mapping[str, Any], private: bool
) -> tuple[tuple[bool, bool, bool, bool], dict[str, Any]]:
    """Which filters are active (folder, tag, since, until) and the parameters of a filtered vector query."""
    folder = active.get("folder")
    flags = ("folder" in active, "tag" in active, "since" in active, "until" in active)
    params = {
        **dict(filters),
        "vec": vec,
        "limit": limit,
        "private": private,
        "folder_key": f"{folder.strip('/')}/" if folder else None,
    }
    return flags, params


class SearchIndex:
    """Read-only ranked look-ups over chunks: full-text and vector, with optional filters."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def parallel(self) -> bool:
        """Whether two look-ups may run at once, each in a session of its own (not so for a store whose calls read
        through one transaction, as the MCP server's does)."""
        return self.store.parallel_reads

    def keyword(self, lucene: str, limit: int) -> list[dict[str, Any]]:
        """Passages by the full-text index, best first; each row names its chunk (`id`) and `passage`."""
        return _rows(self.store, cypher.fulltext_passages(), query=lucene, limit=limit)

    def keyword_chunks(self, lucene: str, limit: int) -> list[dict[str, Any]]:
        """Whole chunks by their full-text index, best first (rows as `keyword`, without `passage`)."""
        return _rows(self.store, cypher.fulltext_chunks(), query=lucene, limit=limit)

    def vector(
        self, vec: list[float], limit: int, filters: Mapping[str, Any] | None = None, private: bool = False
    ) -> list[dict[str, Any]]:
        """Nearest passages (rows as `keyword`), of the public index and, with `private`, the private one."""
        active = {k: v for k, v in (filters or {}).items() if v not in (None, "")}
        total, matrix = self._state()
        exact = total <= EXACT_VECTOR_MAX
        rows = []
        for index_private in (False, True) if private else (False,):
            if matrix is not None and not index_private:
                rows += self._from_matrix(matrix, vec, limit, active)
            elif exact:
                rows += self._scan(vec, limit, active, filters or {}, index_private)
            elif active:
                rows += self._filtered(vec, limit, active, filters or {}, index_private)
            else:  # the index is approximate (HNSW): asking it for more than we keep makes the top nearly exact
                query = cypher.vector_passages(private=index_private)
                rows += _rows(self.store, query, vec=vec, limit=limit, candidates=limit * VECTOR_OVERFETCH)
        # the top `limit` of the union is within the two top-`limit` lists
        return sorted(rows, key=lambda r: (-r["score"], r["passage"]))[:limit] if private else rows

    def matrix(self) -> vectorfile.Matrix | None:
        """The vector file the public vector leg reads, when the graph vouches for it (else None: ask Neo4j)."""
        return self._state()[1]

    def _state(self) -> tuple[int, vectorfile.Matrix | None]:
        """How many passages the graph holds, and the vector file to read (None when absent or stale)."""
        if self.store.vector_dir is None:
            return self.passages(), None
        total, stamp = self.store.vector_state()
        return total, vectorfile.load(self.store.vector_dir, stamp) if stamp else None

    def _from_matrix(
        self,
        matrix: vectorfile.Matrix,
        vec: list[float],
        limit: int,
        active: Mapping[str, Any],
    ) -> list[dict[str, Any]]:
        """The nearest public passages by the vector file that pass the filters (it holds each passage's folder,
        tags and date). A store that hides material from its reader (the MCP server's view) confirms each in the
        graph as that reader sees it (same hash, visible), reading more while fewer than `limit` are."""
        rows = matrix.nearest(vec, limit, active)
        if not self.store.hides_material:  # the stamp vouches for every row: nothing to confirm
            return [_without_hash(r) for r in rows]
        want = limit
        while True:  # the file filtered already: the view only has to show each row, with the same hash
            ids = [r["passage"] for r in rows]
            held = {r["passage"]: r["hash"] for r in _rows(self.store, cypher.visible_passage_hashes(), ids=ids)}
            kept = [_without_hash(r) for r in rows if held.get(r["passage"]) == r["hash"]]
            if len(kept) >= limit or len(rows) < want:
                return kept[:limit]
            want *= 4
            rows = matrix.nearest(vec, want, active)

    def passages(self) -> int:
        """How many passages the graph holds (Neo4j's count store: no scan)."""
        rows = _rows(self.store, cypher.passage_count())
        return int(rows[0]["n"]) if rows else 0

    def _filtered(
        self, vec: list[float], limit: int, active: Mapping[str, Any], filters: Mapping[str, Any], private: bool
    ) -> list[dict[str, Any]]:
        """Filtered nearest passages of one index: its nearest candidates that pass the filters when at least
        `limit` of them do (then they are the filtered top), else an exact scan of the passages that pass."""
        flags, params = _scan_params(vec, limit, active, filters, private)
        rows = _rows(
            self.store,
            cypher.vector_passages_prefiltered(*flags, private=private),
            candidates=limit * FILTERED_OVERFETCH,
            **params,
        )
        if len(rows) >= limit:
            return rows
        return _rows(self.store, cypher.vector_chunks_filtered(*flags, private=private), **params)

    def _scan(
        self, vec: list[float], limit: int, active: Mapping[str, Any], filters: Mapping[str, Any], private: bool
    ) -> list[dict[str, Any]]:
        """The exact nearest passages of one index's property that pass the filters (any), every one scored."""
        flags, params = _scan_params(vec, limit, active, filters, private)
        return _rows(self.store, cypher.vector_chunks_filtered(*flags, private=private), **params)

    def chunks(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in _rows(self.store, cypher.chunk_details(), ids=list(ids))}


class KnowledgeStore:
    """The knowledge layer's reads and writes (entities, typed relationships, claims)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def chunks(self) -> list[dict[str, Any]]:
        rows = self.store.read(cypher.knowledge_chunks())[0]["rows"]
        keys = ("id", "text", "breadcrumb", "path", "date", "folder", "private", "ord", "updated")
        return [dict(zip(keys, r)) for r in rows]

    def clear(self) -> None:
        """The schema of the layer in place and the layer itself gone (entities, claims and their edges). The
        layer's signature is blanked first, so a run killed before the layer is written again rewrites it."""
        self.store.set_meta("knowledge", {"signature": "", "lines_by": None})
        for stmt in cypher.knowledge_schema():
            self.store.run_autocommit(stmt)
        for stmt in cypher.delete_knowledge():
            self.store.run_autocommit(stmt)

    def replace(
        self,
        entities: list[dict[str, Any]],
        mentions: list[dict[str, Any]],
        relationships: dict[str, list[dict[str, Any]]],
        claims: list[dict[str, Any]],
        claim_edges: dict[str, list[dict[str, str]]] | None = None,
        described_by: list[dict[str, str]] | None = None,
        batch: int = 5000,
    ) -> None:
        """Rebuild the layer: delete it, then write it again in batches (nodes first)."""
        self.clear()
        edges = claim_edges or {}
        by_chunk: dict[str, list[str]] = {}
        for m in mentions:
            by_chunk.setdefault(m["chunk"], []).append(m["entity"])
        grouped = [{"chunk": c, "entities": by_chunk[c]} for c in sorted(by_chunk)]
        steps = [
            (cypher.create_entities(), entities),
            (cypher.create_mentions(), grouped),
            *((cypher.create_relationships(t), relationships[t]) for t in sorted(relationships)),
            (cypher.create_claims(), claims),
            *((cypher.create_claim_edges(t), edges[t]) for t in sorted(edges)),
            (cypher.create_described_by(), described_by or []),
        ]
        for query, rows in steps:
            self._write(query, rows, batch)
        self.store.run_autocommit(cypher.label_hubs())
        self.store.run_autocommit(cypher.label_owner())

    def _write(self, query: str, rows: list[dict[str, Any]], batch: int = 5000) -> None:
        """One UNWIND statement over `rows`, a transaction per `batch` rows."""
        for start in range(0, len(rows), batch):
            self.store.run(query, rows=rows[start : start + batch])

    def counts(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.store.read(cypher.knowledge_counts())[0].items()}

    def owner(self) -> dict[str, str] | None:
        """The entity the vault is about ({key, name}), if the build told one apart."""
        rows = self.store.read(cypher.owner_entity())
        return {"key": rows[0]["key"], "name": rows[0]["name"]} if rows else None

    def find_entities(self, name: str) -> list[dict[str, Any]]:
        return [r["e"] for r in self.store.read(cypher.entity_candidates(), name=name)]

    def name_vectors(self) -> dict[str, list[float]]:
        return {r["name"]: r["v"] for r in self.store.read(cypher.name_vectors())}

    def set_name_vectors(self, vectors: Mapping[str, list[float]]) -> None:
        self._write(cypher.set_name_vectors(), [{"key": k, "vec": v} for k, v in sorted(vectors.items())])

    def line_vectors(self) -> dict[str, list[float]]:
        return {r["h"]: r["v"] for r in self.store.read(cypher.line_vectors())}

    def has_line_index(self) -> bool:
        """Whether claim lines have a vector index (remembered once seen, for a long-lived server)."""
        if not self.store.line_index_seen:
            self.store.line_index_seen = cypher.CLAIM_LINE_INDEX in self.store.index_names()
        return self.store.line_index_seen

    def ensure_line_index(self, dims: int, fresh: bool) -> None:
        """The claim-line vector index for this embedder's dimensions; `fresh` drops one made by another."""
        if fresh:
            self.store.run_autocommit(cypher.drop_index(cypher.CLAIM_LINE_INDEX))
        self.store.run_autocommit(cypher.claim_line_index(dims))
        self.store.await_indexes()

    def graph_context(
        self,
        question: str,
        words: str,
        pronouns: Sequence[str],
        chunk_ids: Sequence[str],
        seeds: int,
        two_hops: bool,
        types: Sequence[str],
        asked: Sequence[str],
        qvec: list[float] | None,
        limit: int,
        seed_limit: int,
        per_entity: int,
        others: int,
        include_private: bool,
        claim_chunk_ids: Sequence[str] = (),
        claim_stems: Sequence[str] = (),
        per_chunk: int = 3,
        as_of: str | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The entities a question names (found by `words`) and seeds, their links, typed two-hop links and
        claims (with `as_of`, those known that day), and (`chunk_claims`) each of `claim_chunk_ids`' `per_chunk`
        claims nearest `qvec` and those of an attribute named by `claim_stems`, and the vault's `owner` (owner(),
        as a list of none or one): in one round trip."""
        vectors = qvec is not None and self.has_line_index()
        row = self.store.read_maps(
            cypher.graph_context(vectors),
            question=question,
            words=words,
            pronouns=list(pronouns),
            chunk_ids=list(chunk_ids),
            seeds=seeds,
            two_hops=two_hops,
            types=list(types),
            asked=list(asked),
            qvec=qvec,
            limit=limit,
            seed_limit=seed_limit,
            per_entity=per_entity,
            others=others,
            fetch=max(100, others * 4),
            private=include_private,
            claim_chunk_ids=list(claim_chunk_ids),
            claim_stems=list(claim_stems),
            per_chunk=per_chunk,
            claim_fetch=300,
            as_of=as_of,
        )[0]
        return {k: row[k] for k in ("named", "seeds", "links", "hops", "claims", "chunk_claims", "owner")}

    def chunk_dates(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.store.read(cypher.chunk_dates(), ids=list(ids))}

    def shortest_path(self, a: str, b: str) -> list[dict[str, Any]]:
        return self.store.read(cypher.shortest_path(), a=a, b=b)

    def all_entities_with_merges(self) -> list[dict[str, Any]]:
        return [r["e"] for r in self.store.read(cypher.entities_with_merges())]

    def entity_claims(self, key: str) -> list[dict[str, Any]]:
        return self.store.read(cypher.entity_claims(), key=key)

    def entity_relationships(self, key: str) -> list[dict[str, Any]]:
        return self.store.read(cypher.entity_relationships(), key=key)
