"""Tables, paired tests and charts for an eval run: a Markdown report a person can read."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kb.eval.harness import METRICS, Row
from kb.eval.metrics import ABSENT, CAUSES, RANK_BANDS, percentile
from kb.eval.stats import PairedResult, mcnemar, paired_compare

TABLE_METRICS = (
    "recall@10",
    "recall@20",
    "ndcg@10",
    "mrr",
    "fact_recall@8k",
    "note_recall@8k",
    "precision@8k",
    "current_first",
)


def mean(values: Sequence[float | None]) -> float:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def fmt(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.3f}"


def by(rows: Sequence[Row], mode: str, category: str | None = None) -> list[Row]:
    return [r for r in rows if r.mode == mode and (category is None or r.category == category)]


def category_table(rows: Sequence[Row], modes: Sequence[str]) -> list[str]:
    cats = sorted({r.category for r in rows})
    out = ["| category | n | mode | " + " | ".join(TABLE_METRICS) + " |", "|---|---|---|" + "---|" * len(TABLE_METRICS)]
    for cat in [*cats, None]:
        for mode in modes:
            sel = by(rows, mode, cat)
            cells = [fmt(mean([r.metrics[m] for r in sel])) for m in TABLE_METRICS]
            out.append(f"| {cat or '**all**'} | {len(sel)} | {mode} | " + " | ".join(cells) + " |")
    return out


def paired_table(rows: Sequence[Row], base: str, other: str) -> list[str]:
    """Per-question wins/losses/ties of `other` against `base`, sign-test p; McNemar on full fact coverage."""
    a_rows, b_rows = {r.qid: r for r in by(rows, other)}, {r.qid: r for r in by(rows, base)}
    qids = sorted(set(a_rows) & set(b_rows))
    out = [f"| metric | {other} wins | {base} wins | ties | sign-test p |", "|---|---|---|---|---|"]
    for m in METRICS:
        res = against_baseline(rows, other, m, base)
        out.append(f"| {m} | {res.wins} | {res.losses} | {res.ties} | {res.p_value:.4f} |")
    full = [(all(a_rows[q].facts), all(b_rows[q].facts)) for q in qids if a_rows[q].facts]
    b = sum(1 for x, y in full if x and not y)
    c = sum(1 for x, y in full if y and not x)
    out.append(
        f"\nMcNemar (all key facts within 8k tokens): {other} only {b}, {base} only {c}, exact p = {mcnemar(b, c):.4f}"
    )
    return out


def _num(v: float | None) -> float:
    return math.nan if v is None else float(v)


def current_table(rows: Sequence[Row], modes: Sequence[str]) -> list[str]:
    """Current-first by where the current note ranked: a miss with the current note among the first five is the
    order; one with it further down or absent is its retrieval. Empty when no question has a current note."""
    if not any(r.current_at for r in rows):
        return []
    bands = [band for _, band in RANK_BANDS] + [ABSENT]
    out = ["| current note at | " + " | ".join(f"{m}: n, current-first" for m in modes) + " |"]
    out.append("|---|" + "---|" * len(modes))
    for band in bands:
        cells = []
        for mode in modes:
            sel = [r for r in by(rows, mode) if r.current_at == band]
            cells.append(f"{len(sel)}, {fmt(mean([r.metrics['current_first'] for r in sel]))}")
        out.append(f"| {band} | " + " | ".join(cells) + " |")
    return out


def cause_table(rows: Sequence[Row], modes: Sequence[str]) -> list[str]:
    """Current-first misses of the modes that read claims, by cause (metrics.CAUSES); empty when none."""
    read = [m for m in modes if any(r.current_cause for r in by(rows, m))]
    if not read:
        return []
    out = ["| cause | " + " | ".join(read) + " |", "|---|" + "---|" * len(read)]
    for cause in CAUSES:
        out.append(
            f"| {cause} | " + " | ".join(str(sum(r.current_cause == cause for r in by(rows, m))) for m in read) + " |"
        )
    return out


SET_METRICS = ("recall@10", "recall@20", "mrr", "fact_recall@8k", "current_first")
BASELINE = "naive"
SIGNIFICANT = 0.05  # a cell below the baseline with a sign-test p under this is counted apart


def behind(rows: Sequence[Row], mode: str, baseline: str = BASELINE) -> list[str]:
    """The SET_METRICS on which `mode` scores below `baseline` on these rows (current-first left out: the
    baseline is a retrieval arm, with no sense of time)."""
    out = []
    for m in SET_METRICS[:-1]:
        a, b = mean([r.metrics[m] for r in by(rows, mode)]), mean([r.metrics[m] for r in by(rows, baseline)])
        if not (math.isnan(a) or math.isnan(b)) and a < b:
            out.append(m)
    return out


def against_baseline(rows: Sequence[Row], mode: str, metric: str, baseline: str = BASELINE) -> PairedResult:
    """`mode` against `baseline` on one metric, question by question: wins, losses, ties and the sign-test p."""
    mine, theirs = {r.qid: r for r in by(rows, mode)}, {r.qid: r for r in by(rows, baseline)}
    qids = sorted(set(mine) & set(theirs))
    return paired_compare(
        [_num(mine[q].metrics[metric]) for q in qids], [_num(theirs[q].metrics[metric]) for q in qids]
    )


def _behind_text(metric: str, res: PairedResult) -> str:
    """A metric a mode is below the baseline on, with its questions won / lost and the sign-test p: a cell lost by
    one question is not a cell lost by ten."""
    return f"{metric} ({res.wins}/{res.losses}, p {res.p_value:.2f})"


def sets_summary(sets: Mapping[str, Sequence[Row]], modes: Sequence[str], header: dict[str, Any]) -> str:
    """Several question sets run on one graph: each set's main figures per mode, which metrics a mode is below
    the naive baseline on (when it ran), the pooled figures, and how many set x metric cells are behind."""
    lines = ["# kb retrieval eval: several question sets", ""]
    lines += [f"- {k}: {v}" for k, v in header.items()]
    against = BASELINE in modes
    head = "| set | mode | n | " + " | ".join(SET_METRICS) + (f" | below {BASELINE} on |" if against else " |")
    rule = "|---|---|---|" + "---|" * (len(SET_METRICS) + against)
    lines += ["", "## Per set", "", head, rule]
    cells: dict[str, int] = {m: 0 for m in modes}
    significant: dict[str, int] = {m: 0 for m in modes}
    for name, rows in sets.items():
        for mode in modes:
            below = _below(rows, mode, against)
            lines.append(_set_row(name, rows, mode, below))
            cells[mode] += len(below or {})
            significant[mode] += sum(res.p_value < SIGNIFICANT for res in (below or {}).values())
    pooled = [r for rows in sets.values() for r in rows]
    lines += ["", "## Pooled", "", head, rule]
    lines += [_set_row("all", pooled, mode, _below(pooled, mode, against)) for mode in modes]
    causes = cause_table(pooled, modes)
    if causes:
        lines += ["", "## Current-first misses by how graph search read the claims (pooled)", "", *causes]
    if against:
        lines += ["", f"## Set x metric cells below {BASELINE}", ""]
        lines += [f"| mode | cells | of | of them with sign-test p < {SIGNIFICANT} |", "|---|---|---|---|"]
        total = len(sets) * (len(SET_METRICS) - 1)
        lines += [f"| {m} | {cells[m]} | {total} | {significant[m]} |" for m in modes if m != BASELINE]
    return "\n".join(lines) + "\n"


def _below(rows: Sequence[Row], mode: str, against: bool) -> dict[str, PairedResult] | None:
    """What `mode` is below the baseline on, each with its paired comparison; None for the baseline itself or when
    it did not run."""
    return {m: against_baseline(rows, mode, m) for m in behind(rows, mode)} if against and mode != BASELINE else None


def _set_row(name: str, rows: Sequence[Row], mode: str, below: dict[str, PairedResult] | None) -> str:
    """One table row; `below` fills the last column (None: empty, or absent when no mode is compared)."""
    sel = by(rows, mode)
    scored = sum(1 for r in sel if r.metrics["recall@10"] is not None and not math.isnan(_num(r.metrics["recall@10"])))
    values = [fmt(mean([r.metrics[m] for r in sel])) for m in SET_METRICS]
    against = BASELINE in {r.mode for r in rows}
    texts = [_behind_text(m, res) for m, res in (below or {}).items()]
    tail = f" | {', '.join(texts) or '–'}" if below is not None else (" | " if against else "")
    return f"| {name} | {mode} | {scored} | " + " | ".join(values) + tail + " |"


def latency_table(rows: Sequence[Row], modes: Sequence[str]) -> list[str]:
    out = ["| mode | p50 ms | p95 ms | search-only p50 ms | search-only p95 ms |", "|---|---|---|---|---|"]
    for mode in modes:
        lat = [r.latency_ms for r in by(rows, mode)]
        srch = [r.search_ms for r in by(rows, mode)]
        out.append(
            f"| {mode} | {percentile(lat, 50):.0f} | {percentile(lat, 95):.0f} | "
            f"{percentile(srch, 50):.0f} | {percentile(srch, 95):.0f} |"
        )
    return out


def unanswerable(rows: Sequence[Row]) -> list[str]:
    sel = [r for r in rows if r.category == "unanswerable"]
    out = ["| question | mode | top score | top notes |", "|---|---|---|---|"]
    out += [
        f"| {r.qid} | {r.mode} | {r.top_score if r.top_score is not None else '–'} | {', '.join(r.top[:3])} |"
        for r in sel
    ]
    return out if sel else []


def markdown(rows: Sequence[Row], modes: Sequence[str], header: dict[str, Any]) -> str:
    lines = ["# kb retrieval eval", ""]
    lines += [f"- {k}: {v}" for k, v in header.items()]
    lines += ["", "## By category", "", *category_table(rows, modes), ""]
    for other in modes[1:]:
        lines += [f"## {other} vs {modes[0]} (paired, per question)", "", *paired_table(rows, modes[0], other), ""]
    current = current_table(rows, modes)
    if current:
        lines += ["## Current-first by where the current note ranked", "", *current, ""]
    causes = cause_table(rows, modes)
    if causes:
        lines += ["## Current-first misses by how graph search read the claims", "", *causes, ""]
    lines += [
        "## Latency (whole call, including the question embedding; and search only)",
        "",
        *latency_table(rows, modes),
        "",
    ]
    if unanswerable(rows):
        lines += ["## Unanswerable questions (for a future abstention threshold)", "", *unanswerable(rows), ""]
    lines += [
        "## Key facts per question",
        "",
        "| question | " + " | ".join(modes) + " |",
        "|---|" + "---|" * len(modes),
    ]
    for qid in sorted({r.qid for r in rows}):
        cells = []
        for mode in modes:
            r = next((x for x in rows if x.qid == qid and x.mode == mode), None)
            cells.append("–" if r is None or not r.facts else f"{sum(r.facts)}/{len(r.facts)}")
        lines.append(f"| {qid} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def charts(rows: Sequence[Row], modes: Sequence[str], out: Path) -> list[Path]:
    """Per-category bars for each metric by mode, and the latency distribution, as PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cats = sorted({r.category for r in rows})
    fig, axes = plt.subplots(2, 2, figsize=(14, 9))
    for ax, metric in zip(axes.flat, ("recall@20", "ndcg@10", "fact_recall@8k", "precision@8k")):
        width = 0.8 / max(len(modes), 1)
        for i, mode in enumerate(modes):
            vals = [mean([r.metrics[metric] for r in by(rows, mode, c)]) for c in cats]
            ax.bar(
                [x + i * width for x in range(len(cats))], [0 if math.isnan(v) else v for v in vals], width, label=mode
            )
        ax.set_title(metric)
        ax.set_xticks([x + width * (len(modes) - 1) / 2 for x in range(len(cats))], cats, rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
    axes.flat[0].legend()
    fig.tight_layout()
    bars = out / "categories.png"
    fig.savefig(bars, dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.boxplot([[r.latency_ms for r in by(rows, m)] for m in modes], tick_labels=list(modes))
    ax.set_ylabel("latency per question (ms)")
    ax.set_title("Latency by mode")
    fig.tight_layout()
    lat = out / "latency.png"
    fig.savefig(lat, dpi=110)
    plt.close(fig)
    return [bars, lat]
