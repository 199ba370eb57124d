"""Graph-mode latency against hybrid, and where graph search's extra time goes.

Reports p50/p95 of hybrid and graph search (whole calls: each embeds the question once, beside its full-text
queries, so the embedding counts the same way in both), their ratio, and the p50 of graph search's parts: the
question's reading (parse), the graph_context statement (one round trip: entities, links, claims, the ranked
chunks' claims) and the rest (line packing, re-ranking, result building). Each question runs `--repeat` times,
hybrid and graph side by side.
Usage: python bench/graph_latency.py            (the synthetic 31,000-chunk graph: run search_latency.py and
                                                 entities.py first)
       python bench/graph_latency.py --questions examples/shared-time-questions.yaml
                                                (the questions of an eval set, on the graph of the kb config:
                                                 KB_HOME, e.g. after `kb eval run ... --refresh`)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

import yaml
from common import OUT, bench_config, bench_store
from search_latency import TimedEmbedder, questions

from kb.config import load_config
from kb.embeddings import require_built_by
from kb.eval.metrics import percentile
from kb.search.graph import graph_search
from kb.search.hybrid import Filters, hybrid_search
from kb.search.question import parse
from kb.store import KnowledgeStore, SearchIndex, Store, open_store


class TimedKnowledgeStore(KnowledgeStore):
    """Times the graph_context statement."""

    last_ms = 0.0

    def graph_context(self, *args: Any, **kwargs: Any) -> dict[str, list[dict[str, Any]]]:
        t0 = time.perf_counter()
        out = super().graph_context(*args, **kwargs)
        TimedKnowledgeStore.last_ms = (time.perf_counter() - t0) * 1e3
        return out


def eval_questions(path: Path) -> list[str]:
    """The questions of an eval set (the schema of ../shared/eval/dev.yaml)."""
    return [q["question"] for q in yaml.safe_load(path.read_text(encoding="utf-8"))["questions"]]


def measure(store: Store, qs: list[str], repeat: int, today: dt.date | None) -> dict[str, Any]:
    """p50/p95 of hybrid and graph search per question run, and the p50 of graph search's parts."""
    emb = TimedEmbedder()
    index, ks = SearchIndex(store), TimedKnowledgeStore(store)
    for q in qs[:3]:  # warm the server's plans and the embedder
        graph_search(index, ks, emb, parse(q, today))
    parts: dict[str, list[float]] = {k: [] for k in ("hybrid", "graph", "parse", "graph_context", "rest")}
    lines = []
    for _ in range(repeat):
        for q in qs:
            # the embedding overlaps the full-text queries in both calls: subtracting it would credit graph
            # search with time it no longer waits for
            t0 = time.perf_counter()
            hybrid_search(index, emb, q, filters=Filters())
            t1 = time.perf_counter()
            question = parse(q, today)
            t2 = time.perf_counter()
            res = graph_search(index, ks, emb, question)
            t3 = time.perf_counter()
            graph = (t3 - t1) * 1e3
            hybrid = float(res.timing["hybrid_ms"])  # graph search's own hybrid step
            parts["hybrid"].append((t1 - t0) * 1e3)
            parts["graph"].append(graph)
            parts["parse"].append((t2 - t1) * 1e3)
            parts["graph_context"].append(TimedKnowledgeStore.last_ms)
            parts["rest"].append(graph - (t2 - t1) * 1e3 - hybrid - TimedKnowledgeStore.last_ms)
            lines.append(float(len(res.lines)))
    p50 = {k: percentile(v, 50) for k, v in parts.items()}
    return {
        "questions": len(qs),
        "runs": len(parts["graph"]),
        "hybrid_ms_p50": round(p50["hybrid"], 1),
        "hybrid_ms_p95": round(percentile(parts["hybrid"], 95), 1),
        "graph_ms_p50": round(p50["graph"], 1),
        "graph_ms_p95": round(percentile(parts["graph"], 95), 1),
        "ratio_p50": round(p50["graph"] / p50["hybrid"], 2),
        "graph_parts_ms_p50": {k: round(p50[k], 1) for k in ("parse", "graph_context", "rest")},
        "lines_p50": percentile(lines, 50),
        **ks.counts(),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=Path, help="an eval question set, run on the graph of the kb config")
    ap.add_argument("--today", help="read relative dates against this day, YYYY-MM-DD (as kb eval --today)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    today = dt.date.fromisoformat(args.today) if args.today else None
    if args.questions:
        with open_store(load_config()) as store:
            require_built_by(store, TimedEmbedder(), "refresh the graph with --embedder onnx:minilm")
            out = {"set": str(args.questions), **measure(store, eval_questions(args.questions), args.repeat, today)}
        name = f"graph_latency-{args.questions.stem}.json"
    else:
        store = bench_store(bench_config())
        out = measure(store, [q for q, _ in questions(store)][:30], args.repeat, today)
        name = "graph_latency.json"
    print(json.dumps(out, indent=2))
    OUT.mkdir(exist_ok=True)
    (OUT / name).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
