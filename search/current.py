"""Current value first: when a question asks about an attribute of an entity it names and the graph holds a
history for it (superseded values, plans, suggestions), the notes that state the value valid now (or in the
one year the question names) move to the top of the ranking, ahead of notes with outdated values."""

from __future__ import annotations

import re
from typing import Any, Callable

FACTUAL = ("fact", "reported")
YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
_NOW_WORDS = r"current(ly)?|now|today|latest|most recent|these days|still"
NOW = re.compile(rf"\b({_NOW_WORDS}|anymore)\b", re.IGNORECASE)
WHY = re.compile(r"\bwhy\b", re.IGNORECASE)
VALUE = re.compile(rf"\b(how (many|much)|what (is|are|was|were|does|do)|what's|{_NOW_WORDS})\b", re.IGNORECASE)
CHANGE = re.compile(r"\b(chang\w*|evolv\w*|over time|history|grown|grew|went from)\b", re.IGNORECASE)


def asks_about_change(question: str) -> bool:
    """"How has X changed?": the whole history is the answer (and its current value comes first)."""
    return CHANGE.search(question) is not None


def asks_for_value(question: str, named: bool = True) -> bool:
    """Whether the question asks for a value (how many, what is, ... now, in a year, or, about an entity it
    names, how the value changed); a why-question asks for reasons and keeps hybrid's order."""
    if WHY.search(question) is not None:
        return False
    return bool(VALUE.search(question) or asked_year(question) or (named and asks_about_change(question)))


def asked_year(question: str) -> str | None:
    """The one year a question is about ("in 2024"), unless it also asks for the value now."""
    years = sorted(set(YEAR.findall(question)))
    return years[0] if len(years) == 1 and not NOW.search(question) else None


def _when(claim: dict[str, Any]) -> str:
    return str(claim.get("valid_from") or claim.get("note_date") or "")


def lead_claims(claims: list[dict[str, Any]], named: set[str], asked: set[str],
                year: str | None) -> list[dict[str, Any]]:
    """Per timeline of a named entity whose attribute the question asks for in full (every stem of
    customer_count, not just one of enterprise_definition) and that has a history: its current facts, or with
    a year, the latest facts valid in that year."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in claims:
        stems = set(row["claim"].get("attr_stems") or [])
        if row["asked"] and row["entry"] in named and stems and stems <= asked:
            groups.setdefault((row["entry"], row["claim"]["attribute"]), []).append(row)
    leads = []
    for key in sorted(groups):
        rows = groups[key]
        if not any(r["sup"] or r["claim"]["modality"] not in FACTUAL for r in rows):
            continue  # one undisputed value: nothing outdated to keep below it
        facts = [r for r in rows if r["claim"]["modality"] in FACTUAL]
        if year:
            facts = [r for r in facts if _when(r["claim"]).startswith(year)]
            latest = max((_when(r["claim"]) for r in facts), default="")
            leads += [r for r in facts if _when(r["claim"]) == latest]
        else:
            leads += [r for r in facts if r["claim"].get("is_current")]
    return leads


def promote(results: list[dict[str, Any]], leads: list[dict[str, Any]], limit: int, reason: str,
            fetch: Callable[[list[tuple[str, str]]], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Lead notes first (newest note first, at most `limit`), then the others in their hybrid order; a lead
    note outside the results comes in with the chunk that states the value (`fetch` builds it)."""
    if not leads or limit <= 0:
        return results
    by_note: dict[str, str] = {}
    for r in sorted(leads, key=lambda r: (str(r["claim"].get("note_date") or ""), r["claim"]["note_path"]),
                    reverse=True):
        by_note.setdefault(r["claim"]["note_path"], r.get("chunk") or "")
    first = list(by_note.items())[:limit]
    present = {r["path"]: r for r in results}
    missing = fetch([(p, c) for p, c in first if p not in present and c])
    added = {r["path"]: r for r in missing}
    top = [{**(present.get(p) or added[p]), "promoted": reason}
           for p, _ in first if p in present or p in added]
    moved = {r["path"] for r in top}
    out = top + [r for r in results if r["path"] not in moved]
    return [{**r, "rank": n} for n, r in enumerate(out[:len(results) or len(out)], start=1)]
