#!/usr/bin/env python3
"""Fusion settings measured on question sets: each vault built once on a fresh database, then every preset
and variant of search/fusion.py scored next to the naive windowed baseline, in the same run.

    python bench/fusion_sweep.py QUESTIONS:VAULT [QUESTIONS:VAULT ...] [--variants all|presets]

Uses the configured kb home (KB_HOME) and embedder; the graph it holds is cleared for every set.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb.config import load_config
from kb.embed import make_embedder
from kb.embeddings import EmbedStep
from kb.eval.harness import Mode, hybrid_mode, naive_mode, run_modes
from kb.eval.naive import NaiveIndex
from kb.eval.questions import load_questions
from kb.extract.pipeline import refresh_all
from kb.progress import Bars
from kb.search.fusion import FUSION_PRESETS, FusionConfig
from kb.store import SearchIndex, open_store

METRICS = ("recall@10", "recall@20", "mrr", "fact_recall@8k")


def variants(which: str) -> dict[str, FusionConfig]:
    """The presets, and with `all` a grid around the default."""
    out = {f"kb:{k}": v for k, v in FUSION_PRESETS.items()}
    if which == "all":
        base = FUSION_PRESETS["default"]
        for rrf in (10, 30, 100):
            out[f"rrf{rrf}"] = replace(base, rrf_k=rrf)
        for rrf in (10, 60):
            out[f"rrf{rrf}-passage-fusion"] = replace(base, rrf_k=rrf, passage_fusion=True)
        for w in (0.7, 1.5):
            out[f"keyword-weight{w}"] = replace(base, keyword_weight=w)
        for w in (0.5, 0.75):
            out[f"text-weight{w}"] = replace(base, text_weight=w)
        out["depth200"] = replace(base, keyword_depth=200, vector_depth=200)
    return out


def mean(values: list[float | None]) -> float:
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sets", nargs="+", help="QUESTIONS:VAULT")
    ap.add_argument("--variants", default="presets", choices=("presets", "all"))
    args = ap.parse_args()
    for pair in args.sets:
        qpath, vault = pair.split(":", 1)
        cfg = load_config(flags={"vault": vault})
        emb = make_embedder(cfg)
        with open_store(cfg) as st:
            st.clear()
            st.drop_vector_index()
            refresh_all(st, cfg, Bars(quiet=True), EmbedStep(emb), None).check()
            index = SearchIndex(st)
            modes: dict[str, Mode] = {"naive": naive_mode(NaiveIndex(cfg, emb))}
            modes.update({k: hybrid_mode(index, emb, v) for k, v in variants(args.variants).items()})
            qs = [q for q in load_questions(Path(qpath)) if q.category != "unanswerable"]
            rows = run_modes(qs, modes)
        print(f"\n{qpath} ({len(qs)} scored questions)\n")
        print("| arm | " + " | ".join(METRICS) + " |\n|---|" + "---|" * len(METRICS))
        for name in modes:
            vals = [mean([r.metrics[m] for r in rows if r.mode == name]) for m in METRICS]
            print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")


if __name__ == "__main__":
    main()
