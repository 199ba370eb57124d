"""Hybrid search latency on a synthetic vault (~31,000 chunks at the default size) with the offline embedder.

Reports the structure build (notes, chunks and passages written per second), offline embedding throughput
(passages/s), then p50/p95 over 50 varied questions of the question embedding and of the search itself
(keyword + vector over passages, roll-up, fusion, chunk details), and peak RSS. The search is timed on a restarted
server: first right after kb's warm-up (what `kb db start` runs, kb.search.warm), then at steady state, after 200
other searches; and the vector file's scan alone, with its int8 shortlist and without (kept share of the exact top).
Usage: python bench/search_latency.py [--fresh] [--notes 13284] [--words 14600000] [--depths 100,200]
[--overfetch 4,8] [--restarts 3]
(--depths: the search is also timed with each candidate depth per leg, FusionConfig's keyword/vector/text_depth;
--overfetch: and, without the vector file, with Neo4j's vector index asked for that many times the candidates it
keeps, kb.store's VECTOR_OVERFETCH; bench/vector_recall.py measures what each factor recovers). The search is timed
with the vector file (kb.vectorfile) and without it, on Neo4j's vector index as before; --restarts: how many times
the server is restarted and timed right after kb's warm-up (the median of their p50s is the figure).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from common import OUT, bench_config, bench_store, ensure_vault, ints, p50_p95, peak_rss_mb, server_rss_mb

import kb.store
from kb import cypher, server, vectorfile, vectorsync
from kb.embed.onnx import OnnxEmbedder
from kb.embeddings import EmbedStep
from kb.eval.metrics import percentile
from kb.progress import Bars
from kb.refresh import refresh
from kb.search.fusion import FusionConfig
from kb.search.hybrid import Filters, hybrid_search
from kb.search.question import parse
from kb.search.warm import phrases, stand_in, warm_searches
from kb.store import SearchIndex, Store


class TimedEmbedder(OnnxEmbedder):
    """Separates the question-embedding time from the search."""

    last_ms = 0.0

    def embed_query(self, text: str) -> list[float]:
        t0 = time.perf_counter()
        vec = super().embed_query(text)
        TimedEmbedder.last_ms = (time.perf_counter() - t0) * 1e3
        return vec


def questions(store: Store, n: int = 50) -> list[tuple[str, Filters]]:
    """Varied questions from the vault's own text: phrases, word mixes, with and without filters."""
    rng = random.Random(11)
    rows = store.read(cypher.chunk_sample(), skip=7, limit=400)
    out: list[tuple[str, Filters]] = []
    for i in range(n):
        row = rows[(i * 37) % len(rows)]
        words = [w for w in row["text"].split() if w.isalpha()]
        start = rng.randrange(max(1, len(words) - 8))
        q = " ".join(words[start : start + rng.randint(3, 8)]) or "quarterly plan"
        q = f"what did we decide about {q}?" if i % 3 == 0 else q
        flt = Filters()
        if i % 10 == 1:
            flt = Filters(folder=row["folder"].split("/")[0])
        elif i % 10 == 2 and row["tags"]:
            flt = Filters(tag=row["tags"][0])
        elif i % 10 == 3:
            flt = Filters(since="2022-01-01")
        out.append((q, flt))
    return out


def timed(
    index: SearchIndex, emb: OnnxEmbedder, qs: list[tuple[str, Filters]], fusion: FusionConfig | None = None
) -> dict[str, float]:
    """p50/p95 of the search over every question, with this fusion (the default without one)."""
    return p50_p95([hybrid_search(index, emb, q, filters=f, fusion=fusion).timing["search_ms"] for q, f in qs])


def other_questions(store: Store, n: int = 200) -> list[str]:
    """Phrases of chunks the timed questions do not come from: the steady state's warm traffic."""
    return phrases([str(r["text"] or "") for r in store.read(cypher.chunk_sample(), skip=1000, limit=n)])


