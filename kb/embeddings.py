"""The embedding step of a refresh: pending passages in batches, each batch stored before the next."""

from __future__ import annotations

import numpy as np

from kb.embed import Embedder
from kb.errors import EmbedderError
from kb.passages import embed_text
from kb.progress import Bars
from kb.store import Store

BATCH = 64


def require_built_by(store: Store, embedder: Embedder, fix: str) -> None:
    """The index exists and this embedder built it, or an error naming both and `fix`."""
    built = store.get_meta("embedder").get("identity")
    if not built:
        raise EmbedderError("no embeddings yet: run `kb refresh` first")
    if built != embedder.identity:
        raise EmbedderError(
            f"the vector index was built with {built} but the configured embedder is {embedder.identity}: {fix}"
        )


def line_embedder(store: Store, embedder: Embedder) -> Embedder | None:
    """The embedder for a knowledge rebuild's claim and link lines: none when the graph holds no vectors yet,
    this one when it built them, else an error (the layer would be written with no line vectors, and graph
    search would lose every line similarity until the next refresh)."""
    if not store.get_meta("embedder").get("identity"):
        return None
    require_built_by(
        store,
        embedder,
        "set KB_EMBEDDER (or `embedder` in the kb config) to the one that built it, or run `kb refresh --reembed`",
    )
    return embedder


class EmbedStep:
    """Embeds every :Pending passage; an interrupted run resumes at the first unstored batch."""

    def __init__(self, embedder: Embedder, reembed: bool = False) -> None:
        self.embedder = embedder
        self.reembed = reembed
        self.identity = embedder.identity
        self.fresh: dict[str, np.ndarray] = {}  # this run's vectors by passage hash, for the vector file

    def check_index(self, store: Store) -> None:
        """The index was built by this embedder, or a clear error naming both and the fix."""
        meta = store.get_meta("embedder")
        if meta and meta.get("identity") != self.identity and not store.has_vectors():
            store.drop_vector_index()  # made before any vector was written: it binds no embedder yet
            meta = {}
        if self.reembed and meta.get("identity") != self.identity:
            store.drop_vector_index()
            store.mark_all_pending()
            meta = {}
        if meta:
            require_built_by(store, self.embedder, "run `kb refresh --reembed` to rebuild it (or set embedder back)")
        else:
            store.set_meta("embedder", {"identity": self.identity, "dimensions": self.embedder.dimensions})
        store.ensure_vector_index(self.embedder.dimensions)

    def __call__(self, store: Store, bars: Bars) -> int:
        self.check_index(store)
        total = store.counts()["pending"]
        done = 0
        with bars.step("embedding passages", total) as advance:
            while n := self.embed_batch(store):
                done += n
                advance(n)
        return done

    def embed_batch(self, store: Store, limit: int = BATCH) -> int:
        """Embed and store the next `limit` pending passages (at most BATCH); how many there were."""
        rows = store.pending_passages(min(limit, BATCH))
        if rows:
            vecs = self.embedder.embed_documents([embed_text(r["path"], r["breadcrumb"], r["text"]) for r in rows])
            store.set_embeddings([{"id": r["id"], "vec": v} for r, v in zip(rows, vecs)], self.identity)
            self.fresh.update((r["hash"], np.asarray(v, dtype=np.float32)) for r, v in zip(rows, vecs) if r["hash"])
        return len(rows)
