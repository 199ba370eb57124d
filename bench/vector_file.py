#!/usr/bin/env python3
"""What the vector file costs a refresh that changed one note, on the store search_latency.py built (run that first):
the refresh's seconds with the file kept in step and without it (no kb home for it), and the sync's parts.

    python bench/vector_file.py [--notes 13284] [--words 14600000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from common import OUT, bench_config, bench_store

from kb import vectorfile
from kb.embed.onnx import OnnxEmbedder
from kb.embeddings import EmbedStep
from kb.progress import Bars
from kb.refresh import refresh
from kb.store import Store


def edited_refresh(store: Store, cfg_vault: Path, note: Path, n: int) -> tuple[float, dict[str, object] | None]:
    """Append a line to `note`, refresh (embedding its new passages), and return the seconds and the sync's summary."""
    note.write_text(note.read_text(encoding="utf-8") + f"\nA line added by bench/vector_file.py, run {n}.\n")
    t0 = time.perf_counter()
    summary = refresh(store, bench_config(cfg_vault), Bars(quiet=True), EmbedStep(OnnxEmbedder()))
    return time.perf_counter() - t0, summary.vector_file


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=13284)
    ap.add_argument("--words", type=int, default=14_600_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    vault = OUT / f"vault-{args.notes}-{args.words}"
    store = bench_store(bench_config(vault))
    note = sorted(vault.rglob("*.md"))[len(list(vault.rglob("*.md"))) // 2]
    original = note.read_text(encoding="utf-8")
    held = store.vector_dir
    out: dict[str, object] = {"note": str(note.relative_to(vault))}
    try:
        with_file, without_file, synced = [], [], []
        for n in range(args.runs):
            seconds, summary = edited_refresh(store, vault, note, n)
            with_file.append(seconds)
            synced.append(summary)
            store.vector_dir = None  # no kb home for a file: the refresh clears the stamp and writes none
            seconds, _ = edited_refresh(store, vault, note, n + 100)
            without_file.append(seconds)
            store.vector_dir = held
        out["refresh_s_with_file"] = [round(s, 2) for s in with_file]
        out["refresh_s_without_file"] = [round(s, 2) for s in without_file]
        out["median_extra_s"] = round(statistics.median(with_file) - statistics.median(without_file), 2)
        out["synced"] = synced
    finally:
        note.write_text(original, encoding="utf-8")
        store.vector_dir = held
        refresh(store, bench_config(vault), Bars(quiet=True), EmbedStep(OnnxEmbedder()))
        out["file_in_use_after"] = store.get_meta(vectorfile.META_KEY).get("stamp") is not None
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
