"""Current-value-first rules, as pure functions (no server)."""

from __future__ import annotations

from typing import Any

from result_helpers import chunk, note, ranked

from kb.search.current import lead_claims, promote
from kb.search.question import parse


def row(
    value: str,
    path: str,
    date: str,
    *,
    current: bool = False,
    sup: bool = False,
    modality: str = "fact",
    entry: str = "thing:acme",
    attribute: str = "customer_count",
    valid: str | None = None,
) -> dict[str, Any]:
    return {
        "entry": entry,
        "asked": True,
        "chunk": f"{path}#1",
        "sup": [{"value": "x"}] if sup else [],
        "claim": {
            "attribute": attribute,
            "value": value,
            "note_path": path,
            "note_date": date,
            "valid_from": valid or date,
            "modality": modality,
            "is_current": current,
            "attr_stems": [attribute.split("_")[0]],
        },
    }


TIMELINE = [
    row("341", "dash.md", "2026-03-31", current=True),
    row("318", "q4.md", "2025-12-31", sup=True),
    row("133", "2023.md", "2023-12-31", sup=True),
    row("400", "plan.md", "2025-01-01", modality="plan"),
]


def test_which_questions_ask_for_a_value() -> None:
    assert parse("How many customers do we have now?").asks_for_state()
    assert parse("What did we charge in 2023?").asks_for_state()
    assert not parse("Why have customers churned over the years?").asks_for_state()
    assert parse("How has Acme's customer count changed?").intent == "change"
    assert parse("How did pricing evolve?").intent == "change" and parse("Who led the seed round?").intent != "change"
    period = parse("How many customers in 2024?").period
    assert period is not None and (period.start, period.end) == ("2024-01-01", "2024-12-31")
    assert parse("How many customers now, after 2024?").period is None  # "now" wins
    between = parse("Between 2023 and 2024?").period  # the span both dates name
    assert between is not None and (between.start, between.end) == ("2023-01-01", "2024-12-31")


def test_lead_claims_are_the_current_facts_or_the_latest_of_the_year() -> None:
    assert [r["claim"]["value"] for r in lead_claims(TIMELINE, {"thing:acme"}, {"customer"}, None, None)] == ["341"]
    assert [
        r["claim"]["value"] for r in lead_claims(TIMELINE, {"thing:acme"}, {"customer"}, "2023-01-01", "2023-12-31")
    ] == ["133"]
    assert lead_claims(TIMELINE, {"thing:other"}, {"customer"}, None, None) == []  # not the entity asked about
    assert lead_claims(TIMELINE, {"thing:acme"}, {"price"}, None, None) == []  # not the attribute asked about
    undisputed = [row("12", "a.md", "2024-01-01", current=True)]
    assert lead_claims(undisputed, {"thing:acme"}, {"customer"}, None, None) == []  # no history: nothing to reorder


def test_promote_moves_or_brings_in_the_lead_notes() -> None:
    results = ranked("2023.md", "q4.md", "dash.md")
    moved = promote(results, TIMELINE[:1], 3, "states the current value", lambda pairs: [])
    assert [r.path for r in moved] == ["dash.md", "2023.md", "q4.md"] and moved[0].promoted
    assert [r.rank for r in moved] == [1, 2, 3]
    fetched = promote(
        results[:2], TIMELINE[:1], 3, "why", lambda pairs: [note(p, 0, chunks=(chunk(c),)) for p, c in pairs]
    )
    assert [r.path for r in fetched] == ["dash.md", "2023.md"]  # brought in, the ranking keeps its length
    assert promote(results, TIMELINE[:1], 0, "off", lambda pairs: []) == results
