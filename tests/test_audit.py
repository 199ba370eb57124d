"""The cached audit of single-evidence links and `kb retype`, through the stand-in API."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from anthropic_standin import ChatStandIn
from knowledge_helpers import MODEL, system_text, user_text

from kb.extract.audit import AUDIT, Checker
from kb.extract.backends import AnthropicExtractor
from kb.extract.cache import ExtractionCache


def rel(src: str, tgt: str, evidence: str, count: int = 1, private: bool = False) -> dict[str, Any]:
    return {
        "source": src,
        "target": tgt,
        "props": {"count": count, "evidence": [evidence], "public_evidence": [] if private else [evidence]},
    }


RELS = {
    "INVESTED_IN": [
        rel("kestrel", "lumen", "Kestrel put in £900k"),
        rel("ana", "oskar", "they had lunch"),
        rel("ingrid", "lumen", "Ingrid put £50k in", count=2),
        rel("tobias", "lumen", "private words", private=True),
    ],
    "RELATED_TO": [rel("harrow", "books", "Harrow Freight pays for Lumen Books")],
}
NAMES = {
    "kestrel": "Kestrel Capital",
    "lumen": "Lumen Ledger Ltd",
    "ana": "Ana",
    "oskar": "Oskar Lind",
    "ingrid": "Ingrid Solberg",
    "harrow": "Harrow Freight",
    "books": "Lumen Books",
    "tobias": "Tobias",
}


def answer(body: dict[str, Any]) -> dict[str, Any]:
    if system_text(body) == AUDIT:
        supported = "£900k" in user_text(body)
        return {"verdict": "keep" if supported else "drop", "reason": "the phrase says it" if supported else "no"}
    return {"types": [{"i": 0, "type": "CLIENT_OF"}]}


def test_audit_then_retype_then_only_cached_decisions(tmp_path: Path) -> None:
    rels = copy.deepcopy(RELS)
    with ChatStandIn(answer) as standin:
        ext = AnthropicExtractor(MODEL, "test-key", standin.base_url, backoff=0.01)
        checker = Checker(MODEL, ExtractionCache(tmp_path), ext)
        audit = checker.audit(rels, NAMES, remote=True)
        retyped = checker.retype(rels, NAMES, remote=True, ask=True)
        sent = standin.sent_text()
        calls = len(standin.requests)
    pairs = {(r["source"], r["target"]) for r in rels["INVESTED_IN"]}
    assert pairs == {("kestrel", "lumen"), ("ingrid", "lumen"), ("tobias", "lumen")}  # lunch dropped
    assert {a["verdict"] for a in audit} == {"keep", "drop"} and calls == 3  # two audits, one retype batch
    assert "private words" not in sent and "Ingrid put £50k" not in sent  # private and multi-evidence: not asked
    assert retyped == [
        {"link": 'Harrow Freight -RELATED_TO-> Lumen Books: "Harrow Freight pays for Lumen Books"', "type": "CLIENT_OF"}
    ]
    assert rels["RELATED_TO"] == [] and rels["CLIENT_OF"][0]["source"] == "harrow"
    again = copy.deepcopy(RELS)
    offline = Checker(MODEL, ExtractionCache(tmp_path), None)
    offline.audit(again, NAMES, remote=True)
    offline.retype(again, NAMES, remote=True, ask=False)
    assert offline.calls == 0 and again == rels
