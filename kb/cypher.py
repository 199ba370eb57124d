"""Every Cypher statement kb sends, as pure builder functions (unit-tested as strings)."""

from __future__ import annotations

import functools
import json
import re

from kb.vocabulary import LINK_TYPES

SCHEMA_VERSION = 5  # 4: passages inside chunks (every note is parsed again once to derive them); 5: their search text
FULLTEXT_INDEX = "chunk_text"
VECTOR_INDEX = "chunk_embedding"  # chunks of public notes
PRIVATE_VECTOR_INDEX = "chunk_embedding_private"  # chunks of private notes, searched only on request
PASSAGE_TEXT_INDEX = "passage_text"  # the retrieval unit: full-text over passages
PASSAGE_VECTOR_INDEX = "passage_embedding"  # passages of public notes
PRIVATE_PASSAGE_VECTOR_INDEX = "passage_embedding_private"  # passages of private notes, only on request
PRIVATE_WORD = "kbprivate"

CONSTRAINTS = (
    ("note_path", "Note", "path"),
    ("chunk_id", "Chunk", "id"),
    ("tag_name", "Tag", "name"),
    ("folder_path", "Folder", "path"),
    ("missing_key", "Missing", "key"),
    ("attachment_path", "Attachment", "path"),
    ("kbmeta_key", "KbMeta", "key"),
    ("passage_id", "Passage", "id"),
)
RANGE_INDEXES = (
    ("chunk_hash", "Chunk", "hash"),
    ("note_date", "Note", "date"),
    ("chunk_note", "Chunk", "note_path"),
    ("chunk_folder", "Chunk", "folder_key"),
    ("chunk_date", "Chunk", "date"),
    ("passage_hash", "Passage", "hash"),
    ("passage_folder", "Passage", "folder_key"),
    ("passage_date", "Passage", "date"),
)
# range indexes no write of a first build reads (searches and later refreshes do): left out while it writes
BULK_UNUSED = (
    "note_date",
    "chunk_hash",
    "chunk_folder",
    "chunk_date",
    "passage_hash",
    "passage_folder",
    "passage_date",
)


# a string literal (left as it is) or a parameter; Cypher's escapes are a backslash and a character
_LITERAL_OR_PARAM = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\$(\w+)")
BOXED = "p"  # the one map parameter a boxed statement reads its parameters from


@functools.lru_cache(maxsize=512)
def boxed(statement: str) -> str:
    """The statement with every parameter read from one map parameter, $p ($limit -> $p.limit).

    Neo4j keys its plan cache on the statement and its parameters' types, and a list or string parameter's type
    carries a size bucket (1, 2-10, 11-100, ... elements or characters): a question of another length, or a few
    more chunk ids, planned graph search's statement again, about 1 s each time, on half of the questions of a
    set. A map parameter's type has no size, so one plan serves every call (measured on 30 questions: 15 plans
    of 0.8-1.3 s without, 1 with; the same rows, the same time to run)."""
    return _LITERAL_OR_PARAM.sub(lambda m: f"${BOXED}.{m.group(1)}" if m.group(1) else m.group(0), statement)


def schema_statements() -> list[str]:
    """Constraints and indexes, each idempotent (IF NOT EXISTS)."""
    out = [
        f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
        for name, label, prop in CONSTRAINTS
    ]
    out += range_indexes() + fulltext_indexes()
    return out + knowledge_schema()  # graph search reads these even before anything was extracted


def range_indexes(names: tuple[str, ...] | None = None) -> list[str]:
    """The range indexes (those of `names` only, if given), each idempotent."""
    return [
        f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"
        for name, label, prop in RANGE_INDEXES
        if names is None or name in names
    ]


def bulk_indexes() -> list[str]:
    """The indexes a first build writes into none of and fills once after its writes (full-text, BULK_UNUSED)."""
    return range_indexes(BULK_UNUSED) + fulltext_indexes()


def drop_bulk_indexes() -> list[str]:
    return drop_fulltext_indexes() + drop_indexes(BULK_UNUSED)


def fulltext_indexes() -> list[str]:
    """Chunks (for Cypher users and the Browser), and passages (what search ranks): one `search` field of folder,
    breadcrumb and text, so a title word weighs as often as it occurs, not by the statistics of a title field."""
    analyzer = "OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words'}}"
    return [
        f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (c:Chunk) "
        "ON EACH [c.text, c.breadcrumb, c.title, c.facets, c.privacy] " + analyzer,
        f"CREATE FULLTEXT INDEX {PASSAGE_TEXT_INDEX} IF NOT EXISTS FOR (p:Passage) "
        "ON EACH [p.search, p.facets, p.privacy] " + analyzer,
    ]


def await_indexes(seconds: int) -> str:
    return f"CALL db.awaitIndexes({int(seconds)})"


def index_names() -> str:
    return "SHOW INDEXES YIELD name RETURN name ORDER BY name"


def drop_index(name: str) -> str:
    return f"DROP INDEX {quote_name(name)} IF EXISTS"


def drop_fulltext_index() -> str:
    return f"DROP INDEX {FULLTEXT_INDEX} IF EXISTS"


def drop_indexes(names: tuple[str, ...]) -> list[str]:
    return [f"DROP INDEX {n} IF EXISTS" for n in names]


def drop_fulltext_indexes() -> list[str]:
    """The chunks' and passages' full-text indexes (a first build fills them once, after its writes)."""
    return drop_indexes((FULLTEXT_INDEX, PASSAGE_TEXT_INDEX))


def drop_search_indexes() -> list[str]:
    """Every full-text and vector index of chunks and passages (recreated empty after a clear)."""
    return drop_fulltext_indexes() + drop_vector_indexes()


# Lucene's tokenizer keeps a word whole across these ("kenji's", "2.9", "1,600"), the question's words split at them
# ("Kenji's" asks for kenji): in the passages' search text they are spaces, so "Kenji" finds "Kenji's"
SEARCH_SPLIT = ("'", "\u2019", "\u2018", ".", ",", ":")


def passage_search(folder_key: str, breadcrumb: str, text: str) -> str:
    """The Cypher expression of a passage's full-text field: folder, breadcrumb, text, split as questions are."""
    expr = f"{folder_key} + ' ' + {breadcrumb} + '\n' + {text}"
    for mark in SEARCH_SPLIT:
        expr = f"replace({expr}, {json.dumps(mark, ensure_ascii=False)}, ' ')"
    return expr


def passage_search_upgrade() -> str:
    """Schema 5: every passage's search text written again (the index follows the property)."""
    return (
        "MATCH (p:Passage) CALL (p) { SET p.search = "
        + passage_search("p.folder_key", "p.breadcrumb", "p.text")
        + " } IN TRANSACTIONS OF 5000 ROWS"
    )


def passage_upgrade() -> list[str]:
    """From chunk vectors to passages: every note parsed again by the next refresh (its size no longer
    matches the file), chunk vectors and their indexes gone."""
    return [
        f"DROP INDEX {VECTOR_INDEX} IF EXISTS",
        f"DROP INDEX {PRIVATE_VECTOR_INDEX} IF EXISTS",
        "MATCH (n:Note) CALL (n) { SET n.size = -1 } IN TRANSACTIONS OF 5000 ROWS",
        "MATCH (c:Chunk) CALL (c) { REMOVE c:Pending, c.embedding, c.embedding_private, c.embedder } "
        "IN TRANSACTIONS OF 5000 ROWS",
    ]


def vector_index(dims: int, name: str = VECTOR_INDEX, prop: str = "embedding", label: str = "Chunk") -> str:
    return (
        f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (c:{label}) ON (c.{prop}) "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dims)}, `vector.similarity_function`: 'cosine'}}}}"
    )


def vector_indexes(dims: int) -> list[str]:
    """Public and private passage vectors live in two properties, each with its own index."""
    return [
        vector_index(dims, PASSAGE_VECTOR_INDEX, "embedding", "Passage"),
        vector_index(dims, PRIVATE_PASSAGE_VECTOR_INDEX, "embedding_private", "Passage"),
    ]


CLAIM_LINE_INDEX = "claim_lines"


def claim_line_index(dims: int) -> str:
    """Claim lines' build-time vectors, so graph search finds the claims nearest a question without scoring
    every claim of a large entity."""
    return vector_index(dims, CLAIM_LINE_INDEX, "line_vec", "Claim")


def drop_vector_indexes() -> list[str]:
    """The passage vector indexes, and the chunk ones of graphs built before passages."""
    return drop_indexes((VECTOR_INDEX, PRIVATE_VECTOR_INDEX, PASSAGE_VECTOR_INDEX, PRIVATE_PASSAGE_VECTOR_INDEX))


