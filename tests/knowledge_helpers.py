"""Helpers for knowledge-layer tests: chunks without a database, and a stand-in that replays recorded answers."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kb.chunker import chunk_note
from kb.extract.audit import AUDIT, RETYPE
from kb.extract.cache import ExtractionCache, cache_key
from kb.extract.dedupe import ACCEPT, CONFIRM
from kb.extract.prompt import PROMPT_VERSION, TRIAGE_SYSTEM, TRIAGE_VERSION
from kb.vault import parse_note, scan_vault

RECORDED = Path(__file__).resolve().parents[1] / "examples" / "vault" / ".kb" / "extract-cache"
MODEL = "claude-haiku-5-5"  # kb's default extractor model
RECORDED_MODEL = "claude-haiku-4-5"  # the model the example vault's shipped extraction was recorded with
PASSAGE = re.compile(r"Section: (?P<crumb>.*?)\n<passage>\n(?P<text>.*)\n</passage>\Z", re.S)


def vault_chunks(vault: Path, private: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Chunks as the knowledge step reads them from the graph, built straight from the files."""
    out = []
    for vf in scan_vault(vault).notes:
        note = parse_note(vf, private)
        for c in chunk_note(note):
            out.append(
                {
                    "id": c.id,
                    "text": c.text,
                    "breadcrumb": c.breadcrumb,
                    "path": note.path,
                    "date": c.date,
                    "folder": note.folder,
                    "private": note.private,
                    "ord": c.ord,
                }
            )
    return sorted(out, key=lambda c: c["id"])


def user_text(body: dict[str, Any]) -> str:
    """The user message of an Anthropic or Ollama chat request."""
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def system_text(body: dict[str, Any]) -> str:
    if "system" in body:
        return str(body["system"])
    return str(next((m["content"] for m in body["messages"] if m["role"] == "system"), ""))


# What the recorded extractor "decides" in the checks nothing was recorded for: keep every link, merge nothing.
CHECKS: dict[str, dict[str, Any]] = {
    ACCEPT: {"same": False, "reason": "two things"},
    CONFIRM: {"same": False, "reason": "two things"},
    AUDIT: {"verdict": "keep", "reason": "the phrase states it"},
    RETYPE: {"types": []},
}


def replay(cache_dir: Path = RECORDED) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A responder that answers as the recorded extractor did, found by the same cache key."""
    recorded = ExtractionCache(cache_dir)

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        message = user_text(body)
        if system_text(body) in CHECKS:
            return CHECKS[system_text(body)]
        if system_text(body) == TRIAGE_SYSTEM:
            entry = recorded.get(cache_key(RECORDED_MODEL, TRIAGE_VERSION, message))
            return entry["result"] if entry else {"keep": True, "reason": "no recorded decision"}
        m = PASSAGE.search(message)
        assert m, message[:200]
        entry = recorded.get(cache_key(RECORDED_MODEL, PROMPT_VERSION, f"{m['crumb']}\n{m['text']}"))
        return entry["result"] if entry else {"entities": [], "relationships": [], "claims": []}

    return respond
