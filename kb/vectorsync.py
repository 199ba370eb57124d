"""Keeping the vector file (kb.vectorfile) in step with the graph: a refresh stops the graph vouching for it before
it writes, and writes a new generation (or vouches for the old one again) when it is done."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kb import vectorfile
from kb.errors import StoreError
from kb.progress import Bars
from kb.store import Store

FETCH_BATCH = 2000  # vectors read back from Neo4j per query: about 1,900 a second here at 384 dimensions


def hold(store: Store) -> str | None:
    """Before a refresh writes: the graph no longer vouches for the vector file (a killed run leaves it so, and
    search asks Neo4j); returns the stamp it vouched for. A store without a vector file clears it too: another
    kb home's file must not outlive this write."""
    stamp = store.get_meta(vectorfile.META_KEY).get("stamp")
    if stamp is not None:
        store.set_meta(vectorfile.META_KEY, {"stamp": None})
    return str(stamp) if stamp is not None else None


@dataclass(frozen=True)
class Synced:
    """What a sync did: the stamp the graph vouches for now (None: search asks Neo4j), the passages the file holds,
    whether a new generation was written, and how many vectors were read back from Neo4j for it."""

    stamp: str | None
    passages: int = 0
    written: bool = False
    read_back: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sync(
    store: Store,
    bars: Bars,
    fresh: Mapping[str, np.ndarray] | None = None,
    held: str | None = None,
    changed: bool = True,
) -> Synced:
    """After a refresh: vouch again for the file `held` when nothing changed, else write the generation of what the
    graph holds now (vectors from `fresh`, keyed by passage hash, then the last generation, then Neo4j) and vouch
    for it."""
    root = store.vector_dir
    if root is None:
        return Synced(None)
    if not changed and held and (kept := vectorfile.load(root, held)) is not None:
        vectorfile.ensure_codes(root, held)
        store.set_meta(vectorfile.META_KEY, {"stamp": held})
        return Synced(held, len(kept))
    meta = store.get_meta(vectorfile.META_KEY)
    identity = store.get_meta("embedder").get("identity")
    listing = store.public_vector_listing()
    if not identity or not listing:
        return Synced(None)
    stamp = vectorfile.stamp_of(str(identity), listing)
    written, read_back = False, 0
    if vectorfile.load(root, stamp) is None:
        last = vectorfile.load(root, str(meta["written"])) if meta.get("written") else None
        previous = last if last is not None and last.embedder == identity else None
        vectors, read_back = _assemble(store, listing, fresh or {}, previous, bars)
        vectorfile.write(root, stamp, str(identity), listing, vectors)
        written = True
    else:
        vectorfile.ensure_codes(root, stamp)
    store.set_meta(vectorfile.META_KEY, {"stamp": stamp, "written": stamp})
    return Synced(stamp, len(listing), written, read_back)


def _assemble(
    store: Store,
    listing: Sequence[vectorfile.Listed],
    fresh: Mapping[str, np.ndarray],
    previous: vectorfile.Matrix | None,
    bars: Bars,
) -> tuple[np.ndarray, int]:
    """One row per listed passage: its vector by hash from this run's embeddings or the last generation, the rest
    read back from Neo4j (how many, the second value)."""
    n = len(listing)
    hashes = [row.hash for row in listing]
    out: np.ndarray | None = None
    filled = np.zeros(n, dtype=bool)
    if previous is not None and len(previous):
        out = np.empty((n, previous.vectors.shape[1]), dtype=np.float32)
        known = dict(zip(previous.hashes.tolist(), range(len(previous)), strict=True))
        src = np.fromiter((known.get(h.encode(), -1) for h in hashes), dtype=np.int64, count=n)
        filled = src >= 0
        out[filled] = previous.vectors[src[filled]]  # one gather of the rows kept
    for i, digest in enumerate(hashes) if fresh else ():
        vec = fresh.get(digest)
        if vec is not None:
            out = _row(out, n, i, vec)
            filled[i] = True
    missing = np.flatnonzero(~filled).tolist()
    with bars.step("vector file", len(missing)) as advance:
        for start in range(0, len(missing), FETCH_BATCH):
            part = missing[start : start + FETCH_BATCH]
            got = store.public_vectors([listing[i].passage for i in part])
            for i in part:
                if listing[i].passage not in got:
                    raise StoreError("the graph changed while kb wrote the vector file: run `kb refresh` again")
                out = _row(out, n, i, np.asarray(got[listing[i].passage], dtype=np.float32))
            advance(len(part))
    assert out is not None  # the listing is not empty
    return out, len(missing)


def _row(out: np.ndarray | None, n: int, i: int, vec: np.ndarray) -> np.ndarray:
    """Row `i` of the (n, dims) matrix set to `vec`; the matrix is made at the first row's length."""
    if out is None:
        out = np.empty((n, len(vec)), dtype=np.float32)
    out[i] = vec
    return out