def set_meta() -> str:
    return "MERGE (m:KbMeta {key: $key}) SET m += $props"


def get_meta() -> str:
    return "MATCH (m:KbMeta {key: $key}) RETURN properties(m) AS props"


def note_states() -> str:
    """One row holding every note's state: far faster to decode than a row per note."""
    return "MATCH (n:Note) RETURN collect([n.path, n.hash, n.size, n.mtime]) AS states"


def touch_notes() -> str:
    return "UNWIND $rows AS row MATCH (n:Note {path: row.path}) SET n.mtime = row.mtime"


def delete_notes() -> str:
    """Remove notes with their chunks; links into them are re-pointed by the link pass."""
    return (
        "UNWIND $paths AS path MATCH (n:Note {path: path}) "
        "OPTIONAL MATCH (c:Chunk)-[:IN_NOTE]->(n) OPTIONAL MATCH (x:Passage)-[:IN_CHUNK]->(c) "
        "WITH n, c, x, x IS NULL AS none DETACH DELETE x, c, n "
        "RETURN sum(CASE WHEN none THEN 0 ELSE 1 END) AS passages"
    )


def clear_note_edges() -> str:
    """Drop a note's outgoing structure edges, and the chunks it no longer has, before it is rewritten."""
    return (
        "UNWIND $rows AS row MATCH (n:Note {path: row.path}) "
        "CALL (n) { MATCH (n)-[r:LINKS_TO|TAGGED|IN_FOLDER|ATTACHES]->() DELETE r } "
        "CALL (n, row) { MATCH (c:Chunk)-[:IN_NOTE]->(n) WHERE NOT c.id IN row.keep "
        "OPTIONAL MATCH (x:Passage)-[:IN_CHUNK]->(c) DETACH DELETE x, c } "
        "CALL (n) { MATCH (c:Chunk)-[r:NEXT_CHUNK]->(:Chunk)-[:IN_NOTE]->(n) DELETE r }"
    )


def upsert_notes(fresh: bool = False) -> str:
    """Notes with their folder and tags. `fresh`: into a graph that holds no note yet (CREATE, no look-up)."""
    return (
        "UNWIND $rows AS row " + ("CREATE" if fresh else "MERGE") + " (n:Note {path: row.path}) "
        "SET n += row.props "
        "WITH n, row MERGE (f:Folder {path: row.folder}) "
        "ON CREATE SET f.name = row.folder_name MERGE (n)-[:IN_FOLDER]->(f) "
        "WITH n, row UNWIND row.tags AS tag MERGE (t:Tag {name: tag}) MERGE (n)-[:TAGGED]->(t)"
    )


def upsert_folders() -> str:
    return (
        "UNWIND $rows AS row MERGE (f:Folder {path: row.path}) SET f.name = row.name "
        "WITH f, row WHERE row.parent IS NOT NULL "
        "MERGE (p:Folder {path: row.parent}) MERGE (f)-[:IN_FOLDER]->(p)"
    )


def link_tags() -> str:
    return (
        "UNWIND $rows AS row MERGE (c:Tag {name: row.child}) MERGE (p:Tag {name: row.parent}) "
        "MERGE (c)-[:CHILD_OF]->(p)"
    )


def upsert_chunks(fresh: bool = False) -> str:
    """Write chunks; their passages carry the vectors (upsert_passages). `fresh`: into a graph that holds no
    chunk yet (CREATE, no look-up of one to update)."""
    if fresh:
        return (
            "UNWIND $rows AS row MATCH (n:Note {path: row.note_path}) "
            "CREATE (c:Chunk {id: row.id})-[:IN_NOTE]->(n) SET c += row.props, c.hash = row.hash"
        )
    return (
        "UNWIND $rows AS row MATCH (n:Note {path: row.note_path}) "
        "MERGE (c:Chunk {id: row.id}) "
        "SET c += row.props, c.hash = row.hash "
        "MERGE (c)-[:IN_NOTE]->(n)"
    )


_PASSAGE_COPY = ", ".join(
    f"p.{k} = c.{k}"
    for k in ("note_path", "breadcrumb", "title", "date", "folder_key", "tags", "private", "facets", "privacy")
)
# what a passage `p` of row `q` in chunk `c` holds, however it was written
_PASSAGE_SET = (
    "SET p.text = q.text, p.ord = q.ord, p.hash = q.hash, p.chunk_id = c.id, " + _PASSAGE_COPY + ", "
    "p.search = " + passage_search("c.folder_key", "c.breadcrumb", "q.text")
)


def upsert_passages(fresh: bool = False) -> str:
    """A chunk's passages, after the chunk (same transaction): passages it no longer has go; an unchanged hash
    keeps its vector, a known hash elsewhere lends its vector, any other passage is :Pending. `fresh`: into a
    graph that holds no passage yet, so none has a vector to keep or lend: each is created :Pending."""
    if fresh:
        return (
            "UNWIND $rows AS row MATCH (c:Chunk {id: row.id}) UNWIND row.passages AS q "
            "CREATE (p:Passage:Pending {id: q.id})-[:IN_CHUNK]->(c) " + _PASSAGE_SET
        )
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.id}) "
        "CALL (c, row) { MATCH (x:Passage)-[:IN_CHUNK]->(c) "
        "WHERE NOT x.id IN [q IN row.passages | q.id] DETACH DELETE x } "
        "WITH c, row UNWIND row.passages AS q "
        "MERGE (p:Passage {id: q.id}) "
        "WITH c, p, q, p.hash = q.hash AS same " + _PASSAGE_SET + " "
        "MERGE (p)-[:IN_CHUNK]->(c) "
        "WITH p, q, same WHERE NOT same OR coalesce(p.embedding, p.embedding_private) IS NULL "
        "OPTIONAL MATCH (o:Passage {hash: q.hash}) WHERE o <> p AND o.embedder = $embedder "
        "AND coalesce(o.embedding, o.embedding_private) IS NOT NULL "
        "WITH p, head(collect(coalesce(o.embedding, o.embedding_private))) AS vec "
        "SET p.embedding = CASE WHEN p.private THEN null ELSE vec END, "
        "p.embedding_private = CASE WHEN p.private THEN vec ELSE null END, "
        "p.embedder = CASE WHEN vec IS NULL THEN null ELSE $embedder END "
        "WITH p, vec WHERE vec IS NULL SET p:Pending"
    )


def link_next_chunks() -> str:
    return "UNWIND $pairs AS p MATCH (a:Chunk {id: p[0]}), (b:Chunk {id: p[1]}) MERGE (a)-[:NEXT_CHUNK]->(b)"


def link_notes() -> str:
    """Links between notes; one relationship per distinct link as written."""
    return (
        "UNWIND $rows AS row MATCH (s:Note {path: row.source}), (t:Note {path: row.target}) "
        "CREATE (s)-[:LINKS_TO {display: row.display, heading: row.heading, block: row.block, "
        "embed: row.embed, link_kind: row.link_kind, count: row.count}]->(t)"
    )


def link_missing() -> str:
    """Links to notes or files that do not exist, kept on :Missing placeholders."""
    return (
        "UNWIND $rows AS row MATCH (s:Note {path: row.source}) "
        "MERGE (t:Missing {key: row.target}) ON CREATE SET t.name = row.name, t.kind = row.missing_kind "
        "CREATE (s)-[:LINKS_TO {display: row.display, heading: row.heading, block: row.block, "
        "embed: row.embed, link_kind: row.link_kind, count: row.count}]->(t)"
    )


def link_attachments() -> str:
    return (
        "UNWIND $rows AS row MATCH (s:Note {path: row.source}) "
        "MERGE (t:Attachment {path: row.target}) "
        "CREATE (s)-[:ATTACHES {display: row.display, embed: row.embed, count: row.count}]->(t)"
    )


def clear_links() -> str:
    return "UNWIND $paths AS path MATCH (n:Note {path: path})-[r:LINKS_TO|ATTACHES]->() DELETE r"


def set_link_sig() -> str:
    return "UNWIND $rows AS row MATCH (n:Note {path: row.path}) SET n.link_sig = row.sig, n.link_n = row.n"


def suspect_raw_links() -> str:
    """Notes whose links are pending, or whose LINKS_TO/ATTACHES count is not what was written."""
    return (
        "MATCH (n:Note) WITH n, COUNT { (n)-[:LINKS_TO|ATTACHES]->() } AS edges "
        "WHERE n.link_sig = '' OR n.link_n IS NULL OR n.link_n <> edges "
        "RETURN n.path AS path, n.links_raw AS links, n.link_sig AS sig, edges ORDER BY path"
    )


