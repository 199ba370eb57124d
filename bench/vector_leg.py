#!/usr/bin/env python3
"""Where the vector leg's time goes on the store search_latency.py built (run that first): the vector index's query
alone, with the passages' properties, and re-scored on the stored vectors as kb asks it, per candidate count; then
the exact alternative, every stored vector in one float32 matrix in this process (how long reading them out of the
store takes, and one matrix-vector product with the top candidates picked).

    python bench/vector_leg.py [--notes 13284] [--words 14600000] [--candidates 100,200,400] [--questions 30]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
from common import OUT, bench_config, bench_store, ints, p50_p95

from kb import cypher


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=13284)
    ap.add_argument("--words", type=int, default=14_600_000)
    ap.add_argument("--candidates", default="100,200,400")
    ap.add_argument("--questions", type=int, default=30)
    args = ap.parse_args()
    store = bench_store(bench_config(OUT / f"vault-{args.notes}-{args.words}"))
    t0 = time.perf_counter()
    matrix = np.array([r["v"] for r in store.read(cypher.embedded_vectors())], dtype=np.float32)
    read_s = time.perf_counter() - t0
    if not len(matrix):
        raise SystemExit("no embedded passages: run bench/search_latency.py first")
    raw = np.random.default_rng(5).standard_normal((args.questions, matrix.shape[1]))
    questions = [(v / np.linalg.norm(v)).tolist() for v in raw]
    shapes = {
        "index_ids": cypher.vector_index_raw(props=False),
        "index_props": cypher.vector_index_raw(props=True),
        "rescored": cypher.vector_passages(),
    }
    out: dict[str, object] = {"passages": len(matrix)}
    for n in ints(args.candidates):
        for label, q in shapes.items():
            out[f"{label}_{n}_ms"] = _timed(
                lambda v, q=q, n=n: store.read(q, vec=v, candidates=n, limit=100), questions
            )
    out["read_all_vectors_s"] = round(read_s, 1)
    out["matrix_mb"] = round(matrix.nbytes / 2**20)
    out["exact_scan_top400_ms"] = _timed(lambda v: _top(matrix, v, 400), questions)
    print(json.dumps(out, indent=2))


def _top(matrix: np.ndarray, vec: list[float], n: int) -> np.ndarray:
    """The `n` rows nearest the unit vector `vec`, best first (cosine: the stored vectors are unit length)."""
    scores = matrix @ np.asarray(vec, dtype=np.float32)
    top = np.argpartition(-scores, n)[:n]
    return top[np.argsort(-scores[top], kind="stable")]


def _timed(run: Callable[[list[float]], object], questions: list[list[float]]) -> dict[str, float]:
    """p50/p95 of `run` over the question vectors, in ms."""
    times = []
    for v in questions:
        t0 = time.perf_counter()
        run(v)
        times.append((time.perf_counter() - t0) * 1e3)
    return p50_p95(times)


if __name__ == "__main__":
    main()
