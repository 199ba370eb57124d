"""Word stems shared by the graph build and graph search: a claim's attribute is matched to a question by
its stems ("customers" asks for customer_count), computed once when the graph is built. English only: a
question in another language matches no stems, and the claim lines' vectors decide (search/rerank.py). No
synonym lists: an attribute asked for under another name is found by its line's vector."""

from __future__ import annotations

from collections.abc import Iterable

STOP = frozenset(
    "what when who how did does do is was were the a an of for to in on our we my has have "
    "and or it its this that with by at from change changed over time".split()
)
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


def attribute_stems(attribute: str) -> list[str]:
    """The stems that say what an attribute is about, sorted (stored on each claim)."""
    return sorted(stems(attribute.split("_")) - GENERIC_ATTR)