def all_raw_links() -> str:
    return (
        "MATCH (n:Note) RETURN n.path AS path, n.links_raw AS links, n.link_sig AS sig, "
        "COUNT { (n)-[:LINKS_TO|ATTACHES]->() } AS edges ORDER BY path"
    )


def prune_orphans() -> str:
    """Placeholders, attachments, tags and folders nothing points at any more."""
    return (
        "CALL () { MATCH (m:Missing) WHERE NOT ()-[:LINKS_TO]->(m) DETACH DELETE m } "
        "CALL () { MATCH (a:Attachment) WHERE NOT ()-[:ATTACHES]->(a) DETACH DELETE a } "
        # a note is tagged with every parent of its tags too, and a folder is kept while any note lies
        # beneath it: a deleted subtree goes in one run, not one level per run
        "CALL () { MATCH (t:Tag) WHERE NOT (:Note)-[:TAGGED]->(t) DETACH DELETE t } "
        "CALL () { MATCH (f:Folder) WHERE f.path <> '' "
        "AND NOT EXISTS { (:Note)-[:IN_FOLDER]->(:Folder)-[:IN_FOLDER*0..]->(f) } DETACH DELETE f }"
    )


def missing_report() -> str:
    return (
        "MATCH (s:Note)-[r:LINKS_TO]->(m:Missing) "
        "WITH m, s ORDER BY s.path "
        "WITH m, count(*) AS links, collect(DISTINCT s.path) AS sources ORDER BY links DESC, m.key "
        "RETURN collect([m.key, m.name, m.kind, links, sources]) AS rows"
    )


def aliases() -> str:
    return "MATCH (n:Note) WHERE size(coalesce(n.aliases, [])) > 0 RETURN n.path AS path, n.aliases AS aliases"


def holds_chunks() -> str:
    """Whether any chunk or passage is in the graph (the count store answers: no scan)."""
    return (
        "CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks } "
        "CALL () { MATCH (p:Passage) RETURN count(p) AS passages } RETURN chunks + passages > 0 AS any"
    )


def counts() -> str:
    return (
        "CALL () { MATCH (n:Note) RETURN count(n) AS notes } "
        "CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks } "
        "CALL () { MATCH (p:Passage) RETURN count(p) AS passages } "
        "CALL () { MATCH (p:Passage:Pending) RETURN count(p) AS pending } "
        "CALL () { MATCH (:Note)-[r:LINKS_TO]->(:Note) RETURN count(r) AS links } "
        "CALL () { MATCH (:Note)-[r:LINKS_TO]->(:Missing) RETURN count(r) AS missing_links } "
        "CALL () { MATCH (t:Tag) RETURN count(t) AS tags } "
        "CALL () { MATCH (f:Folder) RETURN count(f) AS folders } "
        "RETURN notes, chunks, passages, pending, links, missing_links, tags, folders"
    )


def pending_passages() -> str:
    return (
        "MATCH (p:Passage:Pending) RETURN p.id AS id, p.note_path AS path, p.breadcrumb AS breadcrumb, "
        "p.text AS text, p.hash AS hash "
        "ORDER BY p.id LIMIT $limit"
    )


def set_embeddings() -> str:
    return (
        "UNWIND $rows AS row MATCH (p:Passage {id: row.id}) "
        "SET p.embedding = CASE WHEN p.private THEN null ELSE row.vec END, "
        "p.embedding_private = CASE WHEN p.private THEN row.vec ELSE null END, "
        "p.embedder = $embedder REMOVE p:Pending"
    )


def mark_all_pending() -> str:
    return (
        "MATCH (p:Passage) CALL (p) { SET p:Pending REMOVE p.embedding, p.embedding_private, p.embedder } "
        "IN TRANSACTIONS OF 5000 ROWS"
    )


def embedded_passages() -> str:
    """Whether any passage holds a vector (an index made before the first vector binds no embedder)."""
    return "MATCH (p:Passage) WHERE p.embedder IS NOT NULL RETURN count(p) > 0 AS any LIMIT 1"


def fulltext_passages() -> str:
    """Passages ranked by the full-text index, each naming its chunk."""
    return (
        f"CALL db.index.fulltext.queryNodes('{PASSAGE_TEXT_INDEX}', $query, {{limit: $limit}}) "
        "YIELD node, score RETURN node.chunk_id AS id, node.note_path AS path, node.id AS passage, score "
        "ORDER BY score DESC, passage LIMIT $limit"
    )


def fulltext_chunks() -> str:
    """Whole chunks ranked by their own full-text index (text, breadcrumb, title): the text leg of the fusion."""
    return (
        f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $query, {{limit: $limit}}) "
        "YIELD node, score RETURN node.id AS id, node.note_path AS path, score ORDER BY score DESC, id LIMIT $limit"
    )


def _passage_vectors(private: bool) -> tuple[str, str]:
    """The passage vector index and the property it reads: public, or private."""
    return (PRIVATE_PASSAGE_VECTOR_INDEX, "embedding_private") if private else (PASSAGE_VECTOR_INDEX, "embedding")


def _scored_passages(prop: str) -> str:
    """Each passage `c` scored on its stored vector, as rows of the vector leg (the caller orders them)."""
    return (
        f"WITH c, vector.similarity.cosine(c.{prop}, $vec) AS score "
        "RETURN c.chunk_id AS id, c.note_path AS path, c.id AS passage, score "
    )


def vector_passages(private: bool = False) -> str:
    """Nearest passages from the public index, or from the private one."""
    name, prop = _passage_vectors(private)
    # The index quantizes vectors per Lucene segment, so its scores depend on how the index grew; each
    # candidate is scored again on its stored vector, which depends only on the passage and the question.
    return (
        f"CALL db.index.vector.queryNodes('{name}', $candidates, $vec) YIELD node AS c "
        + _scored_passages(prop)
        + "ORDER BY score DESC, passage LIMIT $limit"
    )


def vector_index_raw(props: bool) -> str:
    """The public passage vector index's nearest $candidates, its own scores, no re-scoring (bench/vector_leg.py
    times it): element ids only, or with the passages' chunk and id."""
    ret = "c.chunk_id AS id, c.id AS passage" if props else "elementId(c) AS e"
    return (
        f"CALL db.index.vector.queryNodes('{PASSAGE_VECTOR_INDEX}', $candidates, $vec) YIELD node AS c, score "
        f"RETURN {ret}, score ORDER BY score DESC LIMIT $limit"
    )


def embedded_vectors() -> str:
    """Every public passage vector, in id order (bench/vector_leg.py reads them into one matrix)."""
    return "MATCH (p:Passage) WHERE p.embedding IS NOT NULL RETURN p.embedding AS v ORDER BY p.id"


def passage_count() -> str:
    return "MATCH (p:Passage) RETURN count(p) AS n"


def vector_state() -> str:
    """How many passages the graph holds (the count store: no scan) and the stamp of the vector file it
    vouches for (kb.vectorfile), in one round trip."""
    return (
        "CALL () { MATCH (p:Passage) RETURN count(p) AS n } "
        "OPTIONAL MATCH (m:KbMeta {key: $key}) RETURN n, m.stamp AS stamp"
    )


def public_vector_listing() -> list[str]:
    """Every public passage that holds a vector (id and hash), and every public chunk's note, date, folder key and
    tags (joined by newlines): what the vector file keeps beside each vector to filter as chunk_filter does. Flat
    lists, every value non-null (collect skips nulls), decode several times faster than a row per passage."""
    return [
        "MATCH (p:Passage) WHERE p.embedding IS NOT NULL "
        "RETURN collect(p.id) AS ids, collect(coalesce(p.hash, '')) AS hashes",
        "MATCH (c:Chunk) WHERE NOT coalesce(c.private, false) "
        "RETURN collect(c.id) AS ids, collect(coalesce(c.note_path, '')) AS paths, "
        "collect(coalesce(c.date, '')) AS dates, collect(coalesce(c.folder_key, '')) AS keys, "
        "collect(reduce(s = '', t IN coalesce(c.tags, []) | s + '\\n' + t)) AS tags",
    ]


def public_vectors() -> str:
    """The public vectors of the given passages."""
    return (
        "UNWIND $ids AS pid MATCH (p:Passage {id: pid}) WHERE p.embedding IS NOT NULL "
        "RETURN p.id AS id, p.embedding AS vec"
    )


