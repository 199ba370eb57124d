"""What a knowledge step or rebuild did, typed; `to_json()` is the `knowledge` object of `kb refresh --json`."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from kb.extract.cost import Estimate
from kb.extract.run import Outcome


@dataclass
class KnowledgeReport:
    """One run of the knowledge layer: what was read from the cache, sent, failed, and what the layer holds."""

    status: str
    message: str
    model: str
    cached: int = 0
    extracted: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    skipped_private: int = 0
    not_extracted: int = 0
    triage: list[dict[str, Any]] = field(default_factory=list)
    repairs: int = 0
    rebuilt: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    dedupe: list[dict[str, Any]] = field(default_factory=list)
    audit: list[dict[str, str]] = field(default_factory=list)
    retyped: list[dict[str, str]] = field(default_factory=list)
    batches: dict[str, Any] = field(default_factory=dict)
    estimate: Estimate | None = None
    checks_estimate: Estimate | None = None

    @classmethod
    def of(cls, out: Outcome, counts: dict[str, int], rebuilt: bool) -> KnowledgeReport:
        """The report of a run: the Outcome's fields of the same name, plus what the layer holds now."""
        same = {f.name: getattr(out, f.name) for f in fields(cls) if hasattr(out, f.name)}
        return cls(**same, rebuilt=rebuilt, counts=counts, checks_estimate=out.checks)

    @property
    def failed_run(self) -> bool:
        return self.status == "failed"

    def to_json(self) -> dict[str, Any]:
        """Every field in declaration order (the JSON's key order), the estimates as their summaries."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["estimate"], out["checks_estimate"] = estimate_json(self.estimate), estimate_json(self.checks_estimate)
        return out


def outcome_head(out: Outcome | KnowledgeReport) -> dict[str, Any]:
    """What every JSON report of an extraction run starts with: its status and what was read, sent, failed."""
    return {
        "status": out.status,
        "message": out.message,
        "model": out.model,
        "cached": out.cached,
        "extracted": out.extracted,
        "failed": out.failed,
        "skipped_private": out.skipped_private,
    }


def estimate_json(est: Estimate | None) -> dict[str, Any] | None:
    if est is None:
        return None
    return {
        "usd": round(est.total_usd, 4),
        "calls": est.calls,
        "batch": est.batch,
        "per_folder": est.per_folder,
        "lines": est.lines(),
    }
