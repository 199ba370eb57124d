"""The rule-based router behind `--mode auto`: graph for change, chains, decisions, plan-vs-fact and paths;
hybrid for everything else. No LLM call; the choice and its reason are returned with the result. It reads the
typed question (intent and dates, in any language the question rules read); the English phrase rules below
add the shapes no intent covers and apply to English questions only."""

from __future__ import annotations

import re

from kb.search.question import Question, parse

INTENT_REASONS = {
    "change": "how something changed",
    "happened": "whether something happened (plan versus fact)",
    "path": "a path between two things",
}

GRAPH_RULES: tuple[tuple[str, str], ...] = (
    (r"\bhow (has|have|did|do(es)?)\b.*\b(change|chang(ed|ing)|evolv|grow|grew|drop|move)", "how something changed"),
    (
        r"\b(over time|history of|timeline|since when|anymore|still|latest|currently|now|today|these days|"
        r"most recent|as of)\b",
        "time and current value",
    ),
    (
        r"\b(chatgpt|ai|claude|gpt)('s)? (suggest|recommend|propos|idea)|\b(suggested|recommended) by\b",
        "an AI suggestion versus what was done",
    ),
    (r"\b(in|during|by|at the end of) (19|20)\d\d\b", "a value at a given time"),
    (r"\b(before|after) (the|we|it)\b|\bin (19|20)\d\d\b.*\b(later|now|today)\b", "before and after"),
    (r"\bwho (introduced|referred|connected)\b|\bintroduc", "introductions (a chain of people)"),
    (r"\b(led to|lead to|consequence|result(ed)? in|because of|what happened after)\b", "consequences"),
    (r"\bwhy did (we|i|they)\b|\bdecision\b|\bdecid", "decisions and their reasons"),
    (
        r"\b(plan(ned)?|planning|intended|supposed to|was going to|target(ed)?)\b.*\b(happen|actually|did|really)\b",
        "plan versus what happened",
    ),
    (r"\b(actually|really) (happen|launch|open|hire|sign)", "plan versus what happened"),
    (r"\b(connection|connected|path|link) (between|from)\b", "a path between two things"),
    (r"\bwhich clients\b|\bwho (funded|invested|built|hired)\b", "a relationship the question names"),
)


def route(question: str | Question, as_of: str | None = None, current: bool = False) -> tuple[str, str]:
    """("graph" | "hybrid", reason)."""
    q = question if isinstance(question, Question) else parse(question)
    if as_of or current:
        return "graph", "claims as of a date" if as_of else "current claims only"
    if q.intent in INTENT_REASONS:
        return "graph", INTENT_REASONS[q.intent]
    if q.intent == "value" and (q.now or q.ranges):
        return "graph", f"a value {'now' if q.now else 'at a given time'} ({q.lang})"
    if q.lang == "en":
        low = q.text.lower()
        for pattern, reason in GRAPH_RULES:
            if re.search(pattern, low):
                return "graph", reason
    return "hybrid", "a single fact, roll-up, theme or paraphrase: hybrid search answers it"
