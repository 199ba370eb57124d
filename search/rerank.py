"""Claim-aware re-ranking: for a question about a value, a change or whether something happened, each ranked
note is read through the claims the knowledge layer holds about the asked subject. A note whose relevant claims
all stand outdated (superseded, of another period) or are only plans, hypotheticals, opinions or AI suggestions
moves below the notes that state the fact; a note with no relevant claims keeps its place.

Each ranked note is read through the claims its shown chunks support. Relevance comes from the graph: the
entities the question names (and, for whether something happened, those the claims nearest it are about),
claims whose attribute stems the question holds in full, and claims whose line vector is among the nearest to
the question (within `margin` of the best). A plan that a decision set counts as what happened (the decision
was taken); a fact a later value replaced does not, unless it stood in the period the question asks about. No
word lists.

Measured and not used (graph mode, the project's 21 sets over the shared vault, current-first / MRR from 0.712 /
0.718): letting the claim nearest the question decide a note's standing for whether something happened (a plan note
with background facts then drops; so did the record notes quoting the plan) 0.679 / 0.690; demoting a note only
below stating notes whose claims are about as near the question (within 0.05) 0.704 / 0.723, and the same except
for whether something happened 0.709 / 0.721. Simulated on graph mode's final rankings: for whether something
happened, the first note (read as the question's premise, the plan or chat it quotes) moved below the first later
dated note among the first 2, 3 or 5: 0.709 / 0.693, 0.693 / 0.685, 0.687 / 0.688 (230 questions read as
"happened", and the first note is often the record itself). When the claim nearest the question is a plan the
graph says a later fact followed (FOLLOWED_BY), putting that fact's note first instead: 0.712 / 0.718 -> 0.712 /
0.719, 3 questions won and 3 lost (the first later fact is often not the outcome the question asks about: a Q3
board figure for an end-of-year target). Adding the note of the fact claim nearest the question in the whole
claim-line index (not only in the ranked notes' chunks): of the 25 whether-it-happened questions whose current note
is not among the first 12, that note is it for 2 (and a distractor for 4), so it is not a way in. For whether
something happened (not about now), when the claim nearest the question is a plan, suggestion or hypothetical, its
note moved just below the first later-dated note among the first 8 holding a relevant fact (the project's 23 sets,
graph mode, against the same run without it): current-first 1 question won and 2 lost, MRR 3 won and 4 lost. For
whether something happened, a note whose relevant claims are more often plans, suggestions or opinions than facts
(more than once / twice as often) read as only those: current-first 0.738 -> 0.733 / 0.731 (5 won and 7 lost / 2
and 5), MRR 0.740 -> 0.730 / 0.734; a plan document's few facts are its background, but a record's claims quote
the plan as often. A plan document read from all its claims (at least 3, 70% or more not facts) moved below the next
other note among the first 5 (simulated on the final rankings): MRR 0.742, current-first 0.741, 2 and 1 questions
won, none lost; 60% lost 6 MRR and 2 current-first, and a statement more for 3 questions is not kept.

Nor, measured on graph mode over the project's 24 sets (667 questions, from MRR 0.742 and current-first 0.731, same
build): for whether something happened, when the claim nearest the question is a plan, suggestion or hypothetical (the
premise the question quotes), facts dated up to that claim's note left out of what states it (a plan's background
cannot record its outcome): MRR 0.744 (15 questions won, 11 lost), current-first 0.726 (4 won, 6 lost); for a
question about now, the notes among the first 8 that state the fact re-ordered by their newest stating claim, in the
places they hold: MRR 0.741 (8 / 10), current-first 0.735 (4 / 2), and the same also for whether something happened
with no period: 0.744 (29 / 29) and 0.735 (7 / 5). Of the 116 current-first misses of that run, 30 had the current
note among the first 8 with both it and the distractor above it stating the fact: the claims within the margin of the
nearest are as often background facts (a board's approval date) as the record asked about. Nor, for whether
something happened, a plan written after every relevant fact read as what stands ("hire ML engineer #2 in 2027" in
the 2026 plan says the 2024 hire never came): MRR 0.743 (2 won, 5 lost), current-first 0.724 (none won, 3 lost);
for questions about now alone it moved no ranking. Nor, for whether something stands now, a replaced fact read as
stating it when none of the values that replaced it is among the claims about what is asked (an attribute such as
"role" or "product_update" holds several facets, and a later value of another facet replaced it): MRR 0.743 (1
question won, none lost), current-first 0.731 (1 won, 1 lost); for values about now too, MRR 0.740 (1 / 6),
current-first 0.722 (1 / 5).

Nor a learned re-ordering of the first 10 notes: a linear model over every signal graph search has for a note (its
graph and fused ranks, its best rank in each leg, its standing, promoted, demoted, saved AI chat, its date's place
among the ten, in or after the period asked, and its rank when the question's last sentence alone is searched), each
crossed with what the question asks (now, whether it happened, a value, a period, a sentence of context), trained by
pairwise logistic loss on the graded notes, the current note and the distractors of all sets but one and scored on
that one (the project's 24 sets over the shared vault, 682 questions, graph mode MRR 0.726 and current-first 0.731 on
the same notes). Its best fit: MRR 0.735 (59 questions won, 44 lost), current-first 0.733 (6 / 5); trained only to
put the current note above the distractors: current-first at most 0.740 (16 / 12), MRR then 0.674. The signals kb
holds are used about as well as they can be: what is missing is a reading of whether a note answers what is asked."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kb.config import in_folder
from kb.search.question import Question
from kb.search.results import NoteResult
from kb.words import value_key

FACTUAL = ("fact", "reported")


@dataclass(frozen=True)
class Standing:
    """How one note stands for the question, and the claim that decided it."""

    path: str
    standing: str  # "states" | "outdated" | "not_fact"
    claim: str


def _day(value: Any, end: bool = False) -> str:
    """A partial date ("2024", "2024-11") as the first (or last) day it covers, for ordering."""
    s = str(value or "")
    if not s:
        return ""
    if len(s) == 4:
        return s + ("-12-31" if end else "-01-01")
    if len(s) == 7:
        return s + ("-31" if end else "-01")
    return s[:10]


def claim_when(claim: dict[str, Any]) -> str:
    return _day(claim.get("valid_from") or claim.get("note_date"))


def replaced_by(row: dict[str, Any], at: str) -> bool:
    """Whether a later value had replaced the claim by `at` (one recorded for the claim's own date restates
    it, and does not make it outdated then)."""
    when = claim_when(row["claim"])
    return any(when < _day(s.get("as_of")) <= at for s in row.get("sup") or [] if s.get("as_of"))


def decided_plan(row: dict[str, Any]) -> bool:
    """A plan that a decision set (a claim about an entity of type Decision): that the decision was taken is
    what happened."""
    return row["claim"]["modality"] == "plan" and str(row.get("entry") or "").startswith("decision:")


def standing(row: dict[str, Any], q: Question, as_of: str | None) -> str:
    """ "states" (the fact asked for), "outdated" (superseded or of another time) or "not_fact"."""
    c = row["claim"]
    if c["modality"] not in FACTUAL and not (q.intent == "happened" and decided_plan(row)):
        return "not_fact"
    period = q.period
    if q.intent == "happened":
        if not row.get("sup"):
            return "states"  # what did happen, whenever it was recorded
        if as_of:
            start, end = as_of, as_of
        elif period:
            start, end = period.start, period.end
        elif q.asks_when:
            return "states"  # when it happened: the record of the event, whatever value replaced it later
        else:
            # about now ("do we still ...?") a later value replaced it; about the past ("did churn ever cross 3%?")
            # each recorded value says what happened then (measured: current-first 0.712 -> 0.720, 3 won, none lost)
            return "outdated" if q.now else "states"
        return "states" if claim_when(c) <= end and not replaced_by(row, start) else "outdated"  # stood then
    at = as_of or (period.end if period else None)
    if at is None:
        return "states" if c.get("is_current") else "outdated"
    when = claim_when(c)
    if not when or when > at:
        return "outdated"
    if replaced_by(row, at):
        return "outdated"
    return "states"


def relevant(
    rows: list[dict[str, Any]], q: Question, named: set[str], margin: float | None, per_note: int = 3
) -> list[dict[str, Any]]:
    """The claims about what is asked. A value: claims whose attribute stems the question holds in full, or
    whose line is among the nearest to the question (within `margin` of the best), of the entities the
    question names when any is. Whether something happened: each chunk's `per_note` claims nearest the
    question, if within twice `margin` of the best or about what the claims nearest the question are about (a
    fact only states what happened when it is about an entity the question names or those claims are about). No
    `margin`: stems only."""
    scores = [r["score"] for r in rows if r.get("score") is not None]
    best = max(scores, default=None)
    if q.intent == "happened" and margin is not None:
        # a fact states what happened when it is about what the question names, or is as near it as the best
        near = (best or 0.0) - margin
        # what the question asks about: what it names, and what the claims nearest it are about ("the sales
        # framework" is the framework the nearest suggestion renames); a chunk's claims about those count even
        # when their lines are further from the question
        nearest = {r["entry"] for r in rows if (r.get("score") or 0.0) >= near} - named if named else set()
        named = named | nearest
        about = [{**r, "anchor": not named or r["entry"] in named or (r.get("score") or 0.0) >= near} for r in rows]
        by_chunk: dict[str, list[dict[str, Any]]] = {}
        for r in sorted(
            about,
            key=lambda r: (-(r.get("score") or 0.0), str(r["claim"].get("attribute")), str(r["claim"].get("value"))),
        ):
            by_chunk.setdefault(str(r.get("chunk") or r["claim"]["note_path"]), []).append(r)
        floor = (best or 0.0) - 2 * margin  # a chunk's nearest claims, if they are near the question at all
        return [
            r
            for key in sorted(by_chunk)
            for r in by_chunk[key][:per_note]
            if (r.get("score") or 0.0) >= floor or r["entry"] in nearest
        ]
    asked = q.attribute_stems()
    out = []
    for r in rows:
        attr = set(r["claim"].get("attr_stems") or [])
        by_stems = bool(attr) and attr <= asked
        by_vector = (
            margin is not None and best is not None and r.get("score") is not None and r["score"] >= best - margin
        )
        if by_stems or by_vector:
            out.append(r)
    return [r for r in out if r["entry"] in named] or out


def with_timelines(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each fact also replaced by the later facts of another value about the same entity and attribute among
    `rows`: the recorded supersession links one claim to one successor, which need not be the next value (a Q3
    figure linked to a 2026 one skips the Q4 figure another note gives)."""
    found: dict[tuple[str, str], set[tuple[str, str, Any]]] = {}
    for r in rows:
        c = r["claim"]
        if c["modality"] in FACTUAL and claim_when(c):
            key = (str(r.get("entry")), str(c.get("attribute")))
            found.setdefault(key, set()).add((claim_when(c), value_key(c.get("value")), c.get("value")))
    timeline = {key: sorted(facts, key=str) for key, facts in found.items()}  # each once, in a fixed order
    out = []
    for r in rows:
        c = r["claim"]
        when, mine = claim_when(c), value_key(c.get("value"))
        later = [
            {"value": v, "as_of": w}
            for w, k, v in timeline.get((str(r.get("entry")), str(c.get("attribute"))), [])
            if w > when and k != mine
        ]
        out.append({**r, "sup": list(r.get("sup") or []) + later} if later and c["modality"] in FACTUAL else r)
    return out


