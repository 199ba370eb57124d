"""The time prior: for a question about a state (a value, whether something happened; how something changed only
with --as-of, see search/graph.py), the first notes of the ranking are re-ordered by reciprocal rank over two lists,
the ranking itself and the notes ordered by how near their dates lie to the time asked. A question about now (or
with no period) puts newer notes first, by the later of the note's date and its `updated` date (a living page edited
last month speaks for last month); a question naming a period puts first the notes written in it, then those
written after it, and last those written before it (a note cannot record what had not happened yet). A note written
up to `grace` days after the period counts as written in it: the board update of October reports the third quarter
(graph mode on the project's 23 sets over the shared vault, against no grace in the same build: 15, 31 or 62 days,
MRR 0.737 -> 0.740 / 0.741 / 0.740 with 7 / 8 / 9 questions won and 2 / 3 / 3 lost, current-first 0.728 -> 0.731,
1 won and none lost, each).

A named period that none of the first notes was written (or edited) in or after keeps the ranking, and the reading
says so: those notes cannot record it, and a vault that ends before it more likely means the period was misread (the
long-note set's "in January", read as this year's January over notes of the year before, lost its first gold note
to the newest). On the project's 24 sets over the shared vault it changed one ranking and no figure.

It reads only the dates of the ranked notes, in any language the question rules read, and runs on hybrid's order
before the claim-aware re-ranking, whose promotions and demotions then stand. Measured on the project's 14 sets
over the shared vault (graph mode with and without it, same run): on the 281 time and modality questions
current-first 0.694 -> 0.733, MRR 0.695 -> 0.713; on the 96 others MRR 0.735 -> 0.746. With the two-leg hybrid of
before, re-ordering after the claims instead gained as much current-first (0.727 against 0.723) and less MRR (0.698
against 0.705); reading a living page as spanning creation to `updated` for a period too gained current-first but
lost MRR, and is not used. Nor is capping a living page's `updated` date at the latest date a fact its shown chunks
hold is valid from (the 2026 plan, edited in October, otherwise speaks for October for its January goals): on the
project's 21 sets over the shared vault current-first 0.712 -> 0.709 and MRR 0.718 -> 0.714 in graph mode, as person
and client pages edited lately dropped below the notes they outrank (their facts carry older dates).

In hybrid mode (search/modes.py HYBRID_PRIOR) the prior runs only for a question that names its time (about now, a
period, or --as-of), not for whether something happened asked with no time (`happened=False`). Measured on the
project's 24 sets over the shared vault (667 questions, same build, today 2026-12-01), against hybrid's fused order:
MRR 0.690 -> 0.727 (117 questions won, 49 lost), current-first 0.483 -> 0.561 (42 / 8), recall and key facts within
8k unchanged, cells behind the naive baseline 15 -> 13; retrieval9 MRR 0.747 -> 0.719 (naive 0.835). With the
prior on every question of a state, as graph mode has it: MRR 0.711, current-first 0.615, and retrieval9 0.677: of
its 4 questions the prior moved, all lost, each read as about now or whether something happened, its answer in an
older note that newer ones passed. Graph mode keeps `happened`: without it, on the same run, MRR 0.742 -> 0.750 (40
won, 22 lost) but current-first 0.731 -> 0.703 (1 won, 13 lost), as the claims re-ranking starts from the fused
order instead of the newer record notes.

Measured and not used (graph mode, the project's 23 sets over the shared vault, from MRR 0.733 and current-first
0.731): for whether something happened, a period named only in a sentence of context ("At the December 2023 board
we promised ... Did we deliver?": the premise's time, the outcome comes after) read as no period, newer notes first:
MRR 0.725 (5 questions won, 17 lost), current-first 0.728; read with days after the period counting as inside it:
MRR 0.734 (4 won, 4 lost), current-first 0.728. The period prior itself earns its place: without it for period
questions MRR 0.719 (24 won, 49 lost), current-first 0.711; at half weight 0.724 and 0.708. Nor is the prior kept
for questions whose ranked notes' relevant claims disagree (a replaced value, a plan, another value): MRR 0.726 (11
won, 19 lost), current-first 0.718 (2 won, 7 lost); the newer note often wins with no disputed claim in sight."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from kb.search.question import Question
from kb.search.results import NoteResult


@dataclass(frozen=True)
class TimePrior:
    """The prior's knobs (GraphConfig holds one)."""

    depth: int = 10  # notes re-ordered; below them the ranking stands
    weight: float = 1.0  # the date list's weight against the ranking's (1: equal)
    k: int = 10  # reciprocal rank's constant
    after: float = 0.5  # a day after the period (past `grace`) counts this much ...
    before: float = 5.0  # ... a day before it this much
    grace: int = 31  # days after the period that count as in it: a report on a quarter is written after it
    happened: bool = True  # whether something happened, asked with no period and not about now: newer notes first


