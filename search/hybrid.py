"""Hybrid search: full-text and vector rankings of passages, each chunk at its best passage, and the full-text ranking
of whole chunks, fused by reciprocal rank, rolled up to notes.

A person's or client's own page often ranks first in all three legs for a question naming them; moving such a
page (People/, a client's page, wiki/entities/) below the second note when the question names its title was
simulated on the project's 21 sets over the shared vault: of 85 questions it changed, MRR 9 won and 45 lost. Those
pages are mostly right first; the one set where they are not (retrieval9) is not a pattern, and it is not done.

Measured and not used: Lucene's English analyzer (Porter stems, English stop words) for the passages' and chunks'
full-text indexes instead of standard-no-stop-words, so "items" meets "Action-item". Same graph, 23 sets: recall@10
0.836 -> 0.837, recall@20 0.914 -> 0.910, MRR 0.697 -> 0.701 (88 questions won, 96 lost), key facts within 8k 0.844
-> 0.840, cells below naive 15 -> 14 (other cells), and stems only for English in a vault of several languages.

Measured and not used: more English filler words left out of the full-text query (many much ever actually really
still yet any some just also only very can could would should may might must been being am, and with now currently
all more most other get got). Hybrid gained (MRR 0.697 -> 0.702 / 0.700, key facts within 8k 0.844 -> 0.850 /
0.855, cells below naive 15 -> 16 either way), but graph mode's current-first fell 0.731 -> 0.721 (2 won, 6 lost)
and its multi-hop key facts fell below hybrid's: "did we actually", "really", "would" and "now" are words the notes
that record what happened (or what holds now) use, so they are not filler for the questions kb is for.

Measured and not used: the vector leg left out for a question in a language the embedder does not read (the offline
MiniLM is English-only). On the 23 sets' 89 German, French and Chinese questions, hybrid without its vector leg:
recall@10 0.757 -> 0.641, recall@20 0.846 -> 0.744, MRR 0.557 -> 0.517; names, numbers and shared subwords still
carry, so the leg stays for every language."""

from __future__ import annotations

import datetime as dt
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kb.cypher import PRIVATE_WORD
from kb.embed import Embedder
from kb.errors import ConfigError
from kb.facets import folder_facet, tag_facet
from kb.search.fusion import FusionConfig
from kb.search.results import ChunkResult, FlatResult, NoteResult, SearchResult
from kb.store import SearchIndex