def visible_passage_hashes() -> str:
    """Of the given passages, those that hold a public vector and are visible to this reader, with their hash (the
    vector file's rows, confirmed in the MCP server's view)."""
    return (
        "UNWIND $ids AS pid MATCH (p:Passage {id: pid}) WHERE p.embedding IS NOT NULL "
        "RETURN p.id AS passage, p.hash AS hash"
    )


def chunk_filter(folder: bool, tag: bool, since: bool, until: bool) -> str:
    """Only the active conditions, so the planner can seek the folder or date index."""
    parts = ["($private OR NOT c.private)"]
    if folder:
        parts.append("c.folder_key STARTS WITH $folder_key")
    if tag:
        parts.append("$tag IN c.tags")
    if since:
        parts.append("c.date >= $since")
    if until:
        parts.append("c.date <= $until")
    return " AND ".join(parts)


def vector_chunks_filtered(
    folder: bool = True, tag: bool = True, since: bool = True, until: bool = True, private: bool = False
) -> str:
    """Exact cosine over only the passages that pass the filters, of the public or the private index's
    property (no over-fetch, no post-filter)."""
    prop = _passage_vectors(private)[1]
    return (
        "MATCH (c:Passage) WHERE " + chunk_filter(folder, tag, since, until) + " "
        f"AND c.{prop} IS NOT NULL " + _scored_passages(prop) + "ORDER BY score DESC, id, passage LIMIT $limit"
    )


def vector_passages_prefiltered(folder: bool, tag: bool, since: bool, until: bool, private: bool = False) -> str:
    """The index's $candidates nearest passages, only those that pass the filters, scored on their stored
    vectors: exact whenever at least $limit of them pass (the caller scans otherwise)."""
    name, prop = _passage_vectors(private)
    return (
        f"CALL db.index.vector.queryNodes('{name}', $candidates, $vec) YIELD node AS c "
        "WITH c WHERE "
        + chunk_filter(folder, tag, since, until)
        + " "
        + _scored_passages(prop)
        + "ORDER BY score DESC, id, passage LIMIT $limit"
    )


def backfill_folder_keys() -> str:
    return (
        "MATCH (c:Chunk) WHERE c.folder_key IS NULL CALL (c) { SET c.folder_key = c.folder + '/' } "
        "IN TRANSACTIONS OF 5000 ROWS"
    )


def chunk_details() -> str:
    return (
        "UNWIND $ids AS cid MATCH (c:Chunk {id: cid})-[:IN_NOTE]->(n:Note) "
        "RETURN c.id AS id, c.text AS text, c.breadcrumb AS breadcrumb, c.date AS date, c.tokens AS tokens, "
        "c.ord AS ord, n.path AS path, n.title AS title, n.date AS note_date, n.updated AS note_updated, "
        "n.aliases AS aliases"
    )


def mark_private() -> str:
    """Re-mark notes and chunks after the private folders changed (kb decides which paths are private: case,
    Unicode form and symlink targets count); vectors move to the matching index."""
    return (
        "MATCH (n:Note) WITH n, n.path IN $private_paths AS p "
        "SET n.private = p WITH n, p MATCH (c:Chunk)-[:IN_NOTE]->(n) WHERE c.private <> p "
        "WITH c, p, coalesce(c.embedding, c.embedding_private) AS vec "
        f"SET c.private = p, c.privacy = CASE WHEN p THEN '{PRIVATE_WORD}' ELSE '' END, "
        "c.embedding = CASE WHEN p THEN null ELSE vec END, "
        "c.embedding_private = CASE WHEN p THEN vec ELSE null END "
        "WITH c, p MATCH (x:Passage)-[:IN_CHUNK]->(c) WITH x, p, coalesce(x.embedding, x.embedding_private) AS v "
        f"SET x.private = p, x.privacy = CASE WHEN p THEN '{PRIVATE_WORD}' ELSE '' END, "
        "x.embedding = CASE WHEN p THEN null ELSE v END, x.embedding_private = CASE WHEN p THEN v ELSE null END"
    )


def note_real_paths(private_only: bool = False) -> str:
    """Each note's path and the path it resolves to (a symlink's target), optionally only private notes."""
    where = "WHERE n.private " if private_only else ""
    return f"MATCH (n:Note) {where}RETURN n.path AS path, coalesce(n.real_path, n.path) AS real ORDER BY path"


def notes_with_warnings() -> str:
    return (
        "MATCH (n:Note) WHERE size(coalesce(n.warnings, [])) > 0 "
        "RETURN n.path AS path, n.warnings AS warnings ORDER BY path"
    )


def delete_everything() -> str:
    return "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"


# Saved queries `kb browse` writes for a person using Neo4j Browser.
BROWSER_QUERIES = {
    "note-neighbourhood.cypher": (
        "// A note with its links in and out, tags and folder (set $path first: :param path => 'Folder/Note.md')\n"
        "MATCH (n:Note {path: $path})\n"
        "OPTIONAL MATCH (n)-[r:LINKS_TO|TAGGED|IN_FOLDER|ATTACHES]-(m)\n"
        "RETURN n, r, m"
    ),
    "most-linked-notes.cypher": (
        "// The notes with the most incoming links\n"
        "MATCH (n:Note)<-[r:LINKS_TO]-(:Note)\n"
        "RETURN n.path AS note, n.date AS date, count(r) AS incoming\n"
        "ORDER BY incoming DESC, note LIMIT 25"
    ),
    "broken-links.cypher": (
        "// Links to notes or files that do not exist, most linked first\n"
        "MATCH (s:Note)-[:LINKS_TO]->(m:Missing)\n"
        "RETURN m.name AS missing, m.kind AS kind, count(*) AS links, collect(s.path)[..5] AS from\n"
        "ORDER BY links DESC, missing"
    ),
    "note-chunks.cypher": (
        "// The chunks of a note in reading order, with breadcrumbs and dates (:param path => '...')\n"
        "MATCH (c:Chunk)-[:IN_NOTE]->(:Note {path: $path})\n"
        "RETURN c.ord AS ord, c.breadcrumb AS breadcrumb, c.date AS date, c.tokens AS tokens\n"
        "ORDER BY ord"
    ),
    "entity-claim-timeline.cypher": (
        "// An entity's claims, current first, with what superseded them (:param name => 'Acme')\n"
        "MATCH (cl:Claim)-[:ABOUT]->(e:Entity {name: $name})\n"
        "OPTIONAL MATCH (cl)-[:SUPERSEDED_BY]->(n:Claim)\n"
        "RETURN cl.attribute AS attribute, cl.value AS value, cl.modality AS modality, cl.is_current AS current,\n"
        "       cl.note_path AS note, cl.note_date AS date, n.value AS superseded_by\n"
        "ORDER BY attribute, current DESC, coalesce(cl.valid_from, cl.note_date) DESC"
    ),
    "notes-by-tag.cypher": (
        "// Notes under a tag, nested tags included (:param tag => 'client')\n"
        "MATCH (n:Note) WHERE $tag IN n.tags\n"
        "RETURN n.path AS note, n.date AS date ORDER BY date DESC"
    ),
}


# -- knowledge layer ---------------------------------------------------------
KNOWLEDGE_CONSTRAINTS = (("entity_key", "Entity", "key"), ("claim_id", "Claim", "id"))


def knowledge_schema() -> list[str]:
    return [
        f"CREATE CONSTRAINT {n} IF NOT EXISTS FOR (x:{lab}) REQUIRE x.{p} IS UNIQUE"
        for n, lab, p in KNOWLEDGE_CONSTRAINTS
    ] + [
        "CREATE INDEX claim_attribute IF NOT EXISTS FOR (c:Claim) ON (c.attribute)",
        "CREATE INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON (e.name)",
        entity_fulltext_index(),
    ]


def knowledge_chunks() -> str:
    """Every chunk with what extraction needs, as one row."""
    return (
        "MATCH (c:Chunk)-[:IN_NOTE]->(n:Note) WITH c, n ORDER BY c.id "
        "RETURN collect([c.id, c.text, c.breadcrumb, n.path, c.date, n.folder, c.private, c.ord, n.updated]) "
        "AS rows"
    )


def delete_knowledge() -> list[str]:
    """Claims first (with their edges), then entities; each by its label, in large transactions."""
    return [
        f"MATCH (x:{label}) CALL (x) {{ DETACH DELETE x }} IN TRANSACTIONS OF 20000 ROWS"
        for label in ("Claim", "Entity")
    ]


