"""Text bound for a terminal: control characters from file names or note text shown, never obeyed."""

from __future__ import annotations

import re
from typing import Any, TextIO

# C0 controls but tab and newline, DEL, and C1 controls (0x9b is a one-byte CSI on many terminals)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with each control character written out as \\uXXXX (valid inside JSON strings too)."""
    return CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


class SafeStream:
    """A text stream wrapper that makes control characters visible before they reach the terminal."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(visible(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
