"""The vault's owner (the entity "we" and "our" stand for), told apart at build time, and the first-person
reading of questions (pure functions, no server)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from kb.extract.graph import OWNER_MIN_CLAIMS, mark_owner
from kb.search.question import parse


def entities(*keys: str, private: str = "") -> list[dict[str, Any]]:
    return [{"key": k, "private_only": k == private} for k in keys]


def claims(**per_entity: int) -> list[dict[str, Any]]:
    return [{"entity": k.replace("_", ":"), "props": {}} for k, n in per_entity.items() for _ in range(n)]


def owners(rows: list[dict[str, Any]]) -> list[str]:
    return [r["key"] for r in rows if r.get("owner")]


def test_the_entity_with_by_far_the_most_claims_is_the_owner() -> None:
    rows = entities("thing:bakery", "thing:mill", "person:ana")
    mark_owner(rows, claims(thing_bakery=40, thing_mill=12, person_ana=3))
    assert owners(rows) == ["thing:bakery"]


def test_no_owner_without_a_clear_lead_or_from_private_notes_only() -> None:
    close = entities("thing:bakery", "thing:mill")
    mark_owner(close, claims(thing_bakery=40, thing_mill=25))  # two businesses: "we" is not told apart
    assert owners(close) == []
    thin = entities("thing:bakery")
    mark_owner(thin, claims(thing_bakery=OWNER_MIN_CLAIMS - 1))
    assert owners(thin) == []
    hidden = entities("thing:bakery", "thing:mill", private="thing:bakery")
    mark_owner(hidden, claims(thing_bakery=40, thing_mill=2))
    assert owners(hidden) == []


def test_questions_that_speak_as_we() -> None:
    today = dt.date(2026, 12, 1)
    spoken = [
        "What was our ARR at the end of 2024?",
        "How many bakeries do we run now?",
        "Wie viel Cash hatten wir Ende 2025?",
        "Combien de clients avons-nous, et quel est notre prix ?",
        "我们现在有多少客户？",
    ]
    assert [parse(t, today).first_person for t in spoken] == [True] * 5
    others = ["How many stores does Crumb run?", "Who are they?", "Wie viele Filialen hat Crumb?", "Crumb 有多少家店？"]
    assert [parse(t, today).first_person for t in others] == [False] * 4