def create_entities() -> str:
    return "UNWIND $rows AS row CREATE (e:Entity) SET e = row"


def create_mentions() -> str:
    """Rows are chunks with the keys of the entities they mention: one chunk lookup per chunk."""
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.chunk}) UNWIND row.entities AS key "
        "MATCH (e:Entity {key: key}) CREATE (c)-[:MENTIONS]->(e)"
    )


_LINKS = "|".join(LINK_TYPES)


def create_relationships(rel_type: str) -> str:
    """One statement per type: relationship types cannot be parameters. `rel_type` comes from the closed list."""
    if rel_type not in LINK_TYPES:
        raise ValueError(f"not a relationship type: {rel_type!r}")
    return (
        "UNWIND $rows AS row MATCH (a:Entity {key: row.source}), (b:Entity {key: row.target}) "
        f"CREATE (a)-[r:{rel_type}]->(b) SET r = row.props"
    )


def create_claims() -> str:
    return (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.chunk}), (e:Entity {key: row.entity}) "
        "CREATE (c)-[:SUPPORTS]->(cl:Claim)-[:ABOUT]->(e) SET cl = row.props"
    )


def knowledge_counts() -> str:
    return (
        "CALL () { MATCH (e:Entity) RETURN count(e) AS entities } "
        "CALL () { MATCH (c:Claim) RETURN count(c) AS claims } "
        "CALL () { MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS relationships } "
        "RETURN entities, claims, relationships"
    )


def create_claim_edges(rel_type: str) -> str:
    """SUPERSEDED_BY, CONFLICTS_WITH or FOLLOWED_BY between claims."""
    if rel_type not in ("SUPERSEDED_BY", "CONFLICTS_WITH", "FOLLOWED_BY"):
        raise ValueError(f"not a claim edge: {rel_type!r}")
    return f"UNWIND $rows AS row MATCH (a:Claim {{id: row.a}}), (b:Claim {{id: row.b}}) CREATE (a)-[:{rel_type}]->(b)"


def create_described_by() -> str:
    return (
        "UNWIND $rows AS row MATCH (e:Entity {key: row.entity}), (n:Note {path: row.path}) "
        "CREATE (e)-[:DESCRIBED_BY]->(n)"
    )


def label_hubs() -> str:
    return "MATCH (e:Entity) WHERE e.hub SET e:HubEntity"


def label_owner() -> str:
    return "MATCH (e:Entity) WHERE e.owner SET e:OwnerEntity"


_OWNER = "MATCH (o:OwnerEntity) WITH o ORDER BY o.key LIMIT 1 "  # the build marks at most one; the order is a guard


def owner_entity() -> str:
    """The entity the vault is about, if the build told one apart (a label lookup)."""
    return _OWNER + "RETURN o.key AS key, o.name AS name"


def entity_candidates() -> str:
    """Entities whose name or an alias matches, case-insensitively (the caller applies the capital rule)."""
    return (
        "MATCH (e:Entity) WHERE toLower(e.name) = toLower($name) "
        "OR any(a IN e.aliases WHERE toLower(a) = toLower($name)) "
        "RETURN properties(e) AS e ORDER BY e.mentions DESC, e.key"
    )


def entity_claims() -> str:
    fields = ".id, .value, .note_path, " + _AS_OF
    return (
        "MATCH (cl:Claim)-[:ABOUT]->(:Entity {key: $key}) "
        "RETURN properties(cl) AS claim, "
        + _neighbours("-[:SUPERSEDED_BY]->", fields)
        + " AS superseded_by, "
        + _neighbours("-[:CONFLICTS_WITH]-", fields)
        + " AS conflicts, "
        + _neighbours("-[:FOLLOWED_BY]->", fields)
        + " AS then "
        "ORDER BY cl.attribute, cl.is_current DESC, coalesce(cl.valid_from, cl.note_date) DESC, cl.id"
    )


def entity_relationships() -> str:
    return (
        "MATCH (e:Entity {key: $key})-[r:" + _LINKS + "]-(o:Entity) "
        "RETURN type(r) AS type, startNode(r) = e AS outgoing, o.name AS other, o.key AS other_key, "
        "properties(r) AS props ORDER BY r.count DESC, type, other"
    )


def entities_with_merges() -> str:
    return "MATCH (e:Entity) WHERE e.merge_log <> '[]' RETURN properties(e) AS e ORDER BY e.key"


# -- graph search ------------------------------------------------------------
ENTITY_INDEX = "entity_names"


def entity_fulltext_index() -> str:
    return (
        f"CREATE FULLTEXT INDEX {ENTITY_INDEX} IF NOT EXISTS FOR (e:Entity) ON EACH [e.names_text] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words'}}"
    )


# null when either vector is (no question vector, a line built without one). Also the score of a claim found through
# the claim-line index: the index's own score is of its quantized vectors, whose quantiles depend on the order the
# claims were indexed in (the database's history), so the same claims scored differently. The vector is read once:
# a CASE testing it first read each relationship's 384 floats twice (measured: 0.9 of the link subquery's 4.6 ms)
_SIM = "vector.similarity.cosine({v}.line_vec, $qvec)"


def _link_map(r: str, start: str, o: str, via: str | None, score: str | None = None) -> str:
    """A relationship as graph search reads it, with the note and date of its first (visible) chunk."""
    via_part = f"via: {via}.name, " if via else ""
    return (
        f"{{type: type({r}), outgoing: startNode({r}) = {start}, other: {o}.name, other_key: {o}.key, {via_part}"
        f"hub: {o}:HubEntity, count: {r}.count, first_seen: {r}.first_seen, last_seen: {r}.last_seen, "
        f"modalities: {r}.modalities, "
        f"evidence: CASE WHEN $private THEN {r}.evidence[..1] ELSE {r}.public_evidence[..1] END, "
        f"chunk_ids: CASE WHEN $private THEN {r}.chunk_ids[..1] ELSE {r}.public_chunk_ids[..1] END, "
        f"cite_path: c.note_path, cite_date: c.date, score: {score or _SIM.format(v=r)}}}"
    )


# the question asks for an attribute when it names one of its stems ("customers": customer_count,
# customer_feedback); current-first promotion asks for all of them (search/current.py)
_ASKED = "any(s IN coalesce(cl.attr_stems, []) WHERE s IN $asked)"
_VISIBLE_CLAIM = "($private OR NOT coalesce(cl.private, false))"
# with $as_of, only what was known that day: a claim valid by then from a note written by then (as search/current.py
# as_of_rows reads it; partial dates compare as their first day, as a string prefix does), a link first seen by then
_KNOWN_CLAIM = (
    "($as_of IS NULL OR (coalesce(cl.valid_from, cl.note_date, '') <= $as_of AND coalesce(cl.note_date, '') <= $as_of))"
)
_KNOWN_LINK = "($as_of IS NULL OR coalesce({r}.first_seen, '') <= $as_of)"


def _neighbours(edge: str, fields: str) -> str:
    """The claim `cl`'s neighbours over `edge` ("-[:SUPERSEDED_BY]->"), in order of date, value and id (a plain
    collect lists them in the order the store holds them, which a rebuild changes: lines cite the first ones)."""
    return (
        f"COLLECT {{ MATCH (cl){edge}(x:Claim) WITH DISTINCT x "
        f"RETURN x {{{fields}}} ORDER BY coalesce(x.valid_from, x.note_date), x.value, x.id }}"
    )


_AS_OF = "as_of: coalesce(x.valid_from, x.note_date)"
# the chunk a claim is cited from: the first by id of those that support it
_CITED_CHUNK = "COLLECT { MATCH (c:Chunk)-[:SUPPORTS]->(cl) RETURN c.id ORDER BY c.id }[0]"
# a claim with its timeline neighbours (superseded by, conflicts with, followed by), each list in a fixed order
_TIMELINE = (
    "WITH k, e, cl, asked, score, "
    + _neighbours("-[:SUPERSEDED_BY]->", ".value, .note_path, .note_date, .private, " + _AS_OF)
    + " AS sup, "
    + _neighbours("-[:CONFLICTS_WITH]-", ".value, .note_path, .note_date, .private")
    + " AS conf, "
    + _neighbours("-[:FOLLOWED_BY]->", ".value, .note_path, .private, " + _AS_OF)
    + " AS then "
    "ORDER BY k, cl.attribute, cl.id "
    "RETURN collect({entry: k, entity: e.name, claim: cl {.attribute, .value, .quote, .modality, .valid_from, "
    ".note_date, .note_path, .is_current, .private, .attr_stems}, "
    "chunk: " + _CITED_CHUNK + ", "
    "sup: sup, conf: conf, "
    "then: then, score: score, asked: asked})"
)


