"""Runs search modes over a question set and scores each question; no paid calls, so re-runs are free."""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kb.embed import Embedder
from kb.eval.metrics import (
    ContextBlock,
    all_gold_at,
    context_text,
    count_tokens,
    current_band,
    current_cause,
    current_first,
    facts_found,
    mrr,
    ndcg_at,
    note_recall_in,
    pack_budget,
    precision_in,
    recall_at,
)
from kb.eval.naive import NaiveIndex
from kb.eval.questions import Question
from kb.search.fusion import FusionConfig
from kb.search.hybrid import Filters, flat_chunks, hybrid_search
from kb.search.modes import run_search
from kb.search.results import ChunkResult, SearchResult, shown_score
from kb.store import SearchIndex, Store

LOCAL = Filters(include_private=True)  # the eval runs locally: private notes count like any other

BUDGET = 8000
DEPTH_NOTES = 20
METRICS = (
    "recall@10",
    "recall@20",
    "all_gold@20",
    "mrr",
    "ndcg@10",
    "fact_recall@8k",
    "note_recall@8k",
    "precision@8k",
    "current_first",
)


@dataclass
class ModeOutput:
    """What a mode returned for one question: ranked notes and the context it would hand an answerer."""

    ranked: list[str]
    blocks: list[ContextBlock]
    top_score: float | None
    latency_ms: float
    search_ms: float
    standings: dict[str, str] | None = None  # graph search's reading of the notes' claims (NoteResult.standing)


@dataclass
class Row:
    """One question scored under one mode."""

    qid: str
    category: str
    mode: str
    metrics: dict[str, float | None]
    facts: list[bool]
    context_tokens: int
    latency_ms: float
    search_ms: float
    top: list[str] = field(default_factory=list)  # the first 20 notes: where the gold and distractors sat
    top_score: float | None = None
    current_at: str | None = None  # where the current note ranked (metrics.current_band), for current-first
    current_cause: str | None = None  # why current-first missed, as graph search read the claims (metrics.CAUSES)


Mode = Callable[[str, int], ModeOutput]


def chunk_block(path: str, c: ChunkResult) -> ContextBlock:
    """A chunk as the answerer reads it: breadcrumb and date, then the text."""
    return ContextBlock(path, f"{c.breadcrumb} ({c.date})\n{c.text}")


def hybrid_mode(index: SearchIndex, embedder: Embedder | None, fusion: FusionConfig | None = None) -> Mode:
    """Top 20 notes, each with its best chunks in full, in rank order (`fusion` picks the legs and weights)."""

    def run(question: str, budget: int) -> ModeOutput:
        t0 = time.perf_counter()
        res = hybrid_search(index, embedder, question, k=DEPTH_NOTES, filters=LOCAL, fusion=fusion)
        latency = (time.perf_counter() - t0) * 1e3
        blocks = [chunk_block(r.path, c) for r in res.notes for c in r.chunks]
        top = shown_score(res.notes[0].score) if res.notes else None
        return ModeOutput(
            [r.path for r in res.notes], pack_budget(blocks, budget), top, latency, res.timing["search_ms"]
        )

    return run


def search_mode(
    store: Store,
    embedder: Embedder | None,
    preset: str = "default",
    mode: str = "graph",
    current: bool = False,
    today: dt.date | None = None,
    ai_chat_folders: tuple[str, ...] | None = None,
) -> Mode:
    """kb search in `mode` (graph, auto, or hybrid with its time prior): the ranked notes; graph lines first
    (within their share), then the chunks. `current` leaves outdated claims out of the lines (kb search
    --current); `today` anchors the questions' relative dates."""

    def run(question: str, budget: int) -> ModeOutput:
        t0 = time.perf_counter()
        res = run_search(
            store,
            embedder,
            question,
            mode=mode,
            k=DEPTH_NOTES,
            filters=LOCAL,
            preset=preset,
            current=current,
            today=today,
            ai_chat_folders=ai_chat_folders,
        )
        latency = (time.perf_counter() - t0) * 1e3
        lines = [ContextBlock(ln.path, ln.text) for ln in res.lines]
        chunks = [chunk_block(r.path, c) for r in res.notes for c in r.chunks]
        top = shown_score(res.notes[0].score) if res.notes else None
        search_ms = res.timing.get("search_ms", 0.0) + res.timing.get("graph_ms", 0.0)
        ranked = [r.path for r in res.notes]
        return ModeOutput(ranked, pack_budget(lines + chunks, budget), top, latency, search_ms, read_standings(res))

    return run


