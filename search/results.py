"""Typed search results: what hybrid and graph search return, and `to_json()`, the `kb search --json` contract."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kb.search.lines import Line


def shown_score(score: float) -> float:
    """A fused score as every output shows it (--json, the MCP tool, the eval's rows): 6 places."""
    return round(score, 6)


def _ms(timing: dict[str, float]) -> dict[str, float]:
    return {key: round(v, 2) for key, v in timing.items()}


@dataclass(frozen=True)
class ChunkResult:
    """One chunk in full, with its fused score and the best rank of its passages in each leg."""

    id: str
    breadcrumb: str | None
    date: str | None
    text: str | None
    tokens: int | None
    score: float
    keyword_rank: int | None
    vector_rank: int | None
    path: str = ""  # the note's path, set only in flat results (elsewhere the note holds it)
    text_rank: int | None = None  # the chunk's rank in the chunks' own full-text index (the third leg)

    def to_json(self) -> dict[str, Any]:
        head = {"path": self.path} if self.path else {}
        return {
            **head,
            "id": self.id,
            "breadcrumb": self.breadcrumb,
            "date": self.date,
            "text": self.text,
            "tokens": self.tokens,
            "score": shown_score(self.score),
            "keyword_rank": self.keyword_rank,
            "vector_rank": self.vector_rank,
            "text_rank": self.text_rank,
        }


@dataclass(frozen=True)
class NoteResult:
    """A ranked note with its best chunks; `promoted` / `demoted` say why graph search moved it, `standing` how its
    claims about what a question of state asks read (states / outdated / not_fact, or none of them about it) and
    `standing_claim` which."""

    rank: int
    path: str
    title: str | None
    date: str | None
    score: float
    keyword_rank: int | None
    vector_rank: int | None
    chunks: tuple[ChunkResult, ...]
    promoted: str | None = None
    demoted: str | None = None
    updated: str | None = None  # the note's `updated` date, when its front matter has one
    text_rank: int | None = None  # the best rank of its chunks in the chunks' own full-text index
    standing: str | None = None
    standing_claim: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rank": self.rank,
            "path": self.path,
            "title": self.title,
            "date": self.date,
            "score": shown_score(self.score),
            "keyword_rank": self.keyword_rank,
            "vector_rank": self.vector_rank,
            "text_rank": self.text_rank,
            "chunks": [c.to_json() for c in self.chunks],
        }
        for key in ("updated", "promoted", "demoted", "standing", "standing_claim"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


@dataclass(frozen=True)
class QuestionReading:
    """How the question was read: language, intent, dates (`detailed`: graph search also shows now and rules)."""

    language: str | None
    intent: str
    readings: list[str]
    as_of: str | None
    current_only: bool
    now: bool = False
    rules: tuple[str, ...] = ()
    detailed: bool = False

    def to_json(self) -> dict[str, Any]:
        if not self.detailed:
            return {
                "language": self.language,
                "intent": self.intent,
                "readings": self.readings,
                "as_of": self.as_of,
                "current_only": self.current_only,
            }
        return {
            "language": self.language,
            "intent": self.intent,
            "now": self.now,
            "readings": self.readings,
            "rules": list(self.rules),
            "as_of": self.as_of,
            "current_only": self.current_only,
        }


@dataclass(frozen=True)
class GraphReport:
    """What graph search added: entry entities, the packed lines, what it re-ranked and dropped, its config."""

    entry_entities: list[dict[str, Any]]
    implied_relationships: list[str]
    lines: list[Line]
    reranked: list[dict[str, str]]
    dropped_by_trim: int
    dropped_as_read_in_chunks: int
    tokens: int
    config: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_entities": self.entry_entities,
            "implied_relationships": self.implied_relationships,
            "lines": [asdict(line) for line in self.lines],
            "reranked": self.reranked,
            "dropped_by_trim": self.dropped_by_trim,
            "dropped_as_read_in_chunks": self.dropped_as_read_in_chunks,
            "tokens": self.tokens,
            "config": self.config,
        }


@dataclass(frozen=True)
class Route:
    """The mode `auto` chose, and why."""

    mode: str
    reason: str
    rules: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "reason": self.reason, "rules": self.rules}


@dataclass(frozen=True)
class SearchResult:
    """One search: the ranked notes, and the question's reading, graph lines and route when the mode made them."""

    query: str
    mode: str
    filters: dict[str, Any]
    k: int
    embedder: str | None
    timing: dict[str, float]
    notes: list[NoteResult]
    question: QuestionReading | None = None
    graph: GraphReport | None = None
    router: Route | None = None

    @property
    def lines(self) -> list[Line]:
        return self.graph.lines if self.graph is not None else []

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "filters": self.filters,
            "k": self.k,
            "embedder": self.embedder,
            "timing": _ms(self.timing),
            "results": [n.to_json() for n in self.notes],
        }
        for key, part in (("question", self.question), ("graph", self.graph), ("router", self.router)):
            if part is not None:
                out[key] = part.to_json()
        return out


@dataclass(frozen=True)
class FlatResult:
    """Chunks in fused order, not rolled up to notes (the eval's flat arm)."""

    query: str
    timing: dict[str, float]
    chunks: list[ChunkResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": "flat",
            "timing": _ms(self.timing),
            "chunks": [c.to_json() for c in self.chunks],
        }