def note_path(row: dict[str, Any], note_of: dict[str, str] | None) -> str:
    """The ranked note a claim row stands for: that of its chunk in `note_of`, else the note the claim is from."""
    return (note_of or {}).get(str(row.get("chunk") or ""), str(row["claim"]["note_path"]))


def claim_text(claim: dict[str, Any]) -> str:
    """A claim as a note's standing names it: attribute, value, and the day it holds from (or was written), so an
    answerer can tell two notes that both state a value apart by when."""
    when = claim.get("valid_from") or claim.get("note_date")
    return f"{claim['attribute']} = {claim['value']}" + (f" (as of {when})" if when else "")


def standings(
    rows: list[dict[str, Any]], q: Question, as_of: str | None, note_of: dict[str, str] | None = None
) -> dict[str, Standing]:
    """Per note (the note of the row's chunk in `note_of`, else the claim's note): "states" if any relevant
    claim of it states the fact, else its first other standing. For a value in a period or on a day, a fact
    another of the rows replaced by then is outdated too."""
    if q.intent != "happened" and (as_of or q.period):
        rows = with_timelines(rows)
    out: dict[str, Standing] = {}
    rank = {"states": 0, "outdated": 1, "not_fact": 2}
    for r in sorted(
        rows, key=lambda r: (r["claim"]["note_path"], str(r["claim"].get("attribute")), str(r["claim"].get("value")))
    ):
        path = note_path(r, note_of)
        s = standing(r, q, as_of)
        if s == "states" and not r.get("anchor", True):
            continue
        if path not in out or rank[s] < rank[out[path].standing]:
            out[path] = Standing(path, s, claim_text(r["claim"]))
    return out