def read_standings(res: SearchResult) -> dict[str, str] | None:
    """How graph search read each ranked note's claims (NoteResult.standing); None for a result of another mode
    (auto may route to hybrid)."""
    if res.mode != "graph":
        return None
    return {r.path: r.standing for r in res.notes if r.standing}


def flat_mode(index: SearchIndex, embedder: Embedder | None) -> Mode:
    """Fused chunks as they rank, packed to the budget the richer mode used."""

    def run(question: str, budget: int) -> ModeOutput:
        t0 = time.perf_counter()
        res = flat_chunks(index, embedder, question, limit=200, filters=LOCAL)
        latency = (time.perf_counter() - t0) * 1e3
        blocks = [chunk_block(c.path, c) for c in res.chunks]
        ranked = list(dict.fromkeys(c.path for c in res.chunks))
        timing = res.timing
        top = shown_score(res.chunks[0].score) if res.chunks else None
        return ModeOutput(
            ranked,
            pack_budget(blocks, budget),
            top,
            latency,
            timing["keyword_ms"] + timing["vector_ms"] + timing["fuse_ms"],
        )

    return run


def naive_mode(naive: NaiveIndex) -> Mode:
    """The windowed baseline: top 20 notes, each with its best 3 windows, in rank order."""

    def run(question: str, budget: int) -> ModeOutput:
        t0 = time.perf_counter()
        hits = naive.search(question, DEPTH_NOTES)
        latency = (time.perf_counter() - t0) * 1e3
        blocks = [ContextBlock(h.path, w.text) for h in hits for w in h.windows[:3]]
        return ModeOutput(
            [h.path for h in hits], pack_budget(blocks, budget), hits[0].score if hits else None, latency, latency
        )

    return run


def score(q: Question, mode: str, out: ModeOutput) -> Row:
    """Every metric for one question under one mode."""
    gold = q.gold()
    ctx = context_text(out.blocks)
    found = facts_found(ctx, q.quotes())
    metrics: dict[str, float | None] = {
        "recall@10": recall_at(out.ranked, gold, 10),
        "recall@20": recall_at(out.ranked, gold, 20),
        "all_gold@20": all_gold_at(out.ranked, gold, 20),
        "mrr": mrr(out.ranked, gold),
        "ndcg@10": ndcg_at(out.ranked, gold, 10),
        "fact_recall@8k": sum(found) / len(found) if found else math.nan,
        "note_recall@8k": note_recall_in(out.blocks, gold),
        "precision@8k": precision_in(out.blocks, gold),
        "current_first": current_first(out.ranked, q.current_path, q.distractors),
    }
    return Row(
        q.id,
        q.category,
        mode,
        metrics,
        found,
        sum(count_tokens(b.text) for b in out.blocks),
        round(out.latency_ms, 2),
        round(out.search_ms, 2),
        out.ranked[:20],
        out.top_score,
        current_band(out.ranked, q.current_path, q.distractors),
        current_cause(out.ranked, out.standings, q.current_path, q.distractors),
    )


def run_modes(
    questions: Sequence[Question],
    modes: dict[str, Mode],
    budget: int = BUDGET,
    advance: Callable[[int], None] | None = None,
) -> list[Row]:
    """Each question under each mode; the flat arm gets the token count of the first richer mode."""
    rows: list[Row] = []
    richer = [m for m in modes if m != "flat"]
    for q in questions:
        used = budget
        for name in richer:
            row = score(q, name, modes[name](q.question, budget))
            rows.append(row)
            if name == richer[0]:
                used = row.context_tokens
        if "flat" in modes:
            rows.append(score(q, "flat", modes["flat"](q.question, used if richer else budget)))
        if advance:
            advance(1)
    return rows


def rows_json(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [
        {
            **r.__dict__,
            "metrics": {
                k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else v) for k, v in r.metrics.items()
            },
        }
        for r in rows
    ]
