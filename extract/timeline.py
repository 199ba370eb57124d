"""Claim timelines: per entity and attribute, ordered by note date; supersession, conflicts, plans."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from kb.words import value_key

FACTUAL = ("fact", "reported")


def written(claim: dict[str, Any]) -> str:
    """When a claim (its properties) was last written down: a running note's `updated` date, else its note date."""
    return str(max(claim.get("note_date") or "", claim.get("note_updated") or ""))


def _written(c: dict[str, Any]) -> str:
    return written(c["props"])


def _order(c: dict[str, Any]) -> tuple[str, str, str]:
    return (_written(c), str(c["props"].get("valid_from") or ""), c["props"]["id"])


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """One value, perhaps restated in other words (kb.words.value_key): a restatement replaces nothing."""
    return value_key(a["props"]["value"]) == value_key(b["props"]["value"])


def timelines(claims: list[dict[str, Any]]) -> dict[str, list[dict[str, str]]]:
    """Mark claims in place (is_current) and return SUPERSEDED_BY, CONFLICTS_WITH and FOLLOWED_BY edges.

    Only facts (and reported facts) supersede each other, by a later note date; two facts of the same
    note date that disagree conflict. A plan, opinion, hypothetical or AI suggestion never supersedes a fact;
    a plan is linked to the first later fact about the same attribute (FOLLOWED_BY: "planned X, then Y").
    """
    edges: dict[str, list[dict[str, str]]] = {"SUPERSEDED_BY": [], "CONFLICTS_WITH": [], "FOLLOWED_BY": []}
    keyed = sorted(claims, key=lambda c: (c["entity"], c["props"]["attribute"], _order(c)))
    for _, group in groupby(keyed, key=lambda c: (c["entity"], c["props"]["attribute"])):
        items = list(group)
        for c in items:
            c["props"]["is_current"] = False
        facts = [c for c in items if c["props"]["modality"] in FACTUAL]
        _facts(facts, edges)
        for plan in (c for c in items if c["props"]["modality"] == "plan"):
            later = sorted(
                (f for f in facts if _eff(f) > (plan["props"]["note_date"] or "")),
                key=lambda f: (_eff(f), f["props"]["id"]),
            )
            if later:  # what actually happened next
                edges["FOLLOWED_BY"].append({"a": plan["props"]["id"], "b": later[0]["props"]["id"]})
    for kind in edges:
        edges[kind].sort(key=lambda e: (e["a"], e["b"]))
    return edges


def _eff(c: dict[str, Any]) -> str:
    """When a value took effect: its valid_from if the note says, else the note's date."""
    return str(c["props"].get("valid_from") or c["props"].get("note_date") or "")


def _supersedes(b: dict[str, Any], a: dict[str, Any]) -> bool:
    """b replaces a: written later (or the same day about a later time), different value, not about an
    earlier period than a (a 2025 note recalling 2022 does not replace a 2024 value)."""
    if _same(a, b) or _eff(b) < _eff(a):
        return False
    da, db = _written(a), _written(b)
    return db > da or (db == da and _eff(b) > _eff(a))


def _facts(facts: list[dict[str, Any]], edges: dict[str, list[dict[str, str]]]) -> None:
    facts = sorted(facts, key=lambda c: (_written(c), _eff(c), c["props"]["id"]))
    for i, a in enumerate(facts):
        for b in facts[i + 1 :]:
            same_time = a["props"].get("note_date") == b["props"].get("note_date") and _eff(a) == _eff(b)
            if same_time and not _same(a, b):
                edges["CONFLICTS_WITH"].append({"a": a["props"]["id"], "b": b["props"]["id"]})
    superseded = set()
    for a in facts:
        newer = next((b for b in facts if b is not a and _supersedes(b, a)), None)
        if newer is not None:
            edges["SUPERSEDED_BY"].append({"a": a["props"]["id"], "b": newer["props"]["id"]})
            superseded.add(a["props"]["id"])
    live = [c for c in facts if c["props"]["id"] not in superseded]
    if live:
        latest = max(_eff(c) for c in live)
        now = {value_key(c["props"]["value"]) for c in live if _eff(c) == latest}
        for c in live:  # a restatement of the latest value is current too (the earlier note still says it)
            c["props"]["is_current"] = value_key(c["props"]["value"]) in now
