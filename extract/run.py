"""The extraction run: cache first, privacy and triage, a cost check, then parallel calls, each durable."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import ValidationError

from extract.backends import Extractor
from extract.cache import ExtractionCache, cache_key
from extract.cost import OUTPUT_PER_CHUNK, OUTPUT_PER_TRIAGE, Estimate, price
from extract.errors import ExtractError, FatalExtractError, InvalidOutput
from extract.models import Extraction, Triage, json_schema, repair
from extract.prompt import PROMPT_VERSION, SYSTEM, TRIAGE_SYSTEM, TRIAGE_VERSION, triage_message, user_message
from kb.errors import ConfigError
from kb.tokens import count_tokens


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


def _in(folder: str, folders: tuple[str, ...]) -> bool:
    return any(folder == f or folder.startswith(f.rstrip("/") + "/") for f in folders)


def chunk_text(chunk: dict[str, Any]) -> str:
    return f"{chunk['breadcrumb']}\n{chunk['text']}"


def conversations(chunks: list[dict[str, Any]], folders: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    """Saved AI chats, one per note, with their chunks in reading order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in chunks:
        if _in(c["folder"], folders):
            out.setdefault(c["path"], []).append(c)
    return {p: sorted(cs, key=lambda c: c["ord"]) for p, cs in sorted(out.items())}


def excerpts(text: str, width: int = 700) -> list[str]:
    """Start, two middles and end: a chat's title reflects only its first message."""
    if len(text) <= 4 * width:
        return [text]
    points = [0, len(text) // 3, 2 * len(text) // 3, len(text) - width]
    return [text[p:p + width] for p in points]


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
        return not chunk["private"] or not self.remote or _in(chunk["folder"], self.policy.private_optin)

    def run(self, chunks: list[dict[str, Any]]) -> Outcome:
        out = Outcome(self.model)
        rejected, undecided, triage_jobs = self._triage(chunks, out)
        # the estimate counts undecided chats as kept: it may overstate, never understate
        extract_jobs = self._extract_jobs(chunks, rejected, out)
        jobs = triage_jobs + extract_jobs
        if not jobs:
            return out
        if self.extractor is None:
            out.not_extracted = sum(1 for j in extract_jobs if j.source["chunk_id"] not in undecided)
            out.status = "partial" if out.results else "skipped"
            out.message = (f"{len(extract_jobs)} chunks have no cached extraction: set ANTHROPIC_API_KEY (or "
                           "extractor = \"ollama:MODEL\" in the kb config) and run kb refresh again")
            return out
        out.estimate = self.estimate(jobs)
        if self.policy.dry_run:
            out.status, out.message = "dry-run", "dry run: nothing was sent"
            return out
        self._check_cost(out.estimate)
        self._execute(triage_jobs, out)
        newly_rejected = {c["id"] for t in out.triage if not t["keep"]
                          for c in chunks if c["path"] == t["path"]}
        undecided -= {c["id"] for t in out.triage for c in chunks if c["path"] == t["path"]}
        skip = newly_rejected | undecided
        self._execute([j for j in extract_jobs if j.source["chunk_id"] not in skip], out)
        return out

    def _triage(self, chunks: list[dict[str, Any]], out: Outcome) -> tuple[set[str], set[str], list[Job]]:
        """Chunks of chats triaged out, chunks of chats not triaged yet, and the triage calls to make."""
        rejected: set[str] = set()
        undecided: set[str] = set()
        jobs: list[Job] = []
        for path, parts in conversations(chunks, self.policy.ai_chat_folders).items():
            message = triage_message(path, excerpts("\n\n".join(c["text"] for c in parts)))
            key = cache_key(self.model, TRIAGE_VERSION, message)
            entry = self.cache.get(key)
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
            entry = self.cache.get(key)
            if entry is not None and entry.get("result") is not None:
                self._accept(c["id"], entry["result"], c["text"], out)
                out.cached += 1
            elif not self.allowed(c):
                out.skipped_private += 1
            else:
                jobs.append(Job("extract", key, c["folder"], SYSTEM,
                                user_message(c["path"], c["date"], c["breadcrumb"], c["text"]),
                                {"chunk_id": c["id"], "path": c["path"], "breadcrumb": c["breadcrumb"],
                                 "text": c["text"]}))
        return jobs

    def _accept(self, chunk_id: str, result: dict[str, Any], text: str, out: Outcome) -> None:
        fixed, notes = repair(Extraction.model_validate(result), text)
        out.results[chunk_id] = fixed
        out.repairs += len(notes)

    def estimate(self, jobs: list[Job]) -> Estimate:
        est = Estimate(self.model)
        p_in, p_out = price(self.model, self.remote)
        schema_tokens = {k: count_tokens(str(json_schema(m))) for k, m in (("extract", Extraction),
                                                                          ("triage", Triage))}
        for job in jobs:
            tin = count_tokens(job.system) + count_tokens(job.message) + schema_tokens[job.kind]
            tout = OUTPUT_PER_CHUNK if job.kind == "extract" else OUTPUT_PER_TRIAGE
            est.add(job.folder, tin, tout, (tin * p_in + tout * p_out) / 1e6)
        return est

    def _check_cost(self, est: Estimate) -> None:
        if est.total_usd <= self.policy.threshold_usd or self.policy.yes:
            return
        question = f"Extraction will cost about ${est.total_usd:.2f} ({est.calls} calls). Go ahead?"
        if self.policy.confirm is not None and self.policy.confirm(question):
            return
        raise ConfigError(f"estimated ${est.total_usd:.2f} for {est.calls} calls is over the "
                          f"${self.policy.threshold_usd:.2f} threshold: rerun with --yes (see it first with --dry-run)")

    def _execute(self, jobs: list[Job], out: Outcome) -> None:
        if not jobs or out.status == "stopped":
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
                        out.status, out.message = "stopped", f"{exc}; finished results are kept"
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
            self.cache.put(job.key, {"kind": job.kind, "model": self.model, "source": source, "result": result,
                                     "prompt_version": PROMPT_VERSION if job.kind == "extract" else TRIAGE_VERSION,
                                     "usage": {"input_tokens": usage.input_tokens,
                                               "output_tokens": usage.output_tokens}})
            return result
        raise ExtractError(f"invalid answer twice: {str(last).splitlines()[0][:200]}")