# words by which a question asks about what an AI said (then a saved chat is the evidence, not a suggestion)
ASKS_THE_AI = frozenset("ai ki ia chatgpt gpt claude llm gemini copilot chatbot assistant".split())


def is_ai_chat(path: str, folders: tuple[str, ...]) -> bool:
    """Whether the note at `path` is a saved AI chat (in one of the AI-chat folders)."""
    return in_folder(path.rpartition("/")[0], folders)


def speaks_of_the_ai(q: Question, folders: tuple[str, ...]) -> bool:
    """Whether the question asks what an AI said: it names the AI or an AI-chat folder, and does not ask whether
    we did something ("did we follow ChatGPT's advice?": a chat holds what the AI said, never what was done)."""
    names_the_ai = set(q.words) & (ASKS_THE_AI | {f.lower() for f in folders})
    return bool(names_the_ai) and not (q.intent == "happened" and q.first_person)


def chat_standings(results: list[NoteResult], q: Question, folders: tuple[str, ...]) -> dict[str, Standing]:
    """Saved AI chats among `results` stand as "not_fact", whatever claims their chunks support: a chat holds
    the AI's suggestions and what the AI was told (a price quoted to it is context, not the vault's record of
    the price); none when the question asks what the AI said."""
    if speaks_of_the_ai(q, folders):
        return {}
    return {r.path: Standing(r.path, "not_fact", "a saved AI chat") for r in results if is_ai_chat(r.path, folders)}