RRF_K = 60
QUESTION_WORDS = frozenset(
    "a an and are as at be but by did do does for from had has have how i if in into is it its me my "
    "no not of on or our so such than that the their then there these they this to was we were what "
    "when where which who whom whose why will with you your".split()
)
LUCENE_WORD = re.compile(r"\w+", re.UNICODE)
# Lucene's clause limit is 1,024; 64 terms (the first distinct ones) keep every question far under it, even if
# the analyzer splits a term in several, and a longer question is rarely made better by more
MAX_TERMS = 64
MAX_TERM_CHARS = 100  # Lucene splits a token at 255 characters; a longer "word" is noise, not a term
MAX_EMBED_CHARS = 32000  # about bge-m3's 8k-token window; a 1.6 MB question is not tokenized whole
CHUNK_FIELDS = ("text", "breadcrumb", "title")  # what the chunks' full-text index reads
IDEOGRAPH = re.compile(r"[\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
IDEOGRAPH_SPLIT = re.compile(r"([\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")


@dataclass(frozen=True)
class Filters:
    """Restrict a search to a folder subtree, a tag (with its nested tags) and a date range."""

    folder: str | None = None
    tag: str | None = None
    since: str | None = None
    until: str | None = None
    include_private: bool = False  # private notes are left out unless asked for

    def active(self) -> bool:
        return any(v not in (None, "") for v in self.params().values())

    def params(self) -> dict[str, Any]:
        tag = self.tag.lower().lstrip("#") if self.tag else None
        folder = self.folder.strip("/") if self.folder is not None else None
        return {"folder": folder, "tag": tag, "since": self.since, "until": self.until}


def iso_date(value: str | None, label: str) -> str | None:
    """A YYYY-MM-DD filter value, checked; `label` names it in the error (e.g. "--since")."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError as exc:
        raise ConfigError(f"{label} {value!r} is not a date: use YYYY-MM-DD") from exc


def query_terms(question: str, limit: int | None = None, stop: frozenset[str] = QUESTION_WORDS) -> list[str]:
    """The question's distinct search words, lower-cased, `stop` words left out (unless that leaves none),
    in order of first use; at most `limit` of them (default MAX_TERMS), each at most MAX_TERM_CHARS long."""
    limit = MAX_TERMS if limit is None else limit
    words: dict[str, None] = {}
    fallback: dict[str, None] = {}
    for match in LUCENE_WORD.finditer(question):
        for w in _split_ideographs(match.group().lower()[:MAX_TERM_CHARS]):
            if not w.strip("_"):
                continue
            if len(fallback) < limit:
                fallback.setdefault(w)
            if w not in stop:
                words.setdefault(w)
                if len(words) >= limit:
                    return list(words)
    return list(words or fallback)


def _split_ideographs(word: str) -> list[str]:
    """Han and Hiragana characters one by one, as Lucene's standard tokenizer reads them; other runs whole."""
    if not IDEOGRAPH.search(word):
        return [word]
    return [p for p in IDEOGRAPH_SPLIT.split(word) if p]


def lucene_query(question: str, filters: Filters | None = None, fields: tuple[str, ...] = ("search",)) -> str | None:
    """A Lucene query from any text: words only, so quotes, colons, AND, * or brackets never break it, and at
    most MAX_TERMS of them, so a pasted page never exceeds Lucene's clause limit. `fields`: the passages' one
    search field, or CHUNK_FIELDS for the chunks' own index."""
    seen = query_terms(question)
    if not seen:
        return None
    words = " ".join(seen)
    if len(fields) == 1:
        query = f"+{fields[0]}:({words})"
    else:
        query = "+(" + " ".join(f"{f}:({words})" for f in fields) + ")"
    if filters is None or not filters.include_private:
        query += f" -privacy:{PRIVATE_WORD}"
    if filters is not None:
        p = filters.params()
        if p["folder"]:
            query += f" +facets:{folder_facet(p['folder'])}"
        if p["tag"]:
            query += f" +facets:{tag_facet(p['tag'])}"
        if p["since"] or p["until"]:
            low = (p["since"] or "0000-01-01").replace("-", "")
            high = (p["until"] or "9999-12-31").replace("-", "")
            query += f" +facets:[kbd_{low} TO kbd_{high}]"
    return query


def question_vector(embedder: Embedder | None, question: str) -> list[float] | None:
    """The question's vector; only its first MAX_EMBED_CHARS characters are read (no embedder reads more)."""
    return embedder.embed_query(question[:MAX_EMBED_CHARS]) if embedder is not None else None


@dataclass
class ChunkHit:
    id: str
    path: str
    score: float = 0.0
    keyword_rank: int | None = None
    vector_rank: int | None = None
    lead: float = 0.0  # the legs' scores, each scaled 0..1 over its ranking: breaks reciprocal-rank ties
    text_rank: int | None = None  # the chunk's own rank in the chunks' full-text index


@dataclass
class NoteHit:
    path: str
    score: float
    keyword_rank: int | None
    vector_rank: int | None
    chunks: list[ChunkHit] = field(default_factory=list)
    text_rank: int | None = None


def fuse(
    keyword: list[dict[str, Any]],
    vector: list[dict[str, Any]],
    k: int = RRF_K,
    weights: tuple[float, float] = (1.0, 1.0),
    text: list[dict[str, Any]] | None = None,
    text_weight: float = 0.0,
) -> list[ChunkHit]:
    """Weighted reciprocal-rank fusion of two chunk rankings (three with `text`, the chunks' own full-text
    ranking). Ranks tie often (1st and 2nd against 2nd and 1st): then the chunk whose scores stand further above
    the rest of each leg's ranking wins, then the chunk id."""
    hits: dict[str, ChunkHit] = {}
    legs = [("keyword_rank", keyword, weights[0]), ("vector_rank", vector, weights[1])]
    if text and text_weight > 0:
        legs.append(("text_rank", text, text_weight))
    for attr, ranking, weight in legs:
        for rank, (row, scaled) in enumerate(zip(ranking, _scaled(ranking), strict=True), start=1):
            hit = hits.setdefault(row["id"], ChunkHit(row["id"], row["path"]))
            setattr(hit, attr, rank)
            hit.score += weight / (k + rank)
            hit.lead += weight * scaled
    return sorted(hits.values(), key=lambda h: (-h.score, -h.lead, h.id))


def _scaled(ranking: list[dict[str, Any]]) -> list[float]:
    """Each row's score min-max scaled over the ranking (1.0 when all are equal, 0.0 for rows without one)."""
    scores = [row.get("score") for row in ranking]
    known = [s for s in scores if s is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)
    return [0.0 if s is None else (s - low) / (high - low) if high > low else 1.0 for s in scores]


def roll_up(
    chunks: list[ChunkHit],
    limit: int,
    per_note: int,
    note_weight: float = 0.0,
    note_k: int = RRF_K,
    chunk_floor: float = 0.0,
    first_chunks: int = 0,
) -> list[NoteHit]:
    """Notes ranked by their best chunk (then its scores' lead, the sum of their chunks, the path), each with
    its best `per_note` chunks (the first note: `first_chunks`, if more) that score at least `chunk_floor` times
    its best (FusionConfig.chunk_floor); with `note_weight`, each note's score also gains that times its
    reciprocal-rank fusion over the legs' note rankings (see FusionConfig.note_weight)."""
    shown = max(per_note, first_chunks)
    by_note: dict[str, list[ChunkHit]] = {}
    for hit in chunks:
        by_note.setdefault(hit.path, []).append(hit)
    notes = []
    for path, hits in by_note.items():
        notes.append(
            NoteHit(
                path,
                hits[0].score,
                _best(h.keyword_rank for h in hits),
                _best(h.vector_rank for h in hits),
                [h for h in hits[:shown] if h is hits[0] or h.score >= chunk_floor * hits[0].score],
                _best(h.text_rank for h in hits),
            )
        )
    if note_weight > 0:
        extra = note_fusion(notes, note_k)
        for n in notes:
            n.score += note_weight * extra[n.path]
    notes.sort(key=lambda n: (-n.score, -by_note[n.path][0].lead, -sum(c.score for c in by_note[n.path]), n.path))
    for n in notes[1:limit]:
        n.chunks = n.chunks[:per_note]
    return notes[:limit]


def note_fusion(notes: list[NoteHit], k: int) -> dict[str, float]:
    """Per note, the reciprocal-rank fusion of the legs' note rankings: in each leg the notes ordered by their
    best chunk's rank there (ties by path), a note absent from a leg gaining nothing from it."""
    out = {n.path: 0.0 for n in notes}
    for attr in ("keyword_rank", "vector_rank", "text_rank"):
        ranked = sorted((getattr(n, attr), n.path) for n in notes if getattr(n, attr) is not None)
        for rank, (_, path) in enumerate(ranked, start=1):
            out[path] += 1.0 / (k + rank)
    return out


def _best(ranks: Any) -> int | None:
    values = [r for r in ranks if r is not None]
    return min(values) if values else None


def fuse_passages(
    keyword: list[dict[str, Any]],
    vector: list[dict[str, Any]],
    cfg: FusionConfig,
    text: list[dict[str, Any]] | None = None,
) -> list[ChunkHit]:
    """Chunks ranked from two passage rankings (a chunk's ranks are those of its best passage in each leg) and,
    with chunk-level fusion, the chunks' own full-text ranking `text`."""
    weights = (cfg.keyword_weight, cfg.vector_weight)
    kw, vec = per_chunk(keyword), per_chunk(vector)
    if not cfg.passage_fusion:
        return fuse(kw, vec, cfg.rrf_k, weights, text, cfg.text_weight)
    ranks = {
        attr: {r["id"]: i for i, r in enumerate(rows, start=1)}
        for attr, rows in (("keyword_rank", kw), ("vector_rank", vec))
    }
    passages = fuse(
        [{"id": r["passage"], "path": r["path"], "score": r.get("score")} for r in keyword],
        [{"id": r["passage"], "path": r["path"], "score": r.get("score")} for r in vector],
        cfg.rrf_k,
        weights,
    )
    chunk_of = {r["passage"]: r["id"] for r in keyword + vector}
    hits: dict[str, ChunkHit] = {}
    for p in passages:
        cid = chunk_of[p.id]
        if cid not in hits:
            kw_rank, vec_rank = ranks["keyword_rank"].get(cid), ranks["vector_rank"].get(cid)
            hits[cid] = ChunkHit(cid, p.path, p.score, kw_rank, vec_rank, p.lead)
    return list(hits.values())


def per_chunk(passages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ranking of passages as a ranking of their chunks: each chunk at the rank of its best passage."""
    seen: dict[str, dict[str, Any]] = {}
    for row in passages:
        seen.setdefault(row["id"], row)
    return list(seen.values())


@dataclass
class Ranking:
    """Fused chunk ranking of one question, with timings (ms)."""

    chunks: list[ChunkHit]
    timing: dict[str, float]
    qvec: list[float] | None = None  # the question's vector, for a caller that reads more with it


def _full_text(
    index: SearchIndex, question: str, filters: Filters, k: int, cfg: FusionConfig
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float]:
    """The passage and whole-chunk full-text rankings, and the time they took (ms)."""
    t0 = time.perf_counter()
    lucene = lucene_query(question, filters) if cfg.keyword_weight > 0 else None
    keyword = index.keyword(lucene, cfg.depth("keyword", k)) if lucene else []
    whole = cfg.text_weight > 0 and not cfg.passage_fusion
    chunk_query = lucene_query(question, filters, CHUNK_FIELDS) if whole else None
    text = index.keyword_chunks(chunk_query, cfg.depth("text", k)) if chunk_query else []
    return keyword, text, (time.perf_counter() - t0) * 1e3


def rank_chunks(
    index: SearchIndex,
    embedder: Embedder | None,
    question: str,
    filters: Filters,
    k: int,
    fusion: FusionConfig | None = None,
) -> Ranking:
    """Keyword, text and vector rankings of chunks, fused by reciprocal rank; a leg of weight 0 is skipped. The
    full-text legs run beside the question's embedding and the vector leg when the store allows it."""
    cfg = fusion or FusionConfig()
    t0 = time.perf_counter()
    pool = ThreadPoolExecutor(max_workers=1) if index.parallel else None
    try:
        pending = pool.submit(_full_text, index, question, filters, k, cfg) if pool else None
        t1 = time.perf_counter()
        vec = None
        if cfg.vector_weight > 0:
            vec = question_vector(embedder, question)
        t2 = time.perf_counter()
        vector = (
            index.vector(vec, cfg.depth("vector", k), filters.params(), filters.include_private)
            if vec is not None
            else []
        )
        t3 = time.perf_counter()
        keyword, text, keyword_ms = pending.result() if pending else _full_text(index, question, filters, k, cfg)
    finally:
        if pool:
            pool.shutdown()
    t4 = time.perf_counter()
    fused = fuse_passages(keyword, vector, cfg, text)
    t5 = time.perf_counter()
    timing = {
        "keyword_ms": keyword_ms,
        "embed_ms": (t2 - t1) * 1e3,
        "vector_ms": (t3 - t2) * 1e3,
        "fuse_ms": (t5 - t4) * 1e3,
        "legs_ms": (t4 - t0 - (t2 - t1)) * 1e3,  # wall time of the legs, without the embedding
    }
    return Ranking(fused, timing, vec)


def hybrid_search(
    index: SearchIndex,
    embedder: Embedder | None,
    question: str,
    k: int = 20,
    filters: Filters | None = None,
    per_note: int = 3,
    fusion: FusionConfig | None = None,
) -> SearchResult:
    """Ranked notes with their best chunks in full and the score parts."""
    return hybrid_with_vector(index, embedder, question, k, filters, per_note, fusion)[0]


def hybrid_with_vector(
    index: SearchIndex,
    embedder: Embedder | None,
    question: str,
    k: int = 20,
    filters: Filters | None = None,
    per_note: int = 3,
    fusion: FusionConfig | None = None,
) -> tuple[SearchResult, list[float] | None]:
    """hybrid_search, and the question's vector it embedded beside the full-text legs (None without one)."""
    filters = filters or Filters()
    ranking = rank_chunks(index, embedder, question, filters, k, fusion)
    t0 = time.perf_counter()
    cfg = fusion or FusionConfig()
    notes = roll_up(ranking.chunks, k, per_note, cfg.note_weight, cfg.note_rrf_k, cfg.chunk_floor, cfg.first_chunks)
    details = index.chunks([c.id for n in notes for c in n.chunks])
    timing = dict(ranking.timing)
    timing["fuse_ms"] += (time.perf_counter() - t0) * 1e3
    timing["search_ms"] = timing["legs_ms"] + timing["fuse_ms"]  # the legs may overlap: their wall time
    return SearchResult(
        query=question,
        mode="hybrid",
        filters={**filters.params(), "include_private": filters.include_private},
        k=k,
        embedder=embedder.identity if embedder is not None else None,
        timing=timing,
        notes=[_note(rank, n, details) for rank, n in enumerate(notes, start=1)],
    ), ranking.qvec


def flat_chunks(
    index: SearchIndex,
    embedder: Embedder | None,
    question: str,
    limit: int = 200,
    filters: Filters | None = None,
    fusion: FusionConfig | None = None,
) -> FlatResult:
    """Chunks in fused order, not rolled up to notes: the flat-retrieval arm."""
    ranking = rank_chunks(index, embedder, question, filters or Filters(), limit // 5, fusion=fusion)
    hits = ranking.chunks[:limit]
    details = index.chunks([h.id for h in hits])
    return FlatResult(question, ranking.timing, [_chunk(h, details.get(h.id, {}), h.path) for h in hits])


def notes_for_chunks(index: SearchIndex, pairs: list[tuple[str, str]]) -> list[NoteResult]:
    """Result entries for notes outside a ranking, each with one given chunk (path, chunk id) and no score."""
    details = index.chunks([cid for _, cid in pairs])
    return [
        _note(0, NoteHit(path, 0.0, None, None, [ChunkHit(cid, path)]), details)
        for path, cid in pairs
        if cid in details
    ]


def _note(rank: int, note: NoteHit, details: dict[str, dict[str, Any]]) -> NoteResult:
    first = details.get(note.chunks[0].id, {}) if note.chunks else {}
    return NoteResult(
        rank=rank,
        path=note.path,
        title=first.get("title"),
        date=first.get("note_date"),
        score=note.score,
        keyword_rank=note.keyword_rank,
        vector_rank=note.vector_rank,
        chunks=tuple(_chunk(c, details.get(c.id, {})) for c in note.chunks),
        text_rank=note.text_rank,
        updated=first.get("note_updated"),
    )


def _chunk(hit: ChunkHit, d: dict[str, Any], path: str = "") -> ChunkResult:
    return ChunkResult(
        id=hit.id,
        breadcrumb=d.get("breadcrumb"),
        date=d.get("date"),
        text=d.get("text"),
        tokens=d.get("tokens"),
        score=hit.score,
        keyword_rank=hit.keyword_rank,
        vector_rank=hit.vector_rank,
        path=path,
        text_rank=hit.text_rank,
    )
