"""How close the vector index's nearest passages come to the exact ones, fresh and after a rewrite of the graph.

Builds a synthetic vault with real offline embeddings, then for each question compares the exact top `--k`
(every passage scored on its stored vector) with the index's top `--k` asked for `--k` x factor candidates:
recall of the exact top and how many questions' top 20 differ, with the index query's p50/p95. Then every note is
cut again (as a kb whose cut changed would), the indexes are rebuilt over the rewritten graph, and it measures
again: an index whose answer depends on how the graph grew makes rankings depend on the database's history.
Usage: python bench/vector_recall.py [--notes 1500] [--words 1650000] [--factors 2,4,8] [--k 100]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from common import OUT, bench_config, bench_store, ensure_vault, ints, p50_p95, peak_rss_mb
from search_latency import questions

from kb import cypher
from kb.embed.onnx import OnnxEmbedder
from kb.embeddings import EmbedStep
from kb.progress import Bars
from kb.refresh import refresh
from kb.store import SearchIndex, Store


def exact_top(index: SearchIndex, vec: list[float], k: int) -> list[str]:
    return [r["passage"] for r in index._scan(vec, k, {}, {}, False)]


def index_top(store: Store, vec: list[float], k: int, factor: int) -> tuple[list[str], float]:
    t0 = time.perf_counter()
    rows = store.read(cypher.vector_passages(), vec=vec, limit=k, candidates=k * factor)
    return [r["passage"] for r in rows], (time.perf_counter() - t0) * 1e3


def measure(
    store: Store, vecs: list[list[float]], k: int, factors: list[int]
) -> tuple[dict[str, Any], list[list[str]]]:
    """Per factor: mean recall of the exact top k, questions missing any of it, top-20 lists that differ, the
    index query's ms; and the exact tops themselves."""
    index = SearchIndex(store)
    exact = [exact_top(index, v, k) for v in vecs]
    out: dict[str, Any] = {}
    for f in factors:
        recalls, missing, differ, times = [], 0, 0, []
        for v, ex in zip(vecs, exact):
            got, ms = index_top(store, v, k, f)
            times.append(ms)
            hit = len(set(got) & set(ex)) / len(ex)
            recalls.append(hit)
            missing += hit < 1
            differ += got[:20] != ex[:20]
        out[str(f)] = {
            "recall": round(sum(recalls) / len(recalls), 4),
            "questions_missing": missing,
            "top20_differ": differ,
            "ms": p50_p95(times),
        }
    return out, exact


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=1500)
    ap.add_argument("--words", type=int, default=1_650_000)
    ap.add_argument("--factors", default="1,2,4,8")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--questions", type=int, default=100)
    args = ap.parse_args()
    factors = ints(args.factors)
    vault = ensure_vault(OUT / f"vault-{args.notes}-{args.words}", args.notes, args.words)
    cfg = bench_config(vault)
    store = bench_store(cfg)
    store.clear()
    emb = OnnxEmbedder()
    t0 = time.perf_counter()
    refresh(store, cfg, Bars(), embed_step=EmbedStep(emb))
    build_s = time.perf_counter() - t0
    vecs = [emb.embed_query(q) for q, _ in questions(store, args.questions)]
    fresh, fresh_exact = measure(store, vecs, args.k, factors)
    store.set_meta("derive", {"cut": "an older cut"})  # every note cut again: passages deleted and rewritten
    refresh(store, cfg, Bars(), embed_step=EmbedStep(emb), rebuild_indexes=True)
    rewritten, rewritten_exact = measure(store, vecs, args.k, factors)
    same = sum(a == b for a, b in zip(fresh_exact, rewritten_exact))
    counts = store.counts()
    result = {
        "notes": counts["notes"],
        "passages": counts["passages"],
        "build_and_embed_s": round(build_s, 1),
        "questions": len(vecs),
        "k": args.k,
        "exact_top_same_after_rewrite": same,
        "fresh": fresh,
        "rewritten": rewritten,
        "kb_peak_rss_mb": round(peak_rss_mb()),
    }
    print(json.dumps(result, indent=2))
    (OUT / "vector_recall.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
