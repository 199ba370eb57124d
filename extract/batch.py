"""The Message Batches API (half price): submit uncached calls, collect finished results into the cache.

Kill-safe at every step: an intent file (the custom_ids and what each one is) is written durably before the
batch is created and gets the batch id right after; results are cached one by one before the state file goes.
A batch created by a run killed before it wrote the id is found again by its request count and creation
time. custom_id is the cache key, so nothing is ever submitted twice while a batch holds it, and an expired or
errored request (no cache entry) is simply submitted again by the next run.
https://platform.claude.com/docs/en/build-with-claude/batch-processing"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from kb.extract.backends import AnthropicExtractor, parse_message
from kb.extract.cache import ExtractionCache
from kb.extract.errors import ExtractError, FatalExtractError

MAX_REQUESTS = 10_000  # per batch; the API takes up to 100,000 (or 256 MB), smaller batches end sooner


@dataclass
class Collected:
    """What one collection found."""

    stored: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    resubmit: int = 0  # expired, canceled or errored: submitted again
    waiting: list[str] = field(default_factory=list)  # batch ids still in progress
    done: list[str] = field(default_factory=list)


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        os.write(fd, json.dumps(data, indent=1, sort_keys=True).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


class BatchQueue:
    """Batches in flight for one cache folder (state files in `<cache>/batches/`)."""

    def __init__(self, cache: ExtractionCache, extractor: AnthropicExtractor) -> None:
        self.cache, self.extractor = cache, extractor
        self.folder = cache.folder / "batches"

    def states(self) -> list[tuple[Path, dict[str, Any]]]:
        if not self.folder.is_dir():
            return []
        out = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                out.append((path, json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, json.JSONDecodeError):
                path.unlink(missing_ok=True)  # a half-written intent: its batch was never created
        return out

    def waiting_keys(self) -> set[str]:
        """Cache keys some batch in flight will answer."""
        return {k for _, s in self.states() for k in s["jobs"]}

    def submit(self, jobs: list[dict[str, Any]]) -> list[str]:
        """Create batches for `jobs` ({key, kind, version, system, message, schema, source}); their ids."""
        ids = []
        for start in range(0, len(jobs), MAX_REQUESTS):
            part = jobs[start : start + MAX_REQUESTS]
            path = self.folder / f"{int(time.time() * 1000)}-{part[0]['key'][:12]}.json"
            state = {
                "id": None,
                "intent_at": time.time(),
                "model": self.extractor.model,
                "jobs": {j["key"]: {k: j[k] for k in ("kind", "version", "source")} for j in part},
            }
            _write(path, state)
            requests = [
                {"custom_id": j["key"], "params": self.extractor.params(j["system"], j["message"], j["schema"])}
                for j in part
            ]
            batch = self.extractor.call(
                lambda: self.extractor.client.messages.batches.create(requests=requests)  # type: ignore[arg-type]  # noqa: B023 - run now
            )
            _write(path, {**state, "id": batch.id})
            ids.append(str(batch.id))
        return ids

    def collect(self, models: dict[str, type[BaseModel]]) -> Collected:
        """Store the results of every ended batch; batches still running are left for the next run."""
        out = Collected()
        for path, state in self.states():
            batch_id = state["id"] or self._adopt(state)
            if batch_id is None:
                path.unlink(missing_ok=True)  # never created: its requests are submitted again
                continue
            try:
                batch = self.extractor.call(  # the call runs within this iteration
                    lambda: self.extractor.client.messages.batches.retrieve(batch_id)  # noqa: B023
                )
            except FatalExtractError:
                raise
            except ExtractError:
                out.waiting.append(batch_id)  # not reachable now: try again next run
                continue
            if batch.processing_status != "ended":
                out.waiting.append(batch_id)
                continue
            self._store(batch_id, state, models, out)
            path.unlink(missing_ok=True)
            out.done.append(batch_id)
        return out

    def _adopt(self, state: dict[str, Any]) -> str | None:
        """The batch a killed run created but never recorded: same request count, created after the intent."""
        claimed = {s["id"] for _, s in self.states() if s["id"]}
        page = self.extractor.call(lambda: self.extractor.client.messages.batches.list(limit=20))
        for b in page.data:
            counts = b.request_counts
            total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            if (
                b.id not in claimed
                and total == len(state["jobs"])
                and b.created_at.timestamp() >= state["intent_at"] - 120
            ):
                return str(b.id)
        return None

    def _store(self, batch_id: str, state: dict[str, Any], models: dict[str, type[BaseModel]], out: Collected) -> None:
        results = self.extractor.call(lambda: list(self.extractor.client.messages.batches.results(batch_id)))
        for item in results:
            job = state["jobs"].get(item.custom_id)
            if job is None:
                continue
            if item.result.type != "succeeded":
                out.resubmit += 1
                continue
            msg = item.result.message
            try:
                raw, usage = parse_message(self.extractor.model, self.extractor.max_tokens, msg)
                result = models[job["kind"]].model_validate(raw).model_dump()
            except (ExtractError, ValidationError) as exc:
                out.failed.append(
                    {
                        "path": job["source"].get("path", ""),
                        "key": item.custom_id,
                        "error": str(exc).splitlines()[0][:200],
                    }
                )
                continue
            self.cache.put(
                item.custom_id,
                {
                    "kind": job["kind"],
                    "model": self.extractor.model,
                    "source": job["source"],
                    "result": result,
                    "batch": batch_id,
                    "prompt_version": job["version"],
                    "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
                },
            )
            out.stored += 1
