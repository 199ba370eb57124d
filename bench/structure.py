"""Structure + chunk build of a 13,284-note synthetic vault: full build, no-change refresh, one-note edit, and
the one re-derive a kb that cuts chunks or passages another way makes.

Usage: python bench/structure.py [--notes 13284] [--words 14000000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import (
    OUT,
    bench_config,
    bench_store,
    cpu_seconds,
    ensure_vault,
    peak_children_rss_mb,
    peak_rss_mb,
    server_rss_mb,
)

import kb.refresh
from kb.progress import Bars
from kb.refresh import refresh


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=13284)
    ap.add_argument("--words", type=int, default=14_000_000)
    args = ap.parse_args()
    vault = ensure_vault(OUT / f"vault-{args.notes}", args.notes, args.words)
    cfg = bench_config(vault)
    store = bench_store(cfg)
    store.clear()
    rows = []
    steps = (("full build", None), ("no-change refresh", None), ("one-note edit", _edit), ("re-derive", _new_cut))
    for label, prepare in steps:
        if prepare:
            prepare(vault)
        cpu0, t0 = cpu_seconds(cfg), time.perf_counter()
        s = refresh(store, cfg, Bars(quiet=True))
        secs = time.perf_counter() - t0
        cpu = {k: round(v - cpu0[k], 1) for k, v in cpu_seconds(cfg).items()}
        parsed = len(s.added) + len(s.changed)
        rows.append(
            {
                "step": label,
                "seconds": round(secs, 2),
                "notes_parsed": parsed,
                "notes_per_s": round(parsed / secs, 1) if parsed else None,
                "notes_in_graph_per_s": round(s.counts["notes"] / secs, 1),
                "chunks": s.counts["chunks"],
                "passages": s.counts["passages"],
                "passages_per_s": round(s.counts["passages"] / secs, 1) if parsed else None,
                "wrote_nothing": s.wrote_nothing,
                "rederived": s.rederived is not None,
                "indexes_rebuilt": s.indexes_rebuilt,
                "cpu_s": cpu,  # the parse workers' once they ended (every step that parses ends its pool)
            }
        )
    result = {
        "notes": args.notes,
        "words": args.words,
        "steps": rows,
        "kb_peak_rss_mb": round(peak_rss_mb()),
        "parse_worker_peak_rss_mb": round(peak_children_rss_mb()),
        "neo4j_rss_mb": round(server_rss_mb(cfg)),
        "reference_structure_s": 120,
    }
    print(json.dumps(result, indent=2))
    (OUT / "structure.json").write_text(json.dumps(result, indent=2))


def _new_cut(_vault: Path) -> None:
    """What an upgrade that changes the chunk or passage cut does: every note is parsed and written again."""
    kb.refresh.DERIVE_VERSION += 1


def _edit(vault: Path) -> None:
    note = sorted(vault.rglob("*.md"))[100]
    note.write_text(note.read_text(encoding="utf-8") + "\nAn edit for the benchmark.\n", encoding="utf-8")


if __name__ == "__main__":
    main()