def scan_alone(matrix: vectorfile.Matrix, emb: OnnxEmbedder, qs: list[tuple[str, Filters]]) -> dict[str, object]:
    """The vector file's scan of the top 100 alone, with the int8 shortlist and exact over every row: p50 ms of
    each, and the share of the exact top 100 the shortlist keeps (mean and worst over the questions)."""
    exact = dataclasses.replace(matrix, codes=None, scales=None)
    chosen = matrix.use_codes
    matrix = dataclasses.replace(matrix, use_codes=True)  # the shortlist timed whatever the generation chose
    vecs = [(emb.embed_query(q), f.params()) for q, f in qs]
    kept = []
    for vec, p in vecs:
        want = {r["passage"] for r in exact.nearest(vec, 100, p)}
        got = {r["passage"] for r in matrix.nearest(vec, 100, p)}
        kept.append(len(want & got) / len(want) if want else 1.0)
    times = {}
    for name, m in (("shortlist", matrix), ("exact", exact)):
        ms = []
        for vec, p in vecs:
            t0 = time.perf_counter()
            m.nearest(vec, 100, p)
            ms.append((time.perf_counter() - t0) * 1e3)
        times[f"{name}_ms_p50"] = round(percentile(ms, 50), 1)
    kept_mean = round(sum(kept) / len(kept), 4)
    return {
        "codes": matrix.codes is not None,
        "generation_chose_shortlist": chosen,
        **times,
        "kept_mean": kept_mean,
        "kept_min": min(kept),
    }


def embed_some(store: Store, emb: OnnxEmbedder, limit: int, fresh: dict[str, np.ndarray]) -> int:
    """Embed up to `limit` pending passages as a refresh does (the throughput figure); their vectors go to
    `fresh`, by passage hash, as a refresh hands them to the vector file."""
    step = EmbedStep(emb)
    step.check_index(store)
    done = 0
    while done < limit and (n := step.embed_batch(store, limit - done)):
        done += n
    fresh.update(step.fresh)
    return done


def fill_seeded(store: Store, emb: OnnxEmbedder, fresh: dict[str, np.ndarray]) -> int:
    """Seeded random unit vectors for every other pending passage: embedding ~180k passages on a 2-core machine
    takes hours, and the search's latency depends on the index's size, not on what the vectors mean (random
    vectors are, if anything, harder for the HNSW graph)."""
    done = 0
    while rows := store.pending_passages(2000):
        vecs = []
        for r in rows:
            rng = np.random.default_rng(int(hashlib.sha256(r["id"].encode()).hexdigest()[:12], 16))
            v = rng.standard_normal(emb.dimensions)
            vecs.append((v / np.linalg.norm(v)).astype(float).tolist())
            fresh[r["hash"]] = np.asarray(vecs[-1], dtype=np.float32)
        store.set_embeddings([{"id": r["id"], "vec": v} for r, v in zip(rows, vecs)], emb.identity)
        done += len(rows)
    return done


