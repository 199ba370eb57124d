"""Claim timelines: per entity and attribute, ordered by note date; supersession, conflicts, plans."""

from __future__ import annotations

from itertools import groupby
from typing import Any

FACTUAL = ("fact", "reported")


def _order(c: dict[str, Any]) -> tuple[str, str, str]:
    p = c["props"]
    return (p.get("note_date") or "", p.get("valid_from") or "", p["id"])


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return " ".join(a["props"]["value"].casefold().split()) == " ".join(b["props"]["value"].casefold().split())


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
            later = [f for f in facts if (f["props"]["note_date"] or "") > (plan["props"]["note_date"] or "")]
            if later:
                edges["FOLLOWED_BY"].append({"a": plan["props"]["id"], "b": later[0]["props"]["id"]})
    for kind in edges:
        edges[kind].sort(key=lambda e: (e["a"], e["b"]))
    return edges


def _facts(facts: list[dict[str, Any]], edges: dict[str, list[dict[str, str]]]) -> None:
    by_date = [list(g) for _, g in groupby(facts, key=lambda c: c["props"]["note_date"] or "")]
    for same_day in by_date:
        for i, a in enumerate(same_day):
            for b in same_day[i + 1:]:
                if not _same(a, b):
                    edges["CONFLICTS_WITH"].append({"a": a["props"]["id"], "b": b["props"]["id"]})
    for earlier, later in zip(by_date, by_date[1:]):
        for old in earlier:
            newer = next((n for n in later if not _same(old, n)), None)
            if newer is not None:
                edges["SUPERSEDED_BY"].append({"a": old["props"]["id"], "b": newer["props"]["id"]})
    if by_date:  # the newest date's values are current unless a newer different value superseded them
        for c in by_date[-1]:
            c["props"]["is_current"] = True
        for older in by_date[:-1]:
            for c in older:
                if all(_same(c, n) for n in by_date[-1]):
                    c["props"]["is_current"] = False
