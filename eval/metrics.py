"""Pure retrieval and context metrics over ranked note paths and assembled context blocks.

Conventions: `gold` maps a vault-relative note path to its grade (2 = essential,
1 = supporting). Metrics that are undefined for a question without gold notes (or
without key facts) return math.nan, so callers average with NaN-skipping
(unanswerable questions then drop out of recall-style means).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kb.tokens import count_tokens as count_tokens  # count_tokens: the harness reads it from here
from kb.tokens import encoding


@dataclass(frozen=True)
class ContextBlock:
    """One piece of assembled context, attributed to the note it came from."""

    path: str
    text: str


def _check_k(k: int) -> None:
    """Reject non-positive cut-offs."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def recall_at(ranked: Sequence[str], gold: Mapping[str, int], k: int) -> float:
    """Share of gold notes (any grade) in the top k; nan when gold is empty."""
    _check_k(k)
    if not gold:
        return math.nan
    return len(set(ranked[:k]) & set(gold)) / len(gold)


def all_gold_at(ranked: Sequence[str], gold: Mapping[str, int], k: int) -> float:
    """1.0 if every gold note is in the top k, else 0.0; nan when gold is empty."""
    _check_k(k)
    if not gold:
        return math.nan
    return 1.0 if set(gold) <= set(ranked[:k]) else 0.0


