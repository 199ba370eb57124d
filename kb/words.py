"""Word stems shared by the graph build and graph search: a claim's attribute is matched to a question by
its stems ("customers" asks for customer_count), computed once when the graph is built. English only: a
question in another language matches no stems, and the claim lines' vectors decide (search/rerank.py). No
synonym lists: an attribute asked for under another name is found by its line's vector, one written as an
abbreviation ("nrr") by the initials of the words the question spells it out with ("net revenue retention").

Measured and not used: Snowball's English stemmer (Porter2) for the question's and the attributes' stems, so
"processing" meets meeting_hours_processed and "hiring" meets hires. On the project's 24 sets over the shared vault,
graph mode against these stems in the same build: current-first 0.731 -> 0.719 (2 questions won, 7 lost), MRR 0.741
-> 0.736, key facts within 8k 0.854 -> 0.849: more attributes match a question ("customer" and "custom" are one
stem), and their timelines pin lines and lift notes that are not the answer."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

STOP = frozenset(
    "what when who how did does do is was were the a an of for to in on our we my has have "
    "and or it its this that with by at from change changed over time "
    # small words a question and an attribute share without being about the same thing ("price per seat"
    # asked for every *_per_month timeline; "how many" for any *_many)
    "per many much than into about each are which there".split()
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


def initialisms(words: Sequence[str], stop: Iterable[str] = ()) -> set[str]:
    """The initials of each run of 3 or 4 consecutive words, none a question word, one of `stop` or a number
    ("annual recurring revenue" gives arr): a claim attribute written as an abbreviation is asked for by its
    words spelt out (the embedder does not know that nrr is net revenue retention)."""
    skip = STOP | set(stop)
    runs: list[list[str]] = [[]]
    for w in words:
        w = w.lower()
        if w.isalpha() and w.isascii() and w not in skip:
            runs[-1].append(w)
        elif runs[-1]:
            runs.append([])
    return {
        "".join(w[0] for w in run[i : i + size]) for run in runs for size in (3, 4) for i in range(len(run) - size + 1)
    }


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def value_key(value: object) -> str:
    """What a claim's value says, for telling a new value from a restatement: its numbers in order when it has
    any ("6% (from 14%)" and "6% (from 14%) over six quarters" are one value, "68%" and "68% (half rolled out)"
    too), else its words, case-folded."""
    s = str(value or "").casefold()
    numbers = [n.replace(",", "") for n in NUMBER.findall(s)]
    return "|".join(numbers) if numbers else " ".join(s.split())
