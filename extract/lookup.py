"""Finding entities by what a person or agent types: names and aliases, with the capitals rule."""

from __future__ import annotations

from typing import Any

PRONOUNS = frozenset(
    "i me my mine we us our you your he him his she her hers it its they them their "
    "this that these those who whom".split()
)


def matches(query: str, entity: dict[str, Any]) -> bool:
    """The name matches case-insensitively; a one-word alias must match with its capitals ("HIS", not "his")."""
    q = query.strip()
    if q.casefold() in PRONOUNS and not any(a == q for a in entity.get("aliases", [])) and entity["name"] != q:
        return False
    if entity["name"].casefold() == q.casefold():
        return True
    for alias in entity.get("aliases", []):
        if len(alias.split()) == 1 and alias == q:
            return True
        if len(alias.split()) > 1 and alias.casefold() == q.casefold():
            return True
    return False


def pick(query: str, candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in candidates if matches(query, e)]
