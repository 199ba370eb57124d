"""Plan kb's search statements before the first question. Neo4j plans a statement the first time it sees it and
keeps the plan until the server stops (or its cache evicts it); on a just-started server the first graph search
took about 5 s, the next 0.25 s (the shared vault). Reads pass their parameters in one map (kb.cypher.boxed), so
one run plans each statement for every later question."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from kb.embed import Embedder
from kb.search.modes import run_search
from kb.store import Store

# a state question: graph search reads claims, timelines and the re-ranking's chunk claims for it
WARM_QUESTION = "What is the current plan, and what did we decide about it?"


@dataclass
class FixedVector:
    """Stands in for the vault's embedder (its identity and size) without loading a model: every text gets the
    same unit vector, and a statement's plan does not depend on the vector."""

    model_name: str
    identity: str
    size: int

    @property
    def dimensions(self) -> int:
        return self.size

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0 / math.sqrt(self.size)] * self.size


def stand_in(store: Store) -> Embedder | None:
    """A FixedVector for the embedder that built the graph's vectors, or None before any was written."""
    meta = store.get_meta("embedder")
    identity, size = meta.get("identity"), meta.get("dimensions")
    if not identity or not size:
        return None
    return FixedVector(str(identity), str(identity), int(size))


def warm_searches(store: Store, embedder: Embedder | None = None) -> float | None:
    """Run one graph search (hybrid search runs under it) so the server plans their statements; the seconds it
    took, or None for a graph that holds no vault yet (nothing to search). Without `embedder`, the stand-in for the
    graph's (none before vectors exist: full-text only)."""
    if not store.holds_chunks():
        return None
    t0 = time.perf_counter()
    run_search(store, embedder or stand_in(store), WARM_QUESTION, mode="graph", k=20)
    return time.perf_counter() - t0