# a name occurs in $question as a whole word (Unicode); one-word names in capitals ("HIS") only with their
# capitals, pronouns never ($pronouns); a plain substring test first spares most names the regex
_OCCURS = (
    "size(n) >= 2 AND NOT toLower(n) IN $pronouns AND toLower($question) CONTAINS toLower(n) "
    "AND $question =~ "
    "((CASE WHEN NOT n CONTAINS ' ' AND n = toUpper(n) AND n <> toLower(n) THEN '' ELSE '(?i)' END) + "
    # a name next to a Han character still counts as a whole word: Chinese writes no spaces
    r"'(?sU).*(?<![\\w&&[^\\p{IsHan}]])\\Q' + replace(n, '\\E', '') + '\\E(?![\\w&&[^\\p{IsHan}]]).*')"
)


def _visible(r: str) -> str:
    return f"($private OR size(coalesce({r}.public_chunk_ids, [])) > 0)"


def _first_chunk(r: str) -> str:
    return (
        f"OPTIONAL MATCH (c:Chunk {{id: CASE WHEN $private THEN {r}.chunk_ids[0] ELSE {r}.public_chunk_ids[0] END}}) "
    )


def graph_context(vectors: bool) -> str:
    """Everything graph search reads about its entry entities: the entities $question names (full-text hits
    for $words, kept when a name or alias occurs as a whole word), then the $seeds entities the $chunk_ids
    mention most; each entry entity's strongest and newest links ($limit per named entity, $seed_limit per
    seed, hubs allowed as ends; of those not of the $types the question names, only the $others most similar
    to the question travel); with $two_hops, two hops over the $types from the named entities (never through
    a hub); with $as_of, only links first seen and claims known by that day; and claims: those whose attribute
    stems the question asks for ($per_entity each, whole timelines) plus the $others most similar to it; and what
    re-ranking reads of the claims of the $claim_chunk_ids (_chunk_claims), and the entity the vault is about
    (owner_entity), if any. Private evidence and claims only with $private.
    One statement: on two cores, splitting it into halves run side by side measured slower, and a second
    statement for the chunks' claims cost a round trip (~1 ms) and its rows' decoding. The USING INDEX
    hints make the planner seek the keys and chunk ids it is given: without them it scanned every entity per
    key (on the shared vault 58,000 of a question's 78,000 db hits, 22 -> 13 ms a call)."""
    return (
        _ctx_named()
        + _ctx_seeds()
        + _ctx_links()
        + _ctx_hops()
        + _ctx_asked()
        + _ctx_others(vectors)
        + _chunk_claims(vectors)
        + "CALL () { "
        + _OWNER
        + "RETURN collect({key: o.key, name: o.name}) AS owner } "
        "RETURN named, seeds, links, hops, asked + others AS claims, chunk_claims, owner"
    )


def _ctx_named() -> str:
    """graph_context's entities the question names."""
    return (
        "CALL () { UNWIND CASE WHEN $words = '' THEN [] ELSE [1] END AS go "
        f"CALL db.index.fulltext.queryNodes('{ENTITY_INDEX}', $words, {{limit: 200}}) YIELD node "
        "WITH node WHERE any(n IN [node.name] + coalesce(node.aliases, []) WHERE " + _OCCURS + ") "
        "WITH node ORDER BY size(node.name) DESC, node.key LIMIT 12 "
        "RETURN collect({key: node.key, name: node.name}) AS named } "
        "WITH named, [x IN named | x.key] AS named_keys "
    )


def _ctx_seeds() -> str:
    """graph_context's seed entities: those the top chunks mention most."""
    return (
        "CALL (named_keys) { UNWIND $chunk_ids AS cid MATCH (c:Chunk {id: cid})-[:MENTIONS]->(e:Entity) "
        "USING INDEX c:Chunk(id) WHERE NOT e.key IN named_keys "
        "WITH e, count(*) AS n ORDER BY n DESC, e.mentions DESC, e.key "
        "LIMIT $seeds RETURN collect({key: e.key, name: e.name}) AS seeds } "
        "WITH named, named_keys, seeds, named_keys + [s IN seeds | s.key] AS keys, "
        "CASE WHEN $two_hops THEN named_keys ELSE [] END AS hop_keys "
    )


def _ctx_links() -> str:
    """graph_context's links of each entry entity."""
    return (
        # a hub found only in the top notes gives its claims, not its links: reading and ordering every link of
        # the vault's most linked entities (20,000 on the bench graph) was most of graph search's time
        "CALL (keys, named_keys) { UNWIND keys AS k MATCH (e:Entity {key: k}) WHERE k IN named_keys OR NOT e:HubEntity "
        "MATCH (e)-[r:" + _LINKS + "]-(o:Entity) WHERE " + _visible("r") + " AND " + _KNOWN_LINK.format(r="r") + " "
        "WITH k, e, r, o, k IN named_keys AS is_named ORDER BY r.count DESC, r.last_seen DESC, o.key, type(r) "
        "WITH k, e, is_named, collect([r, o]) AS rs "
        "WITH k, e, rs[..CASE WHEN is_named THEN $limit ELSE $seed_limit END] AS top "
        "UNWIND range(0, size(top) - 1) AS i "
        "WITH k, e, i, top[i][0] AS r, top[i][1] AS o "
        "WITH k, e, i, r, o, type(r) IN $types AS pinned, " + _SIM.format(v="r") + " AS score "
        "ORDER BY pinned DESC, score DESC, k, i "
        "WITH collect({k: k, e: e, i: i, r: r, o: o, pinned: pinned, score: score}) AS all "
        "UNWIND [x IN all WHERE x.pinned] + [x IN all WHERE NOT x.pinned][..$others] AS x "
        "WITH x.k AS k, x.e AS e, x.i AS i, x.r AS r, x.o AS o, x.score AS score "
        + _first_chunk("r")
        + "RETURN collect({entry: k, rank: i, row: "
        + _link_map("r", "e", "o", None, "score")
        + "}) AS links } "
    )


def _ctx_hops() -> str:
    """graph_context's two hops over the relationship types the question names."""
    return (
        "CALL (hop_keys) { UNWIND hop_keys AS k MATCH (e:Entity {key: k})-[r1:"
        + _LINKS
        + "]-(m:Entity)-[r2:"
        + _LINKS
        + "]-(o:Entity) "
        "USING INDEX e:Entity(key) WHERE type(r1) IN $types AND type(r2) IN $types AND NOT m:HubEntity AND o <> e AND "
        + _visible("r1")
        + " AND "
        + _visible("r2")
        + " AND "
        + _KNOWN_LINK.format(r="r1")
        + " AND "
        + _KNOWN_LINK.format(r="r2")
        + " "
        "WITH k, m, r2, o ORDER BY r2.count DESC, r2.last_seen DESC, o.key, m.key LIMIT $limit "
        + _first_chunk("r2")
        + "RETURN collect({entry: k, row: "
        + _link_map("r2", "m", "o", "m")
        + "}) AS hops } "
    )


def _ctx_asked() -> str:
    """graph_context's claims whose attribute stems the question asks for."""
    return (
        "CALL (keys) { UNWIND keys AS k MATCH (cl:Claim)-[:ABOUT]->(e:Entity {key: k}) USING INDEX e:Entity(key) "
        "WHERE " + _ASKED + " AND " + _VISIBLE_CLAIM + " AND " + _KNOWN_CLAIM + " "
        "WITH k, e, cl ORDER BY cl.is_current DESC, coalesce(cl.valid_from, cl.note_date) DESC, cl.id "
        "WITH k, e, collect(cl)[..$per_entity] AS cls UNWIND cls AS cl "
        "WITH k, e, cl, true AS asked, " + _SIM.format(v="cl") + " AS score " + _TIMELINE + " AS asked } "
    )


