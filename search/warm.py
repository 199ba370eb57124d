"""Warm the server for searching before the first question. Neo4j plans a statement the first time it sees it and
keeps the plan until the server stops (or its cache evicts it); on a just-started server the first graph search
took about 5 s, the next 0.25 s (the shared vault). Reads pass their parameters in one map (kb.cypher.boxed), so
one run plans each statement for every later question.

Planned is not yet fast: the server compiles its hot code paths (the full-text and Cypher runtimes) while it
serves, on the same cores. At 13,284 notes the first 50 varied questions after a start took 80-90 ms (p50) with
the planning search alone, 42-60 ms after 20 to 150 more plain searches on the vault's own words, 33-58 ms after 60
searches of every path (plain and filtered, hybrid and graph), and 24-31 ms on a server that had served for a while
(bench/search_latency.py). So the warm-up also runs up to WARM_SEARCHES such searches, within WARM_BUDGET_S.

Each of them runs the vector leg too, with a stand-in vector of its own (FixedVector: no model is loaded): the
passages nearest differ from search to search, so the server reads more of the graph before the first question.
Measured on the bench's 13,284 notes (50 questions right after the warm-up, on a restarted server, runs interleaved
on one machine): search p50 44-50 ms (median of 4 runs 46.7) with the vector leg only in the graph searches, 28-40
ms (median of 7 runs 34.5) with it in every search, at 1.7 s more warm-up (12 s in all); the same 1.7 s spent on
20 more searches without it gave 39-48 ms; one vector for every search gave 32-48 ms."""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kb import cypher
from kb.embed import Embedder
from kb.search.hybrid import Filters
from kb.search.modes import run_search
from kb.store import Store

# a state question: graph search reads claims, timelines and the re-ranking's chunk claims for it
WARM_QUESTION = "What is the current plan, and what did we decide about it?"
WARM_SEARCHES = 60  # searches on the vault's own words after the planning one
WARM_BUDGET_S = 6.0  # and no more time than this for them
GRAPH_EVERY = 4  # every 4th of them in graph mode (hybrid runs under it)
PHRASE_WORDS = 6
SINCE = "2000-01-01"  # a date filter nearly every dated chunk passes


@dataclass
class FixedVector:
    """Stands in for the vault's embedder (its identity and size) without loading a model: each text gets a unit
    vector fixed by its bytes (the same text, the same vector, in every process), so searches on different
    phrases read different nearest passages; a statement's plan does not depend on the vector."""

    model_name: str
    identity: str
    size: int

    @property
    def dimensions(self) -> int:
        return self.size

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        raw = [b - 127.5 for b in hashlib.shake_256(text.encode("utf-8")).digest(self.size)]
        norm = math.sqrt(sum(x * x for x in raw))
        return [x / norm for x in raw]


@dataclass(frozen=True)
class Warmed:
    """What a warm-up ran: searches (the planning one included) and the seconds they took."""

    searches: int
    seconds: float


def stand_in(store: Store) -> Embedder | None:
    """A FixedVector for the embedder that built the graph's vectors, or None before any was written."""
    meta = store.get_meta("embedder")
    identity, size = meta.get("identity"), meta.get("dimensions")
    if not identity or not size:
        return None
    return FixedVector(str(identity), str(identity), int(size))


def phrases(texts: Sequence[str], words: int = PHRASE_WORDS) -> list[str]:
    """One phrase of `words` words from each text (its alphabetic words, from a place that moves with the text's
    position), so the warm-up's questions meet the vault's own terms; texts without such words give none."""
    return [p for p in (_phrase(i, t, words) for i, t in enumerate(texts)) if p]


def _phrase(i: int, text: str, words: int) -> str:
    found = [w for w in text.split() if w.isalpha()]
    start = (i * 7) % max(1, len(found) - words + 1)
    return " ".join(found[start : start + words])


def variant(i: int, row: Mapping[str, Any]) -> tuple[str, Filters]:
    """The mode and filters of the i-th warm search on a chunk `row` (its folder and tags): every path a search
    takes gets warm, filtered ones too (a folder, a tag or a date range is another full-text query and mask)."""
    mode = "graph" if i % GRAPH_EVERY == GRAPH_EVERY - 1 else "hybrid"
    folder, tags = str(row.get("folder") or ""), list(row.get("tags") or [])
    if i % 6 == 1 and folder:
        return mode, Filters(folder=folder.split("/")[0])
    if i % 6 == 3 and tags:
        return mode, Filters(tag=str(tags[0]))
    if i % 6 == 5:
        return mode, Filters(since=SINCE)
    return mode, Filters()


def warm_searches(
    store: Store,
    embedder: Embedder | None = None,
    count: int = WARM_SEARCHES,
    budget_s: float = WARM_BUDGET_S,
    each: Callable[[], contextlib.AbstractContextManager[object]] | None = None,
) -> Warmed | None:
    """Run one graph search (hybrid search runs under it) so the server plans their statements, then up to `count`
    searches on phrases of the vault's first chunks while `budget_s` lasts (plain and filtered, hybrid and graph);
    None for a graph that holds no vault yet (nothing to search). `embedder` reads the planning question (default:
    the stand-in for the graph's; none before vectors exist: full-text only); the stand-in reads the other
    searches' phrases, so no model reads 60 questions and each search runs its vector leg. `each` opens a
    scope around every search (the MCP server's view: one short transaction each, so the warm-up never holds the
    view's locks for seconds while a first call waits on them)."""
    if not store.holds_chunks():
        return None
    t0 = time.perf_counter()
    fixed = stand_in(store)
    scope = each or contextlib.nullcontext
    with scope():
        run_search(store, embedder or fixed, WARM_QUESTION, mode="graph", k=20)
    done, t1 = 1, time.perf_counter()
    rows = store.read(cypher.chunk_sample(), skip=0, limit=count) if count else []
    for i, row in enumerate(rows):
        phrase = _phrase(i, str(row["text"] or ""), PHRASE_WORDS)
        if not phrase:
            continue
        if time.perf_counter() - t1 > budget_s:
            break
        mode, filters = variant(i, row)
        with scope():
            run_search(store, fixed, phrase, mode=mode, k=20, filters=filters)
        done += 1
    return Warmed(done, time.perf_counter() - t0)
