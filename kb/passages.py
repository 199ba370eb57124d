"""Retrieval passages inside a chunk: overlapping windows of about 150 tokens that never cross the chunk's
boundary and, with the breadcrumb in front, fit the offline embedder's 256-word-piece window. Measured against
150/110 on the project's 21 sets over the shared vault (same run, vault rebuilt each time): 100/70 and 220/160 gave
hybrid recall@10 0.823 -> 0.815 / 0.820, MRR 0.687 -> 0.692 / 0.687, graph-mode current-first 0.712 -> 0.671 / 0.679.

Measured and not used: passages cut at the heading lines inside a chunk (a whole note of up to 1,500 tokens is one
chunk), sections packed while they fit 150 tokens, each passage embedded and full-text indexed under the headings it
stands under (`2026 Plan > 3. Product > 3.4 Quality`). Same run, 21 sets over the shared vault (609 scored
questions), against these windows: hybrid recall@10 0.837 -> 0.830, recall@20 0.913 -> 0.912, MRR 0.697 -> 0.700
(96 questions won, 95 lost), behind-naive cells 15 -> 17; graph mode current-first 0.739 -> 0.698 (9 won, 24 lost,
p = 0.014), MRR 0.733 -> 0.729."""

from __future__ import annotations

import bisect
import hashlib
import itertools
from dataclasses import dataclass
from functools import lru_cache

from kb.tokens import count_tokens_above, encoding

PASSAGE_TOKENS = 150  # cl100k tokens; MiniLM's word pieces run ~1.3x that, so breadcrumb + passage fit 256
STRIDE_TOKENS = 110  # the next window starts here: 40 tokens of overlap, so no sentence is only ever cut
SCHEME = f"passages {PASSAGE_TOKENS}/{STRIDE_TOKENS}"  # a graph cut otherwise re-derives every note's passages


@dataclass(frozen=True)
class Passage:
    id: str
    chunk_id: str
    ord: int
    text: str
    hash: str


def embed_text(note_path: str, breadcrumb: str, text: str) -> str:
    """What the embedder reads: the note's path (folder, dated file name), the headings, then the passage; the
    path measured better than the breadcrumb alone on the dev set (dense MRR 0.54 against 0.46)."""
    headings = breadcrumb.split(" > ", 1)[1] if " > " in breadcrumb else ""
    return f"{note_path}{' > ' + headings if headings else ''}\n{text}"


def passage_hash(note_path: str, breadcrumb: str, text: str) -> str:
    """What the passage's vector depends on: exactly the text the embedder reads."""
    return hashlib.sha256(embed_text(note_path, breadcrumb, text).encode()).hexdigest()


def windows(text: str, size: int = PASSAGE_TOKENS, stride: int = STRIDE_TOKENS) -> list[str]:
    """The text whole when it fits `size` tokens, else word-aligned windows of at most `size` tokens every
    `stride` tokens; the last window ends at the text's end. Each window takes as many words as fit (at least
    one) and the next starts after as many as fit `stride` (at least one word on, never past the window's last word)."""
    words = text.split()
    if count_tokens_above(text, size, len(words)) <= size:
        return [text]
    # sums of word costs, searched by bisection: the same windows as a walk word by word, a third less time
    sums = list(itertools.accumulate(map(_word_cost, words), initial=0))
    out: list[str] = []
    start = 0
    while start < len(words):
        end = max(bisect.bisect_right(sums, sums[start] + size, start) - 1, start + 1)
        out.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        nxt = min(bisect.bisect_right(sums, sums[start] + stride, start) - 1, end - 1)
        start = max(nxt, start + 1)
    return out


@lru_cache(maxsize=200_000)
def _word_cost(word: str) -> int:
    """Tokens of one word after a space; words repeat, so a cache spares most encoder calls."""
    return len(encoding().encode_ordinary(" " + word))


def passages(chunk_id: str, note_path: str, breadcrumb: str, text: str) -> list[Passage]:
    """The passages of one chunk, in reading order; ids are the chunk's id and the window's number."""
    return [
        Passage(f"{chunk_id}:{n}", chunk_id, n, w, passage_hash(note_path, breadcrumb, w))
        for n, w in enumerate(windows(text))
    ]
