"""The typed knowledge report writes today's `knowledge` JSON exactly."""

from __future__ import annotations

import json

from kb.extract.cost import Estimate
from kb.extract.report import KnowledgeReport, outcome_head
from kb.extract.run import Outcome


def test_report_json_is_pinned() -> None:
    est = Estimate("claude-x", batch=True)
    est.add("Projects", 1200, 300, 0.012345)
    out = Outcome(model="claude-x", cached=3, extracted=2, failed=[{"path": "a.md", "error": "refused"}])
    out.status, out.message, out.estimate, out.repairs = "partial", "1 chunk failed", est, 1
    out.triage = [{"path": "ChatGPT/x.md", "keep": False, "reason": "small talk"}]
    report = KnowledgeReport.of(out, {"entities": 4}, rebuilt=True)
    assert json.dumps(report.to_json()) == json.dumps(  # the key order too
        {
            "status": "partial",
            "message": "1 chunk failed",
            "model": "claude-x",
            "cached": 3,
            "extracted": 2,
            "failed": [{"path": "a.md", "error": "refused"}],
            "skipped_private": 0,
            "not_extracted": 0,
            "triage": [{"path": "ChatGPT/x.md", "keep": False, "reason": "small talk"}],
            "repairs": 1,
            "rebuilt": True,
            "counts": {"entities": 4},
            "dedupe": [],
            "audit": [],
            "retyped": [],
            "batches": {},
            "estimate": {
                "usd": 0.0123,
                "calls": 1,
                "batch": True,
                "per_folder": {"Projects": {"calls": 1, "input_tokens": 1200, "output_tokens": 300, "usd": 0.012345}},
                "lines": est.lines(),
            },
            "checks_estimate": None,
        }
    )
    assert list(report.to_json())[:7] == list(outcome_head(out)) and not report.failed_run
