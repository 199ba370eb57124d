"""Word stems shared by the graph build and graph search: a claim's attribute is matched to a question by
its stems ("customers" asks for customer_count), computed once when the graph is built."""

from __future__ import annotations

import re
from typing import Iterable

STOP = frozenset("what when who how did does do is was were the a an of for to in on our we my has have "
                 "and or it its this that with by at from change changed over time".split())
# attribute words too general to say what a claim is about on their own
GENERIC_ATTR = frozenset("count date status amount value number rate total name type level share".split())


def stems(words: Iterable[str]) -> set[str]:
    """Lower-cased words without a plural s, minus question words and words under 3 letters."""
    out = set()
    for w in words:
        w = w.lower()
        if w in STOP or len(w) < 3:
            continue
        out.add(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return out


# question words that ask for an attribute under another name ("what do we charge" asks for price_*)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "charge": ("price", "pricing"), "cost": ("price", "pricing"), "pay": ("price",),
    "employee": ("headcount",), "staff": ("headcount",), "revenue": ("arr", "mrr"),
    "salary": ("compensation",),
}


def question_stems(question: str) -> set[str]:
    """A question's stems with the attribute words their synonyms stand for."""
    base = stems(re.findall(r"\w+", question))
    return base | {alt for s in base for alt in SYNONYMS.get(s, ())}


def attribute_stems(attribute: str) -> list[str]:
    """The stems that say what an attribute is about, sorted (stored on each claim)."""
    return sorted(stems(attribute.split("_")) - GENERIC_ATTR)
