"""The Message Batches path of the extraction run against the stand-in's batch endpoints: submit, collect,
kill-safety, expired and errored requests, nothing submitted twice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic_standin import ChatStandIn
from conftest import EXAMPLE_VAULT
from knowledge_helpers import MODEL, replay, vault_chunks

from kb.extract.backends import AnthropicExtractor
from kb.extract.batch import BatchQueue
from kb.extract.cache import ExtractionCache
from kb.extract.run import KnowledgeRun, Outcome, Policy

BATCHES = "/v1/messages/batches"


@pytest.fixture
def standin() -> Iterator[ChatStandIn]:
    with ChatStandIn(replay()) as s:
        yield s


@pytest.fixture
def chunks() -> list[dict[str, Any]]:
    return vault_chunks(EXAMPLE_VAULT, ("Journal",))


def run(standin: ChatStandIn, cache: Path, chunks: list[dict[str, Any]], batch: bool = True) -> Outcome:
    ext = AnthropicExtractor(MODEL, "test-key", standin.base_url, timeout=2.0, backoff=0.01)
    return KnowledgeRun(MODEL, ExtractionCache(cache), ext, Policy(threshold_usd=100.0, batch=batch)).run(chunks)


def created(standin: ChatStandIn) -> list[dict[str, Any]]:
    return [r.body for r in standin.calls(BATCHES) if r.method == "POST"]


def test_submit_then_collect_then_the_chats(standin: ChatStandIn, chunks: list[dict[str, Any]], tmp_path: Path) -> None:
    first = run(standin, tmp_path, chunks)
    assert first.status == "submitted" and len(first.batches["submitted"]) == 1
    assert standin.calls("/v1/messages") == [] and first.estimate is not None and first.estimate.batch
    [body] = created(standin)
    chats = {c["id"] for c in chunks if c["path"].startswith("ChatGPT/")}
    public = [c for c in chunks if not c["private"]]
    # triage first; chat chunks wait for their triage decision
    assert len(body["requests"]) == len(public) - len(chats) + 2
    assert all(len(r["custom_id"]) == 64 and r["params"]["output_config"]["effort"] == "low" for r in body["requests"])
    second = run(standin, tmp_path, chunks)  # collects, then submits the kept chats' chunks
    assert second.batches["stored"] == len(body["requests"]) and second.status == "submitted"
    third = run(standin, tmp_path, chunks)
    assert third.status == "built" and third.cached == len(public) and third.extracted == 0
    assert len(created(standin)) == 2 and standin.calls("/v1/messages") == []
    assert not list((tmp_path / "batches").glob("*.json"))


def test_batch_costs_half(standin: ChatStandIn, chunks: list[dict[str, Any]], tmp_path: Path) -> None:
    ext = AnthropicExtractor(MODEL, "test-key", standin.base_url)
    sync = KnowledgeRun(MODEL, ExtractionCache(tmp_path), ext, Policy(dry_run=True)).run(chunks).estimate
    batch = KnowledgeRun(MODEL, ExtractionCache(tmp_path), ext, Policy(dry_run=True, batch=True)).run(chunks).estimate
    assert sync is not None and batch is not None
    assert batch.total_usd == pytest.approx(sync.total_usd / 2)


def test_nothing_is_submitted_twice_while_a_batch_runs(
    standin: ChatStandIn, chunks: list[dict[str, Any]], tmp_path: Path
) -> None:
    standin.end_batches = False
    run(standin, tmp_path, chunks)
    again = run(standin, tmp_path, chunks)
    plain = run(standin, tmp_path, chunks, batch=False)  # a plain refresh does not pay for waiting chunks
    assert again.status == "waiting" and "still in batches" in again.message
    assert len(created(standin)) == 1 and plain.extracted == 0 and standin.calls("/v1/messages") == []


def test_killed_before_the_batch_id_was_written(
    standin: ChatStandIn, chunks: list[dict[str, Any]], tmp_path: Path
) -> None:
    """kill -9 right after the API created the batch: the next run finds it by count and time, submits nothing."""
    run(standin, tmp_path, chunks)
    [state] = (tmp_path / "batches").glob("*.json")
    data = json.loads(state.read_text())
    state.write_text(json.dumps({**data, "id": None}))
    after = run(standin, tmp_path, chunks)
    assert after.batches["stored"] == len(data["jobs"]) and len(created(standin)) == 2  # only the chats' batch


def test_killed_before_the_batch_was_created(
    standin: ChatStandIn, chunks: list[dict[str, Any]], tmp_path: Path
) -> None:
    queue = BatchQueue(ExtractionCache(tmp_path), AnthropicExtractor(MODEL, "k", standin.base_url))
    queue.folder.mkdir(parents=True)
    (queue.folder / "1-intent.json").write_text(
        json.dumps({"id": None, "intent_at": 4e9, "model": MODEL, "jobs": {"a" * 64: {}}})
    )
    (queue.folder / "2-half.json").write_text('{"id": ')
    out = run(standin, tmp_path, chunks)
    assert out.status == "submitted" and len(created(standin)) == 1
    assert sorted(p.name for p in queue.folder.glob("*.json")) != ["1-intent.json", "2-half.json"]


def test_expired_and_errored_requests_are_submitted_again(
    standin: ChatStandIn, chunks: list[dict[str, Any]], tmp_path: Path
) -> None:
    standin.expire_batches = True
    first = run(standin, tmp_path, chunks)
    n = len(created(standin)[0]["requests"])
    again = run(standin, tmp_path, chunks)  # collects nothing (all expired), resubmits all
    assert again.batches["resubmit"] == n and len(created(standin)[1]["requests"]) == n
    standin.expire_batches = False
    standin.errored_ids = {r["custom_id"] for r in created(standin)[1]["requests"][:3]}
    third = run(standin, tmp_path, chunks)
    assert third.batches["stored"] == n - 3 and third.batches["resubmit"] == 3
    standin.errored_ids = set()
    resubmitted = {r["custom_id"] for r in created(standin)[2]["requests"]}
    assert resubmitted >= {r["custom_id"] for r in created(standin)[1]["requests"][:3]}
    assert not resubmitted & {r["custom_id"] for r in created(standin)[1]["requests"][3:]}
    assert first.status == "submitted"


def test_batch_with_a_local_extractor_is_refused(
    standin: ChatStandIn, chunks: list[dict[str, Any]], tmp_path: Path
) -> None:
    from kb.errors import ConfigError
    from kb.extract.backends import OllamaExtractor

    ext = OllamaExtractor("qwen2.5:7b", standin.base_url)
    with pytest.raises(ConfigError, match="--batch needs the Anthropic extractor"):
        KnowledgeRun(MODEL, ExtractionCache(tmp_path), ext, Policy(batch=True)).run(chunks)
    assert standin.requests == []