def _ctx_others(vectors: bool) -> str:
    """graph_context's other claims: the nearest the question, or without a vector the newest current ones."""
    if vectors:  # the claims nearest the question, from the claim-line index, then those of the entry entities
        return (
            "CALL (keys) { UNWIND keys AS k MATCH (e:Entity {key: k}) WITH collect(e) AS es "
            f"CALL db.index.vector.queryNodes('{CLAIM_LINE_INDEX}', $fetch, $qvec) YIELD node AS cl "
            "MATCH (cl)-[:ABOUT]->(e:Entity) WHERE e IN es AND NOT "
            + _ASKED
            + " AND "
            + _VISIBLE_CLAIM
            + " AND "
            + _KNOWN_CLAIM
            + " "
            "WITH e.key AS k, e, cl, " + _SIM.format(v="cl") + " AS score ORDER BY score DESC, cl.id LIMIT $others "
            "WITH k, e, cl, false AS asked, score " + _TIMELINE + " AS others } "
        )
    else:  # no question vector: the newest current claims of the entry entities
        return (
            "CALL (keys) { UNWIND keys AS k MATCH (cl:Claim)-[:ABOUT]->(e:Entity {key: k}) USING INDEX e:Entity(key) "
            "WHERE NOT " + _ASKED + " AND " + _VISIBLE_CLAIM + " AND " + _KNOWN_CLAIM + " "
            "WITH k, e, cl ORDER BY cl.is_current DESC, coalesce(cl.valid_from, cl.note_date) DESC, cl.id "
            "LIMIT $others WITH k, e, cl, false AS asked, null AS score " + _TIMELINE + " AS others } "
        )


def chunk_dates() -> str:
    return "UNWIND $ids AS cid MATCH (c:Chunk {id: cid}) RETURN c.id AS id, c.note_path AS path, c.date AS date"


def name_vectors() -> str:
    return "MATCH (e:Entity) WHERE e.name_vec IS NOT NULL RETURN e.name AS name, e.name_vec AS v"


def set_name_vectors() -> str:
    return "UNWIND $rows AS row MATCH (e:Entity {key: row.key}) SET e.name_vec = row.vec"


def line_vectors() -> str:
    """Line vectors already computed, by text hash: a rebuild embeds only new lines."""
    return (
        "CALL () { MATCH (c:Claim) WHERE c.line_vec IS NOT NULL RETURN c.line_hash AS h, c.line_vec AS v "
        "UNION MATCH (:Entity)-[r]->(:Entity) WHERE r.line_vec IS NOT NULL "
        "RETURN r.line_hash AS h, r.line_vec AS v } "
        "RETURN h, v"
    )


def shortest_path() -> str:
    """Up to 4 hops between two entities over typed relationships, never through a hub."""
    return (
        "MATCH (a:Entity {key: $a}), (b:Entity {key: $b}) "
        "MATCH p = shortestPath((a)-[*..4]-(b)) "
        "WHERE all(n IN nodes(p) WHERE n:Entity) AND all(n IN nodes(p)[1..-1] WHERE NOT n:HubEntity) "
        "RETURN [n IN nodes(p) | n.name] AS names, "
        "[r IN relationships(p) | {type: type(r), from: startNode(r).name, to: endNode(r).name, "
        "evidence: r.evidence[0], chunk_ids: r.chunk_ids, first_seen: r.first_seen}] AS rels"
    )


def _chunk_claims(vectors: bool) -> str:
    """A subquery: of the claims $claim_chunk_ids support (private ones only with $private), with `vectors`
    those among the $claim_fetch claim lines nearest $qvec (from the claim-line index; scoring every claim of
    the chunks was the slow part), each chunk's $per_chunk nearest; and those whose attribute stems are all in
    $claim_stems. Each with the entity it is about, when it was replaced or followed, and its similarity to
    $qvec: what claim-aware re-ranking reads. No chunk ids, no read (not even the index query)."""
    stems = "size(coalesce(cl.attr_stems, [])) > 0 AND all(s IN cl.attr_stems WHERE s IN $claim_stems)"
    near = (
        (
            "CALL () { CALL db.index.vector.queryNodes('" + CLAIM_LINE_INDEX + "', $claim_fetch, $qvec) "
            "YIELD node AS cl MATCH (c:Chunk)-[:SUPPORTS]->(cl) WHERE c.id IN $claim_chunk_ids AND "
            + _VISIBLE_CLAIM
            + " WITH c, cl, "
            + _SIM.format(v="cl")
            + " AS score ORDER BY c.id, score DESC, cl.id "
            "WITH c, collect({cl: cl, score: score})[..$per_chunk] AS xs UNWIND xs AS x "
            "RETURN c.id AS cid, x.cl AS cl, x.score AS score "
            "UNION "
            "UNWIND $claim_chunk_ids AS cid MATCH (:Chunk {id: cid})-[:SUPPORTS]->(cl:Claim) WHERE "
            + stems
            + " AND "
            + _VISIBLE_CLAIM
            + " RETURN cid, cl, "
            + _SIM.format(v="cl")
            + " AS score } "
            "WITH cid, cl, max(score) AS score "
        )
        if vectors
        else (
            "UNWIND $claim_chunk_ids AS cid MATCH (:Chunk {id: cid})-[:SUPPORTS]->(cl:Claim) WHERE "
            + _VISIBLE_CLAIM
            + " WITH cid, cl, null AS score "
        )
    )
    return (
        "CALL () { UNWIND CASE WHEN size($claim_chunk_ids) = 0 THEN [] ELSE [1] END AS go "
        + near
        + "MATCH (cl)-[:ABOUT]->(e:Entity) "
        "WITH cid AS chunk, e.key AS entry, cl {.attribute, .value, .modality, .valid_from, .note_date, "
        ".note_path, .is_current, .attr_stems} AS claim, "
        + _neighbours("-[:SUPERSEDED_BY]->", ".value, " + _AS_OF)
        + " AS sup, "
        + _neighbours("-[:FOLLOWED_BY]->", ".value, " + _AS_OF)
        + " AS then, "
        "score ORDER BY chunk, score DESC, claim.attribute, claim.value, entry "
        "RETURN collect({chunk: chunk, entry: entry, claim: claim, sup: sup, then: then, score: score}) "
        "AS chunk_claims } "
    )


# -- the MCP server's own reads (get_note, the schema tool, call cancellation) and the benches ----------------
def quote_name(name: str) -> str:
    """A label or relationship type as a backquoted Cypher name."""
    return "`" + name.replace("`", "``") + "`"


def notes_by_path() -> str:
    """Each of $paths with the properties of its note and the private folders the last refresh recorded."""
    return (
        "OPTIONAL MATCH (m:KbMeta {key: 'privacy'}) WITH coalesce(m.folders, []) AS folders "
        "UNWIND $paths AS path MATCH (n:Note {path: path}) RETURN path, properties(n) AS props, folders"
    )


def property_sample(pattern: str, sample: int) -> str:
    """Property keys and up to 3 value types on the first `sample` matches of `pattern` (bound to x)."""
    return (
        f"MATCH {pattern} WITH x LIMIT {int(sample)} UNWIND keys(x) AS k "
        "RETURN k, collect(DISTINCT valueType(x[k]))[..3] AS types ORDER BY k"
    )


def schema_labels() -> str:
    return "CALL db.labels() YIELD label RETURN label ORDER BY label"


def schema_relationship_types() -> str:
    return "CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t ORDER BY t"


def label_count(label: str) -> str:
    return f"MATCH (x:{quote_name(label)}) RETURN count(x) AS n"


def relationship_count(rel_type: str) -> str:
    return f"MATCH ()-[x:{quote_name(rel_type)}]->() RETURN count(x) AS n"


def relationship_endpoints(rel_type: str, sample: int) -> str:
    """The label sets at either end of the first `sample` relationships of a type."""
    return (
        f"MATCH (a)-[x:{quote_name(rel_type)}]->(b) WITH a, b LIMIT {int(sample)} "
        "RETURN DISTINCT labels(a) AS f, labels(b) AS t"
    )


def schema_indexes() -> str:
    return (
        "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state "
        "RETURN name, type, entityType AS entity, labelsOrTypes AS labels, properties, state ORDER BY name"
    )


FULLTEXT_EXAMPLE = "CALL db.index.fulltext.queryNodes('chunk_text', 'word') YIELD node, score"  # shown to agents


def call_transactions() -> str:
    """The server transactions tagged with $tag (one MCP call's)."""
    return "SHOW TRANSACTIONS YIELD transactionId AS id, metaData WHERE metaData.kb_call = $tag RETURN id"


def terminate_transactions() -> str:
    return "TERMINATE TRANSACTIONS $ids"


def label_sizes() -> str:
    """Nodes per first label, all and private ones (bench/mcp_view.py)."""
    return (
        "MATCH (x) WHERE x.private = true RETURN 'private ' + labels(x)[0] AS k, count(*) AS n UNION ALL "
        "MATCH (x) RETURN 'all ' + labels(x)[0] AS k, count(*) AS n"
    )