def demote(
    results: list[NoteResult], stand: dict[str, Standing], depth: int = 100, max_drop: int = 100
) -> list[NoteResult]:
    """Notes that only hold outdated or non-factual claims go just below the lowest note that states the
    fact (or was promoted for stating it) among the first `depth`, but at most `max_drop` places down (a
    misread note then stays in the context); every other note keeps its order. Nothing moves when none of
    those states the fact."""
    states = [
        n
        for n, r in enumerate(results[:depth])
        if r.promoted or (r.path in stand and stand[r.path].standing == "states")
    ]
    if not states:
        return results
    last = states[-1]
    reason = {"outdated": "outdated claims", "not_fact": "only plans, opinions or suggestions"}
    keyed: list[tuple[float, int, NoteResult]] = []
    capped: list[str] = []  # demoted notes that `max_drop` kept above the last note stating the fact
    for n, r in enumerate(results):
        s = stand.get(r.path)
        if n < last and s is not None and s.standing != "states" and not r.promoted:
            to = min(last, n + max_drop)  # placed just after the note now at `to`
            if to < last:
                capped.append(r.path)
            keyed.append((to + 0.5, n, replace(r, demoted=f"{reason[s.standing]} ({s.claim})")))
        else:
            keyed.append((float(n), n, r))
    out = [r for _, _, r in sorted(keyed, key=lambda k: (k[0], k[1]))]
    out = _lift_past_capped(out, stand, set(capped), depth)
    return [replace(r, rank=n) for n, r in enumerate(out, start=1)]


