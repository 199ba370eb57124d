"""One entry point for every search mode, used by the CLI, the MCP server and the eval."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from kb.embed import Embedder
from kb.search.graph import PRESETS, GraphConfig, graph_search, reading_of
from kb.search.hybrid import Filters, hybrid_search
from kb.search.question import parse
from kb.search.results import Route, SearchResult
from kb.search.router import route
from kb.store import KnowledgeStore, SearchIndex, Store

MODES = ("hybrid", "graph", "auto")


def run_search(
    store: Store,
    embedder: Embedder | None,
    question: str,
    mode: str = "hybrid",
    k: int = 20,
    filters: Filters | None = None,
    preset: str = "default",
    as_of: str | None = None,
    current: bool = False,
    today: dt.date | None = None,
    ai_chat_folders: tuple[str, ...] | None = None,
) -> SearchResult:
    """Search in the given mode; `auto` routes by rules and says why. `as_of` (YYYY-MM-DD) keeps notes written
    by then and reads claims as they stood; `current` leaves outdated claims out of the graph lines; `today`
    anchors relative dates in the question; `ai_chat_folders` (the config's) say which notes are saved AI chats."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    # plain hybrid search reads no question (reading dates loads dateparser, about 0.4 s in a fresh process)
    q = (
        parse(question, today or (dt.date.fromisoformat(as_of) if as_of else None))
        if mode != "hybrid" or as_of or current
        else None
    )
    if as_of:
        f = filters or Filters()
        filters = replace(f, until=min(f.until, as_of) if f.until else as_of)
    reason = None
    if mode == "auto" and q is not None:
        mode, reason = route(q, as_of, current)
    index = SearchIndex(store)
    if mode == "graph" and q is not None:
        cfg = PRESETS.get(preset, GraphConfig())
        if cfg.k != k:
            cfg = replace(cfg, k=k)
        if ai_chat_folders is not None:
            cfg = replace(cfg, ai_chat_folders=ai_chat_folders)
        result = graph_search(index, KnowledgeStore(store), embedder, q, cfg, filters, as_of, current)
    else:
        result = hybrid_search(index, embedder, question, k=k, filters=filters)
        if q is not None:
            result = replace(result, question=reading_of(q, as_of, current, detailed=False))
    if reason is not None and q is not None:
        result = replace(result, router=Route(mode, reason, list(q.rules)))
    return result
