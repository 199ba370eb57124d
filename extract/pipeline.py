"""The one composition of a full refresh: structure, then embeddings, then the knowledge layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kb.config import Config
from kb.embeddings import EmbedStep
from kb.errors import EmbedderError
from kb.extract.errors import ExtractError
from kb.extract.report import KnowledgeReport
from kb.extract.run import Policy
from kb.extract.step import knowledge_step
from kb.progress import Bars
from kb.refresh import Summary, refresh
from kb.store import Store


@dataclass
class RefreshReport:
    """The structure summary, the embedding failure if any, and the knowledge report (None when skipped)."""

    summary: Summary
    knowledge: KnowledgeReport | None
    embed_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = self.summary.to_json()
        out["embed_error"] = self.embed_error
        out["knowledge"] = self.knowledge.to_json() if self.knowledge is not None else None
        return out

    def check(self) -> None:
        """Raise what failed, after the caller has shown what was built."""
        if self.embed_error:
            raise EmbedderError(f"structure and chunks are up to date, but embedding failed: {self.embed_error}")
        if self.knowledge is not None and self.knowledge.failed_run:
            raise ExtractError(f"the knowledge layer failed: {self.knowledge.message}")


def refresh_all(
    store: Store,
    cfg: Config,
    bars: Bars,
    embed: EmbedStep | None,
    policy: Policy | None,
    *,
    paid: bool = True,
    unmark_private: bool = False,
    rebuild_indexes: bool = False,
) -> RefreshReport:
    """Structure and chunks always; vectors with `embed`; the knowledge layer with `policy` (cached answers only
    unless `paid`). A failed embedding keeps the structure written and skips the claim-line vectors."""
    embed_error = None
    try:
        summary = refresh(store, cfg, bars, embed, unmark_private=unmark_private, rebuild_indexes=rebuild_indexes)
    except EmbedderError as exc:  # structure is already written: report it, then fail
        embed_error = str(exc)
        summary = refresh(
            store, cfg, Bars(quiet=True), None, unmark_private=unmark_private, rebuild_indexes=rebuild_indexes
        )
    line_embedder = embed.embedder if embed is not None and embed_error is None else None
    knowledge = None if policy is None else knowledge_step(store, cfg, policy, embedder=line_embedder, paid=paid)
    return RefreshReport(summary, knowledge, embed_error)