def _day(value: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def latest(note: NoteResult, as_of: str | None = None) -> dt.date | None:
    """The last day the note speaks for: its date, or its `updated` date when later (and not after `as_of`)."""
    days = [d for d in (_day(note.date), _day(note.updated)) if d]
    cap = _day(as_of)
    if cap:
        days = [d for d in days if d <= cap] or days[:1]
    return max(days, default=None)


def distance(note: NoteResult, start: str, end: str, prior: TimePrior) -> float | None:
    """How far the note's date lies from the period, in weighted days (0 inside it or up to `grace` days after)."""
    day, first, last = _day(note.date), _day(start), _day(end)
    if day is None or first is None or last is None:
        return None
    if first <= day <= last:
        return 0.0
    if day < first:
        return (first - day).days * prior.before
    return max(0, (day - last).days - prior.grace) * prior.after


def one_time_first(q: Question, as_of: str | None) -> bool:
    """Whether some time can come first: not for how something changed (its answer spans the notes' times), unless
    `as_of` names the day whose value comes first. Graph and hybrid mode both read it."""
    return q.intent != "change" or bool(as_of)


def newest_first(q: Question, as_of: str | None, prior: TimePrior) -> bool:
    """Whether a question with no period puts newer notes first: about now, with --as-of, or (`prior.happened`)
    whether something happened."""
    return q.now or bool(as_of) or (prior.happened and q.intent == "happened")


def date_keys(notes: list[NoteResult], q: Question, as_of: str | None, prior: TimePrior) -> list[float] | None:
    """Each note's place in time for the question (smaller first); None when the question asks no time."""
    period = q.period
    if period is not None:
        first = _day(period.start)
        # no note written (or edited) in the period or after it: their dates cannot tell which records it
        if first is not None and all((day := latest(n, as_of)) is None or day < first for n in notes):
            return None
        dists = [distance(n, period.start, period.end, prior) for n in notes]
        return [d if d is not None else float("inf") for d in dists]
    if newest_first(q, as_of, prior):
        days = [latest(n, as_of) for n in notes]
        return [-d.toordinal() if d else float("inf") for d in days]
    return None


def by_time(notes: list[NoteResult], q: Question, as_of: str | None, prior: TimePrior) -> list[NoteResult]:
    """The first `prior.depth` notes fused with their order in time; the rest as they were."""
    head, tail = notes[: prior.depth], notes[prior.depth :]
    keys = date_keys(head, q, as_of, prior)
    if keys is None or prior.weight == 0 or len(head) < 2:
        return notes
    place = {i: r for r, i in enumerate(sorted(range(len(head)), key=lambda i: (keys[i], i)))}
    fused = {i: 1 / (prior.k + i) + prior.weight / (prior.k + place[i]) for i in range(len(head))}
    order = sorted(range(len(head)), key=lambda i: (-fused[i], i))
    return [replace(head[i], rank=r) for r, i in enumerate(order, start=1)] + tail


def with_time(
    notes: list[NoteResult], q: Question, as_of: str | None, prior: TimePrior
) -> tuple[list[NoteResult], str | None]:
    """by_time, and what it did for the question's rules (None when the question asks no time)."""
    said = time_reading(q, as_of, prior)
    if said and q.period is not None and date_keys(notes[: prior.depth], q, as_of, prior) is None:
        return notes, f"time: no note written in {q.period.start}..{q.period.end} or after it, order kept"
    return (by_time(notes, q, as_of, prior), said) if said else (notes, None)


def time_reading(q: Question, as_of: str | None, prior: TimePrior | None = None) -> str | None:
    """What the prior did, for the question's rules."""
    period = q.period
    if period is not None:
        return f"time: notes written in {period.start}..{period.end}, then just after it, first"
    if newest_first(q, as_of, prior or TimePrior()):
        return "time: newer notes first" + (f" (up to {as_of})" if as_of else "")
    return None
