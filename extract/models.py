"""The extractor's structured output (pydantic), its JSON schema, and repair of quotes against the chunk."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kb.vocabulary import RelType

# Spelled out for the type checker; a test checks they (and kb.vocabulary's RelType) equal extract/schema.py's tables.
EntityType = Literal[
    "Person", "Organization", "Product", "Project", "Concept", "Event", "Location", "Document", "Decision", "Lesson"
]
Modality = Literal["fact", "reported", "plan", "opinion", "hypothetical", "ai_suggestion"]
DATE = r"^\d{4}(-\d{2}(-\d{2})?)?$"


class Entity(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=120)
    type: EntityType
    aliases: list[str] = Field(default_factory=list, max_length=8)


class Relationship(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    type: RelType
    evidence: str = Field(min_length=1, max_length=400, description="exact phrase from the text")
    modality: Modality


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entity: str = Field(min_length=1)
    attribute: str = Field(min_length=1, max_length=60, description="snake_case, e.g. customer_count")
    value: str = Field(min_length=1, max_length=200)
    quote: str = Field(min_length=1, max_length=400, description="exact substring of the text")
    modality: Modality
    valid_from: str | None = Field(default=None, pattern=DATE)
    valid_to: str | None = Field(default=None, pattern=DATE)


class Extraction(BaseModel):
    """Everything one chunk says, as the extractor returns it."""

    model_config = ConfigDict(extra="forbid")
    entities: list[Entity] = Field(default_factory=list)
    relationships: list[Relationship] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)


class Triage(BaseModel):
    """The cheap per-conversation decision for saved AI chats."""

    model_config = ConfigDict(extra="forbid")
    keep: bool
    reason: str = Field(min_length=1, max_length=300)


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A self-contained JSON schema (no $refs) for structured-output APIs."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].split("/")[-1]])
            return {k: inline(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)  # type: ignore[no-any-return]


def find_exact(phrase: str, text: str) -> str | None:
    """The phrase as it occurs in text, allowing only whitespace and quote-mark differences; else None."""
    if phrase in text:
        return phrase
    words = [re.escape(w) for w in re.split(r"\s+", _plain_quotes(phrase).strip()) if w]
    if not words:
        return None
    m = re.search(r"\s+".join(words), _plain_quotes(text))
    return text[m.start() : m.end()] if m else None


def _plain_quotes(text: str) -> str:
    return text.translate(str.maketrans("\u2018\u2019\u201c\u201d", "''\"\""))


def repair(extraction: Extraction, text: str) -> tuple[Extraction, list[str]]:
    """Keep only what the chunk supports: quotes and evidence made exact or dropped; dangling links dropped."""
    notes: list[str] = []
    names = {e.name for e in extraction.entities} | {a for e in extraction.entities for a in e.aliases}
    claims = []
    for c in extraction.claims:
        exact = find_exact(c.quote, text)
        if exact is None or c.entity not in names:
            notes.append(
                f"dropped claim {c.entity}.{c.attribute}: "
                + ("quote not in the chunk" if exact is None else "entity not extracted")
            )
            continue
        claims.append(c.model_copy(update={"quote": exact}))
    rels = []
    for r in extraction.relationships:
        exact = find_exact(r.evidence, text)
        if exact is None or r.source not in names or r.target not in names or r.source == r.target:
            notes.append(
                f"dropped {r.source} -{r.type}-> {r.target}: "
                + ("evidence not in the chunk" if exact is None else "endpoint not extracted")
            )
            continue
        rels.append(r.model_copy(update={"evidence": exact}))
    return Extraction(entities=extraction.entities, relationships=rels, claims=claims), notes
