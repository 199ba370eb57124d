"""One entry point for every search mode, used by the CLI, the MCP server and the eval."""

from __future__ import annotations

from typing import Any

from kb.embed import Embedder
from kb.store import KnowledgeStore, SearchIndex, Store
from search.graph import PRESETS, GraphConfig, graph_search
from search.hybrid import Filters, hybrid_search
from search.router import route

MODES = ("hybrid", "graph", "auto")


def run_search(store: Store, embedder: Embedder | None, question: str, mode: str = "hybrid", k: int = 20,
               filters: Filters | None = None, preset: str = "default") -> dict[str, Any]:
    """Search in the given mode; `auto` routes by rules and says why."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    reason = None
    if mode == "auto":
        mode, reason = route(question)
    index = SearchIndex(store)
    if mode == "graph":
        cfg = PRESETS.get(preset, GraphConfig())
        if cfg.k != k:
            from dataclasses import replace
            cfg = replace(cfg, k=k)
        result = graph_search(index, KnowledgeStore(store), embedder, question, cfg, filters)
    else:
        result = hybrid_search(index, embedder, question, k=k, filters=filters)
    if reason is not None:
        result["router"] = {"mode": mode, "reason": reason}
    return result
