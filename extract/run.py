"""The extraction run: cache first, privacy and triage, a cost check, then parallel calls, each durable."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from kb.config import DEFAULT_EXTRACTOR, in_folder
from kb.errors import ConfigError
from kb.extract.backends import AnthropicExtractor, Extractor
from kb.extract.batch import BatchQueue
from kb.extract.cache import ExtractionCache, cache_key
from kb.extract.cost import Call, Estimate, check, estimate
from kb.extract.errors import ExtractError, FatalExtractError, InvalidOutput
from kb.extract.models import Extraction, Triage, json_schema, repair
from kb.extract.prompt import PROMPT_VERSION, SYSTEM, TRIAGE_SYSTEM, TRIAGE_VERSION, triage_message, user_message
from kb.tokens import count_tokens

MODELS: dict[str, type[BaseModel]] = {"extract": Extraction, "triage": Triage}
VERSIONS = {"extract": PROMPT_VERSION, "triage": TRIAGE_VERSION}


@dataclass
class Job:
    """One paid call waiting to be made: an extraction of a chunk, or the triage of a conversation."""

    kind: str  # "extract" | "triage"
    key: str
    folder: str
    system: str
    message: str
    source: dict[str, Any]


@dataclass
class Outcome:
    """What the knowledge step did; the refresh summary reports it."""

    model: str
    cached: int = 0
    extracted: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    skipped_private: int = 0
    not_extracted: int = 0  # no cache entry and no extractor to ask
    triage: list[dict[str, Any]] = field(default_factory=list)
    estimate: Estimate | None = None
    status: str = "built"
    message: str = ""
    results: dict[str, Extraction] = field(default_factory=dict)
    repairs: int = 0
    dedupe: list[dict[str, Any]] = field(default_factory=list)
    audit: list[dict[str, str]] = field(default_factory=list)
    retyped: list[dict[str, str]] = field(default_factory=list)
    batches: dict[str, Any] = field(default_factory=dict)  # submitted, waiting, collected
    checks: Estimate | None = None  # the estimate for judging, auditing and re-typing


@dataclass
class Policy:
    """The user's choices for this run."""

    ai_chat_folders: tuple[str, ...] = ("ChatGPT",)
    private_optin: tuple[str, ...] = ()
    threshold_usd: float = 0.50
    yes: bool = False
    dry_run: bool = False
    workers: int = 16
    confirm: Callable[[str], bool] | None = None
    batch: bool = False  # submit to the Message Batches API instead of calling now


def chunk_text(chunk: dict[str, Any]) -> str:
    return f"{chunk['breadcrumb']}\n{chunk['text']}"


