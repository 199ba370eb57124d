"""Graph-mode latency on the synthetic 31,000-chunk graph (run search_latency.py and entities.py first).

Reports p50/p95 of hybrid and graph search (without the question embedding, computed once per question),
and their ratio. Usage: python bench/graph_latency.py
"""

from __future__ import annotations

import json
import time

from common import OUT, bench_config, bench_store
from search_latency import TimedEmbedder, questions

from kb.eval.metrics import percentile
from kb.search.graph import graph_search
from kb.search.hybrid import Filters, hybrid_search
from kb.store import KnowledgeStore, SearchIndex


def main() -> None:
    store = bench_store(bench_config())
    emb = TimedEmbedder()
    index, ks = SearchIndex(store), KnowledgeStore(store)
    qs = [(q, Filters()) for q, _ in questions(store)][:30]
    for q, _ in qs[:3]:
        graph_search(index, ks, emb, q)
    hyb, gra, lines = [], [], []
    for q, f in qs:
        vec = emb.embed_query(q)
        t0 = time.perf_counter()
        hybrid_search(index, emb, q, filters=f, qvec=vec)
        t1 = time.perf_counter()
        res = graph_search(index, ks, emb, q)
        t2 = time.perf_counter()
        hyb.append((t1 - t0) * 1e3)
        gra.append((t2 - t1) * 1e3 - TimedEmbedder.last_ms)
        lines.append(len(res.lines))
    out = {
        "questions": len(qs),
        "hybrid_ms_p50": round(percentile(hyb, 50), 1),
        "hybrid_ms_p95": round(percentile(hyb, 95), 1),
        "graph_ms_p50": round(percentile(gra, 50), 1),
        "graph_ms_p95": round(percentile(gra, 95), 1),
        "ratio_p50": round(percentile(gra, 50) / percentile(hyb, 50), 2),
        "lines_p50": percentile([float(x) for x in lines], 50),
        **ks.counts(),
    }
    print(json.dumps(out, indent=2))
    (OUT / "graph_latency.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
