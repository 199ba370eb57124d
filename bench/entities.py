"""Rebuild of the entity layer for a synthetic graph of ~40,000 entities, 35,000 relationships, 53,000 claims.

Extractions are generated for the chunks already in the bench graph (run bench/search_latency.py or
bench/structure.py first); the rebuild (resolution, timelines, hubs, and the write) is timed.
Usage: python bench/entities.py [--embed]   (--embed: with the offline embedder, so claim-line and name
vectors are made and name-embedding candidates are compared; the second run reuses them)
"""

from __future__ import annotations

import json
import random
import sys
import time

from common import OUT, bench_config, bench_store, peak_rss_mb

from kb.embed.onnx import OnnxEmbedder
from kb.extract.graph import build_rows
from kb.extract.models import Extraction
from kb.extract.resolve import Overrides
from kb.extract.run import Outcome
from kb.extract.schema import ENTITY_TYPES, RELATIONSHIP_TYPES
from kb.extract.step import write_layer
from kb.store import KnowledgeStore

TYPES = list(ENTITY_TYPES)
RELS = [r for r in RELATIONSHIP_TYPES if r != "RELATED_TO"]


def synthetic(
    chunk_ids: list[str], entities: int = 40_000, rels: int = 35_000, claims: int = 53_000, seed: int = 3
) -> dict[str, Extraction]:
    """Power-law entity reuse across chunks, as in a real vault."""
    rng = random.Random(seed)
    names = [
        (f"Entity {i} {rng.choice(['Labs', 'Group', 'Project', 'Notes'])}", TYPES[i % len(TYPES)])
        for i in range(entities)
    ]
    per_chunk: dict[str, dict[str, list]] = {c: {"entities": [], "relationships": [], "claims": []} for c in chunk_ids}
    for i, (name, etype) in enumerate(names):  # every entity appears at least once
        per_chunk[chunk_ids[i % len(chunk_ids)]]["entities"].append({"name": name, "type": etype})
    for i in range(rels):
        cid = chunk_ids[rng.randrange(len(chunk_ids))]
        a, b = names[min(int(rng.paretovariate(1.2)) - 1, entities - 1)], names[rng.randrange(entities)]
        bucket = per_chunk[cid]
        for n, t in (a, b):
            bucket["entities"].append({"name": n, "type": t})
        bucket["relationships"].append(
            {"source": a[0], "target": b[0], "type": RELS[i % len(RELS)], "evidence": "e", "modality": "fact"}
        )
    for _ in range(claims):
        cid = chunk_ids[rng.randrange(len(chunk_ids))]
        n, t = names[rng.randrange(entities // 4)]
        per_chunk[cid]["entities"].append({"name": n, "type": t})
        per_chunk[cid]["claims"].append(
            {
                "entity": n,
                "attribute": rng.choice(["customer_count", "mrr", "status"]),
                "value": str(rng.randrange(50)),
                "quote": "q",
                "modality": rng.choice(["fact", "fact", "plan"]),
            }
        )
    out = {}
    for cid, data in per_chunk.items():
        seen: dict[str, dict] = {}
        for e in data["entities"]:
            seen.setdefault(e["name"], e)
        data["entities"] = list(seen.values())
        out[cid] = Extraction.model_validate(data)
    return out


def main() -> None:
    embedder = OnnxEmbedder() if "--embed" in sys.argv else None
    cfg = bench_config()
    store = bench_store(cfg)
    ks = KnowledgeStore(store)
    chunks = ks.chunks()
    ids = [c["id"] for c in chunks]
    results = synthetic(ids)
    t0 = time.perf_counter()
    # what `kb rebuild-entities` runs: rules, near-duplicate candidates, the audit from the cache, timelines,
    # hubs, then the old layer deleted and the new one written
    write_layer(store, cfg, Outcome(model="bench", results=results), chunks, force=True, embedder=embedder)
    t2 = time.perf_counter()
    rows = build_rows(results, {c["id"]: c for c in chunks}, Overrides())
    t1 = t0 + (time.perf_counter() - t2)  # resolution alone, timed again on its own
    counts = ks.counts()
    result = {
        "chunks": len(ids),
        **counts,
        "resolve_and_timelines_alone_s": round(t1 - t0, 2),
        "rebuild_s": round(t2 - t0, 2),
        "relationship_rows": sum(len(v) for v in rows.relationships.values()),
        "embedder": embedder.identity if embedder else None,
        "kb_peak_rss_mb": round(peak_rss_mb()),
        "reference_s": 20,
    }
    print(json.dumps(result, indent=2))
    (OUT / ("entities-embed.json" if embedder else "entities.json")).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