def vector_file_costs(store: Store, fresh: dict[str, np.ndarray], changed: bool) -> dict[str, float]:
    """What the vector file costs a refresh: the sync as a refresh runs it (from this run's vectors, else the last
    generation, else read back from Neo4j), the listing and stamp alone (a sync that finds the same content), and
    writing one generation of every vector."""
    t0 = time.perf_counter()
    vectorsync.sync(store, Bars(), fresh, changed=changed)
    sync_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectorsync.sync(store, Bars(), changed=True)
    listing_s = time.perf_counter() - t0
    matrix = SearchIndex(store).matrix()
    assert matrix is not None, "the vector file was not written"
    listing = store.public_vector_listing()
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        t0 = time.perf_counter()
        vectorfile.write(Path(tmp), "bench", matrix.embedder, listing, np.asarray(matrix.vectors))
        write_s = time.perf_counter() - t0
    return {"sync_s": round(sync_s, 1), "listing_s": round(listing_s, 1), "write_s": round(write_s, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=13284)
    ap.add_argument("--words", type=int, default=14_600_000)
    ap.add_argument(
        "--embed-sample",
        type=int,
        default=3000,
        help="passages embedded for real (throughput); the rest get seeded random vectors",
    )
    ap.add_argument("--fresh", action="store_true", help="clear the store first: time a full build from nothing")
    ap.add_argument("--depths", default="", help="comma-separated candidate depths per leg to time as well")
    ap.add_argument("--overfetch", default="", help="comma-separated vector-index overfetch factors to time")
    ap.add_argument("--restarts", type=int, default=3, help="server restarts, each timed right after the warm-up")
    args = ap.parse_args()
    vault = ensure_vault(OUT / f"vault-{args.notes}-{args.words}", args.notes, args.words)
    cfg = bench_config(vault)
    store = bench_store(cfg)
    if args.fresh or store.get_meta("vault").get("path") != str(vault.resolve()):
        store.clear()
    t0 = time.perf_counter()
    built = refresh(store, cfg, Bars())
    build_s = time.perf_counter() - t0
    emb = TimedEmbedder()
    t0 = time.perf_counter()
    fresh: dict[str, np.ndarray] = {}
    embedded = embed_some(store, emb, args.embed_sample, fresh)
    embed_s = time.perf_counter() - t0
    seeded = fill_seeded(store, emb, fresh)
    file_costs = vector_file_costs(store, fresh, bool(embedded or seeded or built.added or built.changed))
    del fresh
    counts = store.counts()
    qs = questions(store)
    others = other_questions(store)
    # right after kb's warm-up, as after `kb db start`, on a restarted server each time (a figure that does not
    # depend on what the server served before; this machine's timings move by half between runs)
    starts = []
    for _ in range(max(1, args.restarts)):
        store.close()
        server.stop(cfg)
        store = bench_store(cfg)
        warmed = warm_searches(store)
        index = SearchIndex(store)
        starts.append(timed(index, emb, qs))
    # the vector leg without the vector file, as before it (Neo4j's HNSW index, asked for 4x the candidates)
    held_dir, store.vector_dir = store.vector_dir, None
    without_file = timed(index, emb, qs)
    store.vector_dir = held_dir
    fixed = stand_in(store)
    for q in others:  # a server that has served a while
        hybrid_search(index, fixed, q)
    search_ms, embed_ms, filtered_ms = [], [], []
    parts: dict[str, list[float]] = {}
    for q, f in qs:
        t0 = time.perf_counter()
        parse(q)  # hybrid mode reads the question for its time prior (search/modes.py): timed as a part
        parts.setdefault("question_ms", []).append((time.perf_counter() - t0) * 1e3)
        res = hybrid_search(index, emb, q, filters=f)
        search_ms.append(res.timing["search_ms"])
        for part in ("keyword_ms", "vector_ms", "legs_ms", "fuse_ms"):
            parts.setdefault(part, []).append(res.timing[part])
        embed_ms.append(TimedEmbedder.last_ms)
        if f.active():
            filtered_ms.append(res.timing["search_ms"])
    matrix = index.matrix()
    scan = scan_alone(matrix, emb, qs) if matrix is not None else None
    by_depth = {
        str(d): timed(index, emb, qs, FusionConfig(keyword_depth=d, vector_depth=d, text_depth=d))
        for d in ints(args.depths)
    }
    by_overfetch = {}
    kept = kb.store.VECTOR_OVERFETCH
    try:
        store.vector_dir = None  # the overfetch matters only to Neo4j's index
        for factor in ints(args.overfetch):
            kb.store.VECTOR_OVERFETCH = factor  # read by the store at each query
            by_overfetch[str(factor)] = timed(index, emb, qs)
    finally:
        kb.store.VECTOR_OVERFETCH = kept
        store.vector_dir = held_dir
    result = {
        "notes": counts["notes"],
        "chunks": counts["chunks"],
        "passages": counts["passages"],
        "build_s": round(build_s, 1),
        "built_notes": len(built.added) + len(built.changed),
        "passages_written_per_s": round(counts["passages"] / build_s, 1) if built.added else None,
        "embedded_now": embedded,
        "seeded_random_vectors": seeded,
        "embed_s": round(embed_s, 1),
        "embed_passages_per_s": round(embedded / embed_s, 1) if embedded else None,
        "questions": len(qs),
        "filtered_questions": len(filtered_ms),
        "warm_up": None if warmed is None else {"searches": warmed.searches, "seconds": round(warmed.seconds, 1)},
        "after_warm_up_ms": {
            "runs": starts,
            "median_p50": round(percentile([r["p50"] for r in starts], 50), 1),
            "median_p95": round(percentile([r["p95"] for r in starts], 50), 1),
        },
        "steady_after": len(others),
        "search_ms_p50": round(percentile(search_ms, 50), 1),
        "search_ms_p95": round(percentile(search_ms, 95), 1),
        "filtered_search_ms_p50": round(percentile(filtered_ms, 50), 1),
        # where the search's time goes: the full-text legs (in a thread), the vector leg, both side by side, and
        # the fusion with the roll-up and the chunks' details
        "parts_ms_p50": {k: round(percentile(v, 50), 1) for k, v in parts.items()},
        "vector_file_used": matrix is not None,
        "vector_scan": scan,
        "vector_file": file_costs,
        "search_ms_without_vector_file": without_file,
        "search_ms_by_depth": by_depth,
        "search_ms_by_overfetch": by_overfetch,
        "question_embed_ms_p50": round(percentile(embed_ms, 50), 1),
        "question_embed_ms_p95": round(percentile(embed_ms, 95), 1),
        "kb_peak_rss_mb": round(peak_rss_mb()),
        "neo4j_rss_mb": round(server_rss_mb(cfg)),
        "reference_s": {"p50": 0.8, "p95": 0.9},
    }
    print(json.dumps(result, indent=2))
    (OUT / "search.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