def chunk_count() -> str:
    return "MATCH (c:Chunk) RETURN count(c) AS n"


def chunk_sample() -> str:
    """Chunks in id order from $skip, at most $limit (bench/search_latency.py's question source)."""
    return (
        "MATCH (c:Chunk) WITH c ORDER BY c.id SKIP $skip LIMIT $limit "
        "RETURN c.text AS text, c.folder AS folder, c.tags AS tags"
    )


# -- the MCP public view ------------------------------------------------------------------------------
# Every MCP read runs in a transaction that first removes private material from its own view, then runs
# the tool's reads, then is rolled back (never committed). What the statements below remove, in order:
# private notes (flag, or a path under a private folder), chunks without a visible note, claims without a
# visible chunk, entities known only from hidden chunks, any node flagged private, passages of hidden chunks; on
# entities also seen in public chunks, the names
# and aliases no public chunk contains; on relationships, chunk ids, evidence and lines from hidden chunks;
# then tags, folders, placeholders and attachments only hidden notes had, and any node all of whose
# neighbours are hidden. Apart from label and flag scans, every statement walks only the hidden material's
# neighbourhood.
HIDDEN = "KbHidden"
_NAMES_TEXT = "reduce(s = name, a IN [x IN seen WHERE x <> name] | s + ' | ' + a)"
_RENAMED_KEY = (
    "CASE WHEN name = e.name THEN e.key ELSE split(e.key, ':')[0] + ':' + toLower(name) + ' ~' + elementId(e) END"
)


def public_view() -> list[str]:
    """The statements that hide private material inside one transaction ($folders: private folders besides
    those the last refresh recorded)."""
    h = HIDDEN
    return [
        "OPTIONAL MATCH (m:KbMeta {key: 'privacy'}) WITH coalesce(m.folders, []) + $folders AS folders "
        "MATCH (n:Note) WHERE coalesce(n.private, false) OR any(f IN folders WHERE toLower(n.path) "
        f"STARTS WITH toLower(f) + '/') SET n:{h}",
        f"MATCH (c:Chunk) WHERE coalesce(c.private, false) OR NOT EXISTS {{ MATCH (c)-[:IN_NOTE]->(n:Note) "
        f"WHERE NOT n:{h} }} SET c:{h}",
        f"MATCH (cl:Claim) WHERE coalesce(cl.private, false) OR NOT EXISTS {{ MATCH (c:Chunk)-[:SUPPORTS]->(cl) "
        f"WHERE NOT c:{h} }} SET cl:{h}",
        f"MATCH (e:Entity) WHERE coalesce(e.private_only, false) SET e:{h}",
        f"MATCH (x) WHERE x.private = true AND NOT x:{h} SET x:{h}",  # any other label that carries the flag
        f"MATCH (p:Passage) WHERE NOT EXISTS {{ MATCH (p)-[:IN_CHUNK]->(c:Chunk) WHERE NOT c:{h} }} SET p:{h}",
        _entity_names(),
        _relationship_evidence(),
        f"MATCH (:Chunk:{h})-[:MENTIONS]->(e:Entity)<-[:ABOUT]-(cl:Claim) WHERE NOT e:{h} AND NOT cl:{h} "
        "WITH DISTINCT e, cl WITH cl, e.name + ' ' + replace(cl.attribute, '_', ' ') + ': ' + cl.value AS line "
        "WHERE line <> cl.line SET cl.line = line, cl.line_vec = null, cl.line_hash = null",
        f"MATCH (:Note:{h})-[:TAGGED]->(t:Tag) WITH DISTINCT t WHERE NOT EXISTS {{ MATCH (n:Note)-[:TAGGED]->(t) "
        f"WHERE NOT n:{h} }} SET t:{h}",
        f"MATCH (:Note:{h})-[:IN_FOLDER]->(:Folder)-[:IN_FOLDER*0..]->(f:Folder) WITH DISTINCT f "
        f"WHERE NOT EXISTS {{ MATCH (n:Note)-[:IN_FOLDER]->(:Folder)-[:IN_FOLDER*0..]->(f) WHERE NOT n:{h} }} "
        f"SET f:{h}",
        f"MATCH (:Note:{h})-[:LINKS_TO|ATTACHES]->(m) WHERE (m:Missing OR m:Attachment) WITH DISTINCT m "
        f"WHERE NOT EXISTS {{ MATCH (n:Note)-[:LINKS_TO|ATTACHES]->(m) WHERE NOT n:{h} }} SET m:{h}",
        # a node of any other kind whose every neighbour is hidden came from hidden material only
        f"MATCH (:{h})--(y) WHERE NOT y:{h} AND NOT y:KbMeta WITH DISTINCT y "
        f"WHERE NOT EXISTS {{ MATCH (y)--(z) WHERE NOT z:{h} }} SET y:{h}",
        f"MATCH (x:{h}) DETACH DELETE x",
    ]


def _entity_names() -> str:
    """Entities hidden chunks mention: only the names a visible chunk contains, counts from visible chunks;
    one no visible chunk names is hidden."""
    h = HIDDEN
    return (
        f"MATCH (:Chunk:{h})-[:MENTIONS]->(e:Entity) WHERE NOT e:{h} WITH DISTINCT e "
        f"CALL (e) {{ MATCH (c:Chunk)-[:MENTIONS]->(e) WHERE NOT c:{h} "
        "RETURN collect(toLower(coalesce(c.breadcrumb, '') + ' ' + coalesce(c.text, ''))) AS texts, "
        "min(c.date) AS first, max(c.date) AS last, count(c) AS n } "
        "WITH e, first, last, n, [x IN [e.name] + coalesce(e.aliases, []) "
        "WHERE any(t IN texts WHERE t CONTAINS toLower(x))] AS seen "
        f"CALL (e, seen) {{ WITH e, seen WHERE size(seen) = 0 SET e:{h} }} "
        "WITH e, first, last, n, seen WHERE size(seen) > 0 "
        "WITH e, first, last, n, seen, CASE WHEN e.name IN seen THEN e.name ELSE seen[0] END AS name "
        f"SET e.key = {_RENAMED_KEY}, e.name_vec = CASE WHEN name = e.name THEN e.name_vec ELSE null END, "
        f"e.name = name, e.aliases = [x IN seen WHERE x <> name], e.names_text = {_NAMES_TEXT}, "
        "e.mentions = n, e.first_seen = first, e.last_seen = last, e.merge_log = '[]'"
    )


def _relationship_evidence() -> str:
    """Relationships of entities hidden chunks mention: only visible chunk ids, evidence phrases a visible
    chunk contains, and a line from the visible names; with no visible chunk left, the relationship goes."""
    h = HIDDEN
    line = (
        "startNode(r).name + ' ' + toLower(replace(type(r), '_', ' ')) + ' ' + endNode(r).name + ': ' "
        "+ coalesce(ev[0], '')"
    )
    return (
        f"MATCH (:Chunk:{h})-[:MENTIONS]->(e:Entity)-[r]-(o:Entity) WHERE NOT e:{h} AND NOT o:{h} "
        "WITH DISTINCT r "
        "CALL (r) { UNWIND coalesce(r.chunk_ids, []) AS id MATCH (c:Chunk {id: id}) "
        f"WHERE NOT c:{h} RETURN collect(c) AS cs }} "
        "WITH r, cs, [c IN cs | c.id] AS ids "
        "CALL (r, ids) { WITH r, ids WHERE size(ids) = 0 DELETE r } "
        "WITH r, cs, ids WHERE size(ids) > 0 "
        "WITH r, cs, ids, [x IN coalesce(r.public_evidence, r.evidence, []) "
        "WHERE any(c IN cs WHERE c.text CONTAINS x)] AS ev "
        f"WITH r, cs, ids, ev, {line} AS line "
        "WHERE ids <> coalesce(r.chunk_ids, []) OR ev <> coalesce(r.evidence, []) OR line <> r.line "
        "SET r.chunk_ids = ids, r.public_chunk_ids = ids, r.evidence = ev, r.public_evidence = ev, "
        "r.count = size(ids), r.first_seen = reduce(m = null, c IN cs | CASE WHEN m IS NULL OR c.date < m "
        "THEN c.date ELSE m END), r.last_seen = reduce(m = null, c IN cs | CASE WHEN m IS NULL OR c.date > m "
        "THEN c.date ELSE m END), "
        "r.line_vec = CASE WHEN line = r.line THEN r.line_vec ELSE null END, "
        "r.line_hash = CASE WHEN line = r.line THEN r.line_hash ELSE null END, r.line = line"
    )
