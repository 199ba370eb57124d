"""Claim-aware re-ranking, as-of reading and current-only lines, as pure functions (no server). The questions
and the vault they imagine (a bakery chain) are unlike the dev set's."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from result_helpers import ranked

from kb.search.current import as_of_rows, current_only, lead_claims
from kb.search.question import parse
from kb.search.rerank import (
    chat_standings,
    demote,
    nearest_record_first,
    relevant,
    speaks_of_the_ai,
    standing,
    standings,
)

TODAY = dt.date(2026, 12, 1)
CHAIN = "thing:crumb"


def row(
    value: str,
    path: str,
    when: str,
    *,
    attribute: str = "store_count",
    modality: str = "fact",
    current: bool = False,
    sup: str | None = None,
    entry: str = CHAIN,
    score: float | None = 0.5,
    then: str | None = None,
) -> dict[str, Any]:
    return {
        "entry": entry,
        "entity": "Crumb",
        "asked": True,
        "score": score,
        "chunk": f"{path}#1",
        "sup": [{"value": "later", "as_of": sup, "note_path": "x.md"}] if sup else [],
        "conf": [],
        "then": [{"value": "done", "as_of": then, "note_path": "y.md"}] if then else [],
        "claim": {
            "attribute": attribute,
            "value": value,
            "note_path": path,
            "note_date": when,
            "valid_from": when,
            "modality": modality,
            "is_current": current,
            "quote": value,
            "attr_stems": sorted({w.rstrip("s") for w in attribute.split("_") if w != "count"}),
        },
    }


STORES = [
    row("31", "q3-2026.md", "2026-09-30", current=True),
    row("24", "2024-review.md", "2024-12-31", sup="2025-06-30"),
    row("27", "2025-mid.md", "2025-06-30", sup="2026-09-30"),
    row("40", "plan-2026.md", "2026-01-10", modality="plan"),
    row("45", "ai-chat.md", "2026-02-01", modality="ai_suggestion"),
]


def test_standing_now_at_a_period_and_as_of() -> None:
    now = parse("How many stores does Crumb run today?", TODAY)
    assert [standing(r, now, None) for r in STORES] == ["states", "outdated", "outdated", "not_fact", "not_fact"]
    in_2025 = parse("How many stores did Crumb run in 2025?", TODAY)
    assert [standing(r, in_2025, None) for r in STORES[:3]] == ["outdated", "outdated", "states"]
    assert [standing(r, now, "2025-01-15") for r in STORES[:3]] == ["outdated", "states", "outdated"]
    happened = parse("Did Crumb ever open store 40?", TODAY)
    # a replaced count still records what happened then; plans and suggestions do not
    assert [standing(r, happened, None) for r in STORES] == ["states", "states", "states", "not_fact", "not_fact"]
    still = parse("Does Crumb still run 24 stores?", TODAY)  # about now: a replaced count is outdated
    assert (still.intent, still.now) == ("happened", True)
    assert [standing(r, still, None) for r in STORES] == ["states", "outdated", "outdated", "not_fact", "not_fact"]
    in_2024 = parse("Did Crumb run 24 stores in 2024?", TODAY)  # unless it stood in the period asked about
    assert [standing(r, in_2024, None) for r in STORES[:3]] == ["states", "states", "outdated"]
    assert [standing(r, happened, "2025-07-01") for r in STORES[:3]] == ["states", "outdated", "states"]


def test_relevance_from_stems_or_the_nearest_claim_lines() -> None:
    q = parse("How many stores does Crumb run today?", TODAY)
    other = row("Lena", "people.md", "2026-01-01", attribute="head_baker", current=True, score=0.1)
    near = row("9", "q3-2026.md", "2026-09-30", attribute="outlet_total", current=True, score=0.52)
    got = relevant(STORES + [other, near], q, {CHAIN}, 0.05)
    assert other not in got and near in got and all(r in got for r in STORES)  # near: by vector, not words
    product = row("33", "q3-2026.md", "2026-09-30", entry="thing:crumb-app", current=True)
    assert relevant(STORES + [product], q, {CHAIN}, 0.05) == STORES  # the named entity's claims, when it has any
    assert relevant([product], q, {CHAIN}, 0.05) == [product]  # else the claims that match ("the chain's" app)
    german = parse("Wie viele Filialen hat Crumb derzeit?", TODAY)  # no English stem: the vectors decide
    assert relevant([other, near], german, {CHAIN}, 0.05) == [near]


def test_a_sentence_of_context_names_no_attribute() -> None:
    """ "Crumb closed its stores. How many bakers work there?" asks the head count, not the store count."""
    q = parse("Crumb closed its stores last spring. How many bakers work there?", TODAY)
    assert "store" in q.stems and "store" not in q.attribute_stems() and "baker" in q.attribute_stems()
    bakers = row("40", "team.md", "2026-06-01", attribute="baker_count", current=True)
    assert relevant(STORES + [bakers], q, {CHAIN}, None) == [bakers]
    one = parse("How many stores and bakers does Crumb have?", TODAY)
    assert one.attribute_stems() == one.stems  # one sentence: all of it is asked


def test_outdated_and_non_factual_notes_go_below_the_fact() -> None:
    q = parse("How many stores does Crumb run today?", TODAY)
    stand = standings(STORES, q, None)
    results = ranked("ai-chat.md", "2024-review.md", "about.md", "q3-2026.md", "plan-2026.md", "menu.md")
    out = demote(results, stand)
    assert [r.path for r in out] == [
        "about.md",
        "q3-2026.md",
        "ai-chat.md",
        "2024-review.md",
        "plan-2026.md",
        "menu.md",
    ]
    assert [r.rank for r in out] == [1, 2, 3, 4, 5, 6]
    assert (out[2].demoted or "").startswith("only plans, opinions or suggestions")
    assert (out[3].demoted or "").startswith("outdated claims")
    assert demote(ranked("ai-chat.md", "about.md"), stand) == ranked("ai-chat.md", "about.md")  # no fact ranked


def test_a_note_with_a_current_claim_is_not_demoted() -> None:
    q = parse("How many stores does Crumb run today?", TODAY)
    mixed = STORES + [row("24", "q3-2026.md", "2024-12-31", sup="2025-06-30")]  # the note also lists history
    stand = standings(mixed, q, None)
    assert stand["q3-2026.md"].standing == "states"


def test_a_restatement_on_the_same_date_is_not_an_outdated_value() -> None:
    q = parse("How many stores did Crumb run at the end of Q2 2025?", TODAY)
    restated = row("27", "2025-mid.md", "2025-06-30", sup="2025-06-30")  # the board note repeats it that day
    assert standing(restated, q, None) == "states"
    assert standing(row("27", "2025-mid.md", "2025-06-30", sup="2025-06-01"), q, None) == "states"  # odd order
    assert standing(row("27", "2025-mid.md", "2025-05-31", sup="2025-06-15"), q, None) == "outdated"


def test_as_of_reads_claims_as_they_stood() -> None:
    rows = as_of_rows(STORES, "2025-01-15")
    assert sorted(r["claim"]["value"] for r in rows) == ["24"]  # later notes and claims are not yet written
    assert rows[0]["claim"]["is_current"] and rows[0]["sup"] == []  # its replacement came later
    later = as_of_rows(STORES, "2025-12-31")
    assert {r["claim"]["value"]: r["claim"]["is_current"] for r in later} == {"24": False, "27": True}


def test_current_only_leaves_outdated_claims_out() -> None:
    plan_done = row("new site", "plan.md", "2025-01-01", attribute="site", modality="plan", then="2025-05-01")
    kept = current_only(STORES + [plan_done])
    assert sorted(r["claim"]["value"] for r in kept) == ["31", "40", "45"]


def test_lead_claims_at_a_date() -> None:
    assert [r["claim"]["value"] for r in lead_claims(STORES, {CHAIN}, {"store"}, None, None)] == ["31"]
    assert [r["claim"]["value"] for r in lead_claims(STORES, {CHAIN}, {"store"}, "2025-01-01", "2025-12-31")] == ["27"]
    assert lead_claims(STORES, {CHAIN}, {"store"}, "2023-01-01", "2023-12-31") == []  # nothing then


def test_did_it_happen_reads_each_chunks_nearest_claims() -> None:
    q = parse("Did Crumb ever open the harbour store?", TODAY)
    plan = [
        row("harbour store", "plan.md", "2025-01-01", attribute="opening", modality="plan", score=0.8),
        row("June", "plan.md", "2025-01-01", attribute="opening_date", modality="plan", score=0.7),
        row("3 staff", "plan.md", "2025-01-01", attribute="staffing", score=0.1),
    ]  # a fact, but far
    chat = [
        row(
            "harbour",
            "chat.md",
            "2025-02-01",
            attribute="site",
            modality="ai_suggestion",
            score=0.9,
            entry="thing:harbour",
        )
    ]
    done = [row("never opened", "review.md", "2026-01-01", attribute="opening", score=0.85)]
    stand = standings(relevant(plan + chat + done, q, {CHAIN}, 0.05), q, None)
    assert {p: s.standing for p, s in stand.items()} == {
        "plan.md": "not_fact",
        "chat.md": "not_fact",
        "review.md": "states",
    }
    other = row("opened", "elsewhere.md", "2026-01-01", attribute="opening", score=0.82, entry="thing:van")
    assert "elsewhere.md" not in standings(relevant(chat + [other], q, {CHAIN}, 0.05), q, None)  # not named
    harbour = {**other, "entry": "thing:harbour"}  # but about what the nearest claim (the chat's) is about
    assert standings(relevant(chat + [harbour], q, {CHAIN}, 0.05), q, None)["elsewhere.md"].standing == "states"
    near = {**other, "score": 0.88}  # unless its line is as near the question as the best
    assert standings(relevant(chat + [near], q, {CHAIN}, 0.05), q, None)["elsewhere.md"].standing == "states"
    out = demote(ranked("chat.md", "plan.md", "menu.md", "review.md"), stand)
    assert [r.path for r in out] == ["menu.md", "review.md", "chat.md", "plan.md"]


def test_a_promoted_note_is_not_demoted_and_stems_only_without_a_margin() -> None:
    q = parse("How many stores does Crumb run today?", TODAY)
    stand = standings(STORES, q, None)
    results = [
        replace(r, promoted="states the current value") if r.path == "2024-review.md" else r
        for r in ranked("2024-review.md", "ai-chat.md", "q3-2026.md")
    ]
    out = demote(results, stand)
    assert [r.path for r in out] == ["2024-review.md", "q3-2026.md", "ai-chat.md"]  # it states the value asked
    near = row("9", "q3-2026.md", "2026-09-30", attribute="outlet_total", current=True, score=0.52)
    assert relevant([near], parse("Wie viele Filialen hat Crumb derzeit?", TODAY), {CHAIN}, None) == []


def test_a_timeline_can_lead_by_its_line_vector() -> None:
    asked = [{**r, "asked": False} for r in STORES]  # the question's words name no attribute (another language)
    assert lead_claims(asked, {CHAIN}, set(), None, None) == []
    assert [r["claim"]["value"] for r in lead_claims(asked, {CHAIN}, set(), None, None, 0.05)] == ["31"]
    far = [{**r, "score": 0.1} for r in asked] + [
        {**row("Lena", "people.md", "2026-01-01", attribute="head_baker", current=True, sup="2026-02-01"), "score": 0.9}
    ]
    assert [r["claim"]["value"] for r in lead_claims(far, {CHAIN}, set(), None, None, 0.05)] == ["Lena"]  # only
    # the nearest timeline leads, never the far one


def test_a_plan_that_a_decision_set_is_what_happened() -> None:
    decided = row("Q2 2027", "decision.md", "2026-05-01", attribute="revisit_date", modality="plan")
    decided = {**decided, "entry": "decision:no second loan in 2026"}
    happened = parse("Did Crumb take a second loan in 2026?", TODAY)
    assert standing(decided, happened, None) == "states"  # deciding not to is what happened
    assert standing(decided, parse("When will Crumb revisit the loan?", TODAY), None) == "not_fact"  # a value
    suggested = {**decided, "claim": {**decided["claim"], "modality": "ai_suggestion"}}
    assert standing(suggested, happened, None) == "not_fact"  # only a plan the decision set counts
    plan = row("Q2 2027", "plan.md", "2026-05-01", attribute="revisit_date", modality="plan")
    assert standing(plan, happened, None) == "not_fact"  # a plan of no decision is still a plan


def test_did_it_happen_also_reads_what_the_nearest_claims_are_about() -> None:
    q = parse("Was the loyalty card renamed to Sparkle after the AI chat proposed it?", TODAY)
    card = "thing:loyalty card"
    chat = [
        {
            **row("rename to Sparkle", "chat.md", "2025-02-01", attribute="name", modality="ai_suggestion", score=0.9),
            "entry": card,
        },
        {
            **row("Sparkle", "chat.md", "2025-02-01", attribute="meaning", modality="ai_suggestion", score=0.75),
            "entry": "thing:sparkle",
        },
    ]
    # the card's own note is further from the question than twice the margin, but about what the nearest
    # claim (the suggestion) is about: it states what happened
    kept = {**row("Crumb Card, unchanged", "card.md", "2025-03-01", attribute="name", score=0.7), "entry": card}
    unrelated = {**row("2 ovens", "oven.md", "2025-03-01", attribute="ovens", score=0.7), "entry": "thing:oven"}
    stand = standings(relevant(chat + [kept, unrelated], q, {"thing:sparkle"}, 0.05), q, None)
    assert {p: s.standing for p, s in stand.items()} == {"chat.md": "not_fact", "card.md": "states"}
    out = demote(ranked("chat.md", "oven.md", "card.md"), stand)
    assert [r.path for r in out] == ["oven.md", "card.md", "chat.md"]


def test_a_value_another_note_replaced_in_the_period_is_outdated_then() -> None:
    """The recorded supersession links the Q3 count to 2026's, skipping the Q4 count another note gives: for Q4
    the Q3 note is outdated all the same, while a restatement of the Q4 number is not."""
    q = parse("How many stores did Crumb run in the fourth quarter of 2024?", TODAY)
    assert [r.reading() for r in q.ranges] == ["read 'fourth quarter of 2024' as 2024-10-01..2024-12-31"]
    q3 = row("18", "2024-q3.md", "2024-09-30", sup="2026-09-30")
    q4 = row("24", "2024-review.md", "2024-11-30", sup="2026-09-30")
    again = row("24 (two franchised)", "2025-plan.md", "2024-12-31", sup="2026-09-30")
    stand = standings([q3, q4, again], q, None)
    assert {p: s.standing for p, s in stand.items()} == {
        "2024-q3.md": "outdated",
        "2024-review.md": "states",
        "2025-plan.md": "states",
    }
    assert standing(q3, q, None) == "states"  # alone, its own link says nothing of Q4
    now = parse("How many stores does Crumb run today?", TODAY)
    assert standings([q3, q4], now, None)["2024-review.md"].standing == "outdated"  # now: the current flag decides


def test_a_fact_a_capped_demotion_leaves_below_is_lifted_past_it() -> None:
    """The AI chat may drop only 2 places, which leaves it above the note stating the fact: that note (and only
    a note stating it) goes just above the chat, which then moves down one place and stays in the context."""
    q = parse("How many stores does Crumb run today?", TODAY)
    stand = standings(STORES, q, None)
    results = ranked("ai-chat.md", "about.md", "menu.md", "other.md", "q3-2026.md", "tail.md")
    out = demote(results, stand, max_drop=2)
    assert [r.path for r in out] == ["about.md", "menu.md", "q3-2026.md", "ai-chat.md", "other.md", "tail.md"]
    assert [r.rank for r in out] == [1, 2, 3, 4, 5, 6]
    assert (out[3].demoted or "").startswith("only plans") and out[2].demoted is None
    uncapped = demote(results, stand, max_drop=10)  # the chat drops below the fact: nothing is lifted
    assert [r.path for r in uncapped] == ["about.md", "menu.md", "other.md", "q3-2026.md", "ai-chat.md", "tail.md"]
    assert demote(results, stand, depth=3) == results  # no note stating the fact among the first 3: nothing moves


def test_a_saved_ai_chat_is_a_suggestion_unless_the_question_asks_what_the_ai_said() -> None:
    """A chat stands as "not_fact" (and goes below the note stating the fact), even one whose chunks record a
    fact (what the AI was told), unless the question asks about the AI; a note outside the chat folders is read
    by its claims."""
    q = parse("How many stores does Crumb run today?", TODAY)
    results = ranked("Chats/2025-02-01 store ideas.md", "q3-2026.md", "Chats/2025-03-01 menu.md", "notes.md")
    rows = [row("31", "q3-2026.md", "2026-09-30", current=True), row("31", "Chats/2025-03-01 menu.md", "2026-10-01")]
    note_of = {r["chunk"]: r["claim"]["note_path"] for r in rows}
    stand = standings(rows, q, None, note_of)
    chats = chat_standings(results, q, ("Chats",))
    assert {p: s.standing for p, s in chats.items()} == {
        "Chats/2025-02-01 store ideas.md": "not_fact",
        "Chats/2025-03-01 menu.md": "not_fact",  # the store count quoted to the AI is context, not the record
    }
    out = demote(results, {**stand, **chats})
    assert [r.path for r in out][:2] == ["q3-2026.md", "Chats/2025-02-01 store ideas.md"]
    assert "a saved AI chat" in (out[1].demoted or "")
    asked = parse("Which store ideas did ChatGPT suggest?", TODAY)
    assert chat_standings(results, asked, ("Chats",)) == {} and speaks_of_the_ai(asked, ("Chats",))
    assert chat_standings(results, parse("Did ChatGPT ever suggest a bakery?", TODAY), ("Chats",)) == {}
    followed = parse("ChatGPT proposed a second store. Did we ever open it?", TODAY)  # what we did: not in a chat
    assert set(chat_standings(results, followed, ("Chats",))) == set(chats)
    assert chat_standings(results, q, ("Elsewhere",)) == {}


def test_a_replaced_value_still_says_when_it_happened() -> None:
    """ "When did Crumb pass 30 stores?" and "did Crumb ever have 30 stores?": the note recording it answers,
    although a later count replaced it; "does Crumb still have 30 stores?" reads the replaced count as outdated."""
    passed = row("30 stores, first time", "2025-review.md", "2025-06-30", sup="41")
    when = parse("When did Crumb first pass 30 stores?", TODAY)
    assert standing(passed, when, None) == "states"
    assert standing(passed, parse("Did Crumb ever have 30 stores?", TODAY), None) == "states"
    assert standing(passed, parse("Does Crumb still have 30 stores?", TODAY), None) == "outdated"


def test_the_note_of_the_nearest_claim_leads_when_that_claim_says_what_happened() -> None:
    """ "When did the harbour store actually open?": the review whose claim is nearest the question, and a fact,
    goes first; a plan or a chat nearest the question, or a value question, moves nothing."""
    q = parse("Our 2025 plan said the harbour store opens in spring. When did it actually open?", TODAY)
    done = row("opened in October 2025", "review.md", "2025-11-01", attribute="harbour_opening", score=0.9)
    plan = row("spring 2025", "plan.md", "2025-01-01", attribute="harbour_opening", modality="plan", score=0.7)
    results = ranked("plan.md", "menu.md", "review.md")
    out = nearest_record_first(results, [plan, done], q, None, None, 20, ("ChatGPT",))
    assert [r.path for r in out] == ["review.md", "plan.md", "menu.md"]
    assert out[0].promoted == "states what happened (the claim nearest the question)"
    nearer_plan = {**plan, "score": 0.95}
    assert nearest_record_first(results, [nearer_plan, done], q, None, None, 20, ("ChatGPT",)) == results
    chat = {**done, "claim": {**done["claim"], "note_path": "ChatGPT/harbour.md"}}
    in_chat = ranked("plan.md", "ChatGPT/harbour.md")
    assert nearest_record_first(in_chat, [chat], q, None, None, 20, ("ChatGPT",)) == in_chat
    value = parse("How many stores does Crumb run now?", TODAY)
    assert nearest_record_first(results, [plan, done], value, None, None, 20, ("ChatGPT",)) == results
    replaced = {**done, "sup": [{"value": "closed in 2026", "as_of": "2026-03-01", "note_path": "x.md"}]}
    assert standing(replaced, q, None) == "states"  # it still says what happened then ...
    assert nearest_record_first(results, [plan, replaced], q, None, None, 20, ("ChatGPT",)) == results  # ... not first


def test_a_question_about_now_keeps_the_time_order_over_the_nearest_record() -> None:
    """ "Can we host their data in Germany now?": the nearest claim is the interview where they asked for it; the
    time order (the client page updated since) stands. The same question about the past still lifts the record."""
    now = parse("Do we host the bakery's data in Germany now?", TODAY)
    assert now.intent == "happened" and now.now
    asked = row("needs hosting in Germany", "interview.md", "2024-08-20", attribute="hosting", score=0.9)
    results = ranked("client.md", "interview.md", "menu.md")
    assert nearest_record_first(results, [asked], now, None, None, 20, ("ChatGPT",)) == results
    past = parse("Did we host the bakery's data in Germany in 2024?", TODAY)
    assert past.intent == "happened" and not past.now
    out = nearest_record_first(results, [asked], past, None, None, 20, ("ChatGPT",))
    assert [r.path for r in out] == ["interview.md", "client.md", "menu.md"]