def conversations(chunks: list[dict[str, Any]], folders: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    """Saved AI chats, one per note, with their chunks in reading order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in chunks:
        if in_folder(c["folder"], folders):
            out.setdefault(c["path"], []).append(c)
    return {p: sorted(cs, key=lambda c: c["ord"]) for p, cs in sorted(out.items())}


def excerpts(text: str, width: int = 700) -> list[str]:
    """Start, two middles and end: a chat's title reflects only its first message."""
    if len(text) <= 4 * width:
        return [text]
    points = [0, len(text) // 3, 2 * len(text) // 3, len(text) - width]
    return [text[p : p + width] for p in points]


class KnowledgeRun:
    """Plans and runs extraction for the chunks of the graph."""

    def __init__(self, model: str, cache: ExtractionCache, extractor: Extractor | None, policy: Policy) -> None:
        self.model = model
        self.cache = cache
        self.extractor = extractor
        self.policy = policy
        self.remote = extractor.remote if extractor is not None else True

    def allowed(self, chunk: dict[str, Any]) -> bool:
        """A private chunk goes only to a local extractor, or to a remote one for an opted-in folder."""
        return not chunk["private"] or not self.remote or in_folder(chunk["folder"], self.policy.private_optin)

    def queue(self) -> BatchQueue | None:
        """The batches in flight, when the extractor speaks the Message Batches API."""
        if isinstance(self.extractor, AnthropicExtractor):
            return BatchQueue(self.cache, self.extractor)
        return None

    def run(self, chunks: list[dict[str, Any]]) -> Outcome:
        out = Outcome(self.model)
        queue = self.queue()
        if self.policy.batch and self.extractor is not None and queue is None:
            raise ConfigError(
                "--batch needs the Anthropic extractor (the Message Batches API): drop --batch, or set "
                f'extractor = "{DEFAULT_EXTRACTOR}" in the kb config'
            )
        waiting: set[str] = set()
        if queue is not None and not self.policy.dry_run:
            try:
                waiting = self._collect(queue, out)
            except FatalExtractError as exc:
                return self._failed(out, exc)
        rejected, undecided, triage_jobs = self._triage(chunks, out)
        # the estimate counts undecided chats as kept: it may overstate, never understate
        extract_jobs = self._extract_jobs(chunks, rejected, out)
        jobs = [j for j in triage_jobs + extract_jobs if j.key not in waiting]
        if not jobs:
            return self._waiting(out, waiting) if waiting else self._settle(out)
        if self.extractor is None:
            out.not_extracted = sum(1 for j in extract_jobs if j.source["chunk_id"] not in undecided)
            out.status = "partial" if out.results else "skipped"
            out.message = (
                f"{len(extract_jobs)} chunks have no cached extraction: set ANTHROPIC_API_KEY (or "
                'extractor = "ollama:MODEL" in the kb config) and run kb refresh again'
            )
            return out
        out.estimate = self.estimate(jobs)
        if self.policy.dry_run:
            out.status, out.message = "dry-run", "dry run: nothing was sent"
            return out
        check(out.estimate, self.policy.threshold_usd, self.policy.yes, self.policy.confirm)
        if self.policy.batch and queue is not None:
            ready = [j for j in jobs if j.kind == "triage" or j.source["chunk_id"] not in undecided]
            return self._submit(queue, ready, out) if ready else self._waiting(out, waiting)
        self._execute([j for j in triage_jobs if j.key not in waiting], out)
        newly_rejected = {c["id"] for t in out.triage if not t["keep"] for c in chunks if c["path"] == t["path"]}
        undecided -= {c["id"] for t in out.triage for c in chunks if c["path"] == t["path"]}
        skip = newly_rejected | undecided
        self._execute([j for j in extract_jobs if j.source["chunk_id"] not in skip and j.key not in waiting], out)
        return self._settle(out)

    def _collect(self, queue: BatchQueue, out: Outcome) -> set[str]:
        """Finished batches into the cache; the keys still waiting in batches."""
        if not queue.states():
            return set()
        got = queue.collect(MODELS)
        out.failed.extend(got.failed)
        out.batches.update(
            {"collected": got.done, "stored": got.stored, "resubmit": got.resubmit, "waiting": got.waiting}
        )
        return queue.waiting_keys()

    def _submit(self, queue: BatchQueue, jobs: list[Job], out: Outcome) -> Outcome:
        """Send the calls as batches and return: the next run collects them."""
        try:
            ids = queue.submit(
                [
                    {
                        "key": j.key,
                        "kind": j.kind,
                        "version": VERSIONS[j.kind],
                        "system": j.system,
                        "message": j.message,
                        "schema": json_schema(MODELS[j.kind]),
                        "source": {k: v for k, v in j.source.items() if k != "text"},
                    }
                    for j in jobs
                ]
            )
        except FatalExtractError as exc:
            return self._failed(out, exc)
        out.batches["submitted"] = ids
        out.status = "submitted"
        out.message = (
            f"submitted {len(jobs)} requests in batch {', '.join(ids)} (half price): run kb refresh "
            "(or kb extract status) later to collect the answers and build the layer"
        )
        return out

    def _waiting(self, out: Outcome, waiting: set[str]) -> Outcome:
        out.status = "waiting"
        out.message = (
            f"{len(waiting)} requests are still in batches {', '.join(out.batches.get('waiting', []))}: "
            "run kb refresh (or kb extract status) again later to collect them"
        )
        return out

    def _failed(self, out: Outcome, exc: Exception) -> Outcome:
        out.status, out.message = "failed", f"{exc}; finished results are kept"
        return out

    def _settle(self, out: Outcome) -> Outcome:
        """A run whose every call failed is failed, never built; one with some failures says how many."""
        if out.status != "built" or not out.failed:
            return out
        first = out.failed[0]["error"]
        if out.extracted == 0 and not out.cached:
            out.status, out.message = "failed", f"every call failed ({len(out.failed)}); the first: {first}"
        else:
            out.status, out.message = "partial", f"{len(out.failed)} calls failed; the first: {first}"
        return out

    def _triage(self, chunks: list[dict[str, Any]], out: Outcome) -> tuple[set[str], set[str], list[Job]]:
        """Chunks of chats triaged out, chunks of chats not triaged yet, and the triage calls to make."""
        rejected: set[str] = set()
        undecided: set[str] = set()
        jobs: list[Job] = []
        for path, parts in conversations(chunks, self.policy.ai_chat_folders).items():
            message = triage_message(path, excerpts("\n\n".join(c["text"] for c in parts)))
            key = cache_key(self.model, TRIAGE_VERSION, message)
            entry = self.cache.lookup(self.model, TRIAGE_VERSION, message)
            if entry is None:
                undecided.update(c["id"] for c in parts)
                if all(self.allowed(c) for c in parts):
                    jobs.append(Job("triage", key, parts[0]["folder"], TRIAGE_SYSTEM, message, {"path": path}))
                continue
            decision = Triage.model_validate(entry["result"])
            out.triage.append({"path": path, "keep": decision.keep, "reason": decision.reason})
            if not decision.keep:
                rejected.update(c["id"] for c in parts)
        return rejected, undecided, jobs

    def _extract_jobs(self, chunks: list[dict[str, Any]], rejected: set[str], out: Outcome) -> list[Job]:
        jobs = []
        for c in chunks:
            if c["id"] in rejected:
                continue
            key = cache_key(self.model, PROMPT_VERSION, chunk_text(c))
            entry = self.cache.lookup(self.model, PROMPT_VERSION, chunk_text(c))
            if entry is not None and entry.get("result") is not None:
                self._accept(c["id"], entry["result"], c["text"], out)
                out.cached += 1
            elif not self.allowed(c):
                out.skipped_private += 1
            else:
                jobs.append(
                    Job(
                        "extract",
                        key,
                        c["folder"],
                        SYSTEM,
                        user_message(c["path"], c["date"], c["breadcrumb"], c["text"]),
                        {"chunk_id": c["id"], "path": c["path"], "breadcrumb": c["breadcrumb"], "text": c["text"]},
                    )
                )
        return jobs

    def _accept(self, chunk_id: str, result: dict[str, Any], text: str, out: Outcome) -> None:
        fixed, notes = repair(Extraction.model_validate(result), text)
        out.results[chunk_id] = fixed
        out.repairs += len(notes)

    def estimate(self, jobs: list[Job]) -> Estimate:
        schema_tokens = {k: count_tokens(str(json_schema(m))) for k, m in MODELS.items()}
        calls = [Call(j.kind, j.folder, j.system, j.message, schema_tokens[j.kind]) for j in jobs]
        return estimate(self.model, self.remote, calls, self.policy.batch, self._scale(jobs))

    def _scale(self, jobs: list[Job]) -> float | None:
        """The provider's token count over the offline count, from one free token-counting call (never in a dry
        run: it sends the text); None when it cannot be asked."""
        if self.policy.dry_run or not jobs or not hasattr(self.extractor, "count"):
            return None
        job = next((j for j in jobs if j.kind == "extract"), jobs[0])
        schema = json_schema(MODELS[job.kind])
        counted = self.extractor.count(job.system, job.message, schema)  # type: ignore[union-attr]
        local = count_tokens(job.system) + count_tokens(job.message) + count_tokens(str(schema))
        return counted / local if counted else None

    def _execute(self, jobs: list[Job], out: Outcome) -> None:
        if not jobs or out.status == "failed":
            return
        stop = threading.Event()
        with ThreadPoolExecutor(max_workers=max(1, min(self.policy.workers, 64))) as pool:
            futures = {pool.submit(self._one, job, stop): job for job in jobs}
            for fut in as_completed(futures):
                job = futures[fut]
                try:
                    result = fut.result()
                except FatalExtractError as exc:
                    if not stop.is_set():
                        stop.set()
                        self._failed(out, exc)
                    continue
                except ExtractError as exc:
                    out.failed.append({"path": job.source.get("path", ""), "key": job.key, "error": str(exc)})
                    continue
                if result is None:
                    continue
                if job.kind == "triage":
                    decision = Triage.model_validate(result)
                    out.triage.append({"path": job.source["path"], "keep": decision.keep, "reason": decision.reason})
                else:
                    self._accept(job.source["chunk_id"], result, job.source["text"], out)
                    out.extracted += 1

    def _one(self, job: Job, stop: threading.Event) -> dict[str, Any] | None:
        """One call, validated (one retry on an invalid answer), stored durably before it counts."""
        if stop.is_set():
            return None
        assert self.extractor is not None
        model = Extraction if job.kind == "extract" else Triage
        last: Exception | None = None
        for _ in range(2):
            try:
                raw, usage = self.extractor.complete(job.system, job.message, json_schema(model))
                result = model.model_validate(raw).model_dump()
            except (InvalidOutput, ValidationError) as exc:
                last = exc
                continue
            source = {k: v for k, v in job.source.items() if k != "text"}
            self.cache.put(
                job.key,
                {
                    "kind": job.kind,
                    "model": self.model,
                    "source": source,
                    "result": result,
                    "prompt_version": PROMPT_VERSION if job.kind == "extract" else TRIAGE_VERSION,
                    "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
                },
            )
            return result
        raise ExtractError(f"invalid answer twice: {str(last).splitlines()[0][:200]}")