def mrr(ranked: Sequence[str], gold: Mapping[str, int]) -> float:
    """Reciprocal rank of the first gold note (0.0 if none ranked); nan when gold is empty."""
    if not gold:
        return math.nan
    for rank, path in enumerate(ranked, start=1):
        if path in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Mapping[str, int], k: int) -> float:
    """Graded nDCG@k with gain = grade and discount log2(rank + 1); nan when gold is empty."""
    _check_k(k)
    if not gold:
        return math.nan
    dcg, seen = 0.0, set()
    for rank, path in enumerate(ranked[:k], start=1):
        if path in gold and path not in seen:
            seen.add(path)
            dcg += gold[path] / math.log2(rank + 1)
    ideal = sorted(gold.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else math.nan


def _encode(text: str) -> list[int]:
    """Encode text, treating special-token strings as plain text."""
    return encoding().encode(text, disallowed_special=())


def normalise_ws(text: str) -> str:
    """Collapse every whitespace run to one space and strip the ends."""
    return " ".join(text.split())


def facts_found(context: str, quotes: Sequence[str]) -> list[bool]:
    """For each quote, whether it occurs in the context after whitespace normalisation."""
    haystack = normalise_ws(context)
    return [normalise_ws(q) in haystack for q in quotes]


def fact_recall(context: str, quotes: Sequence[str]) -> float:
    """Share of quotes found in the context (whitespace-normalised); nan when there are none."""
    if not quotes:
        return math.nan
    found = facts_found(context, quotes)
    return sum(found) / len(found)


def pack_budget(blocks: Sequence[ContextBlock], budget_tokens: int) -> list[ContextBlock]:
    """Keep whole blocks in order while they fit; truncate the first misfit at a token boundary, then stop.

    The budget counts the tokens of block texts only (no separators or headers).
    """
    packed: list[ContextBlock] = []
    remaining = budget_tokens
    for block in blocks:
        if remaining <= 0:
            break
        tokens = _encode(block.text)
        if len(tokens) <= remaining:
            packed.append(block)
            remaining -= len(tokens)
            continue
        text = _truncate(tokens, remaining)
        if text:
            packed.append(ContextBlock(path=block.path, text=text))
        break
    return packed


def _truncate(tokens: Sequence[int], limit: int) -> str:
    """Decode the longest token prefix (at most limit tokens) that re-encodes within limit."""
    n = limit
    while n > 0:
        text = encoding().decode(list(tokens[:n]))
        if count_tokens(text) <= limit:
            return text
        n -= 1
    return ""


def context_text(blocks: Sequence[ContextBlock]) -> str:
    """Join the block texts, in order, separated by blank lines."""
    return "\n\n".join(b.text for b in blocks)


def note_recall_in(blocks: Sequence[ContextBlock], gold: Mapping[str, int]) -> float:
    """Share of gold notes with at least one non-empty block in the context; nan when gold is empty."""
    if not gold:
        return math.nan
    present = {b.path for b in blocks if b.text.strip()}
    return len(present & set(gold)) / len(gold)


def precision_in(blocks: Sequence[ContextBlock], gold: Mapping[str, int]) -> float:
    """Share of context tokens from gold-note blocks; nan when gold or the context is empty."""
    if not gold:
        return math.nan
    total = gold_tokens = 0
    for block in blocks:
        n = count_tokens(block.text)
        total += n
        gold_tokens += n if block.path in gold else 0
    return gold_tokens / total if total else math.nan


def current_first(ranked: Sequence[str], current_path: str | None, distractors: Sequence[str]) -> float | None:
    """1.0 if current_path ranks above every ranked distractor, else 0.0; None without current/distractors.

    A distractor absent from the ranking counts as below; an absent current_path scores 0.0.
    """
    if current_path is None or not distractors:
        return None
    positions: dict[str, float] = {}
    for rank, path in enumerate(ranked):
        positions.setdefault(path, rank)
    if current_path not in positions:
        return 0.0
    mine = positions[current_path]
    others = [d for d in distractors if d != current_path]
    return 1.0 if all(positions.get(d, math.inf) > mine for d in others) else 0.0


# where a question's current note ranks, in bands: with current-first, whether a miss is the order of the notes
# found or the current note not found near the top at all
RANK_BANDS = ((5, "1-5"), (10, "6-10"), (20, "11-20"))
ABSENT = "absent"


def current_band(ranked: Sequence[str], current_path: str | None, distractors: Sequence[str]) -> str | None:
    """The band of RANK_BANDS the current note ranks in ("absent" below them or not ranked); None for a question
    current-first does not score."""
    if current_path is None or not distractors:
        return None
    rank = next((n for n, path in enumerate(ranked, start=1) if path == current_path), math.inf)
    return next((band for limit, band in RANK_BANDS if rank <= limit), ABSENT)


# why graph search missed current-first, from how its claims re-reading read the current note and the distractors
# ranked above it (NoteResult.standing): the knowledge layer misread the current note, read nothing of it, or read
# the notes above as stating the fact too (then the time order and hybrid's decided), or read nothing of them
CAUSES = (
    "current note not ranked",
    "no claims read (the question not read as about a state)",
    "current note below the notes whose claims were read",
    "current note read: no claim about what is asked",
    "current note read as outdated or a plan",
    "a distractor above states it too",
    "a distractor above: no claim read about what is asked",
    "a distractor above read as outdated or a plan",
)


def current_cause(
    ranked: Sequence[str], standings: Mapping[str, str] | None, current_path: str | None, distractors: Sequence[str]
) -> str | None:
    """The CAUSES entry for a current-first miss, read from `standings` (path -> states / outdated / not_fact /
    none, as graph search read each note's claims; a note whose claims it did not read is absent, and all are for a
    question it did not re-read); None for a hit, a question current-first does not score, or a mode that reads
    no claims (`standings` None)."""
    if standings is None or current_first(ranked, current_path, distractors) != 0.0:
        return None
    if current_path not in ranked:
        return CAUSES[0]
    if not standings:
        return CAUSES[1]
    mine = standings.get(str(current_path))
    if mine is None or mine == "none":
        return CAUSES[2] if mine is None else CAUSES[3]
    if mine != "states":
        return CAUSES[4]
    above = [standings.get(d) for d in distractors if d in ranked[: ranked.index(str(current_path))]]
    if "states" in above:
        return CAUSES[5]
    return CAUSES[6] if None in above or "none" in above else CAUSES[7]


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) with linear interpolation, like numpy's default; nan if empty."""
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be in [0, 100], got {p}")
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