def with_standings(results: list[NoteResult], stand: dict[str, Standing], read: set[str]) -> list[NoteResult]:
    """Each note told how the re-reading read it: its standing and the claim that decided it, or "none" when its
    claims were read (`read`) and none is about what is asked; a promoted note states it (the claim that lifted it
    may be one its chunks' nearest claims do not hold). The order unchanged."""

    def told(r: NoteResult) -> NoteResult:
        s = stand.get(r.path)
        if r.promoted:
            return replace(r, standing="states", standing_claim=s.claim if s and s.standing == "states" else None)
        if s is not None:
            return replace(r, standing=s.standing, standing_claim=s.claim)
        return replace(r, standing="none") if r.path in read else r

    return [told(r) for r in results]


def _lift_past_capped(
    results: list[NoteResult], stand: dict[str, Standing], capped: set[str], depth: int
) -> list[NoteResult]:
    """Notes stating the fact that a demoted note still outranks (it could drop only `max_drop` places) go just
    above the first such note, in their order: each demoted note then moves down one place per note lifted,
    and stays in the context."""
    first = next((n for n, r in enumerate(results) if r.path in capped), None)
    if first is None:
        return results
    lifted = [
        r
        for r in results[first + 1 : depth]
        if not r.demoted and (r.promoted or (r.path in stand and stand[r.path].standing == "states"))
    ]
    moved = {r.path for r in lifted}
    return results[:first] + lifted + [r for r in results[first:] if r.path not in moved]


def nearest_record_first(
    results: list[NoteResult],
    rows: list[dict[str, Any]],
    q: Question,
    as_of: str | None,
    note_of: dict[str, str] | None,
    depth: int,
    chat_folders: tuple[str, ...],
) -> list[NoteResult]:
    """For whether something happened: the note of the claim nearest the question (of `rows`, the relevant ones)
    goes first, when that claim is a fact stating what happened (not a plan, a suggestion or a replaced value),
    the note is among the first `depth` and is not a saved AI chat; every other note keeps its order. Not for
    a question about now ("is X live yet?"): the nearest claim is often the old record of the request or plan
    (an interview saying the client needs X), and the time order, newer records first, stands (measured on the
    project's 17 sets over the shared vault: current-first 0.723 -> 0.730, 3 questions won, 1 lost)."""
    scored = [r for r in rows if r.get("score") is not None]
    if q.intent != "happened" or q.now or not scored:
        return results
    best = max(scored, key=lambda r: (r["score"], str(r["claim"].get("value"))))
    path = note_path(best, note_of)
    # a value a later one replaced still says what happened (standing), but as the nearest claim it is more often
    # the premise the question quotes than the record (measured: MRR 0.719 -> 0.720, 7 questions won, 2 lost)
    if standing(best, q, as_of) != "states" or best.get("sup") or is_ai_chat(path, chat_folders):
        return results
    at = next((i for i, r in enumerate(results[:depth]) if r.path == path), None)
    if not at:
        return results  # not among them, or first already
    top = replace(results[at], promoted="states what happened (the claim nearest the question)")
    out = [top, *results[:at], *results[at + 1 :]]
    return [replace(r, rank=n) for n, r in enumerate(out, start=1)]
