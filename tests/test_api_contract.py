"""The stand-in refuses what the documented Messages API refuses, and accepts kb's requests on every path.

Each rule in anthropic_rules.RULES (with its documentation page) has a test here that sends a request breaking
it through the real `anthropic` client. The first test is the request kb sent before issue 12: a stand-in that
let it through would be a defect of its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic_rules import RULES
from anthropic_standin import THINKING, ChatStandIn, running
from pydantic import BaseModel

from kb.extract.audit import AUDIT, RETYPE, Retyped, Verdict
from kb.extract.backends import AnthropicExtractor
from kb.extract.dedupe import ACCEPT, CONFIRM, Judgement
from kb.extract.models import Extraction, Triage, json_schema
from kb.extract.prompt import SYSTEM, TRIAGE_SYSTEM

MESSAGE = "Note: a.md\nNote date: 2026-01-01\nSection: A\n<passage>\nAcme Corp had 120 customers.\n</passage>"
ANSWERS: dict[str, dict[str, Any]] = {
    SYSTEM: {"entities": [], "relationships": [], "claims": []},
    TRIAGE_SYSTEM: {"keep": True, "reason": "facts"},
    ACCEPT: {"same": True, "reason": "spelling"},
    CONFIRM: {"same": False, "reason": "company vs product"},
    AUDIT: {"verdict": "keep", "reason": "stated"},
    RETYPE: {"types": [{"i": 0, "type": "CLIENT_OF"}]},
}


@pytest.fixture
def standin() -> Iterator[ChatStandIn]:
    yield from running(lambda body: ANSWERS.get(body.get("system", ""), {"ok": True}))


def client(standin: ChatStandIn) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="k", base_url=standin.base_url, max_retries=0)


def send(standin: ChatStandIn, **body: Any) -> Any:
    """A Messages request with `body` sent as is (extra_body: the SDK checks nothing of it)."""
    params = {"model": "claude-haiku-5-5", "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}], **body}
    return client(standin).messages.create(
        model=params.pop("model"), max_tokens=1024, messages=params.pop("messages"), extra_body=params
    )


def refused(standin: ChatStandIn, **body: Any) -> anthropic.APIStatusError:
    with pytest.raises(anthropic.APIStatusError) as info:
        send(standin, **body)
    return info.value


def said(err: anthropic.APIStatusError) -> str:
    """The API's own message."""
    assert isinstance(err.body, dict)
    return str(err.body["error"]["message"])


def test_the_request_kb_sent_before_is_refused(standin: ChatStandIn) -> None:
    """claude-haiku-4-5 with effort "low" and pydantic's raw schema: refused twice over, as the API does."""
    raw = json_schema(Extraction)
    old = {
        "model": "claude-haiku-4-5",
        "max_tokens": 4096,
        "system": SYSTEM,
        "output_config": {"format": {"type": "json_schema", "schema": raw}, "effort": "low"},
    }
    err = refused(standin, **old)
    assert err.status_code == 400 and err.type == "invalid_request_error"
    assert said(err) == "This model does not support the effort parameter."
    err = refused(standin, **{**old, "output_config": {"format": {"type": "json_schema", "schema": raw}}})
    assert err.status_code == 400 and "JSON schema keyword" in said(err) and "is not supported" in said(err)


@pytest.mark.parametrize("model", ["claude-haiku-5-5", "claude-haiku-4-5"])
@pytest.mark.parametrize(
    "system,schema",
    [
        (SYSTEM, Extraction),
        (TRIAGE_SYSTEM, Triage),
        (ACCEPT, Judgement),
        (CONFIRM, Judgement),
        (AUDIT, Verdict),
        (RETYPE, Retyped),
    ],
)
def test_kb_requests_are_accepted_on_every_path(
    standin: ChatStandIn, model: str, system: str, schema: type[BaseModel]
) -> None:
    ext = AnthropicExtractor(model, "k", standin.base_url, timeout=2.0, backoff=0.01)
    result, _ = ext.complete(system, MESSAGE, json_schema(schema))
    assert schema.model_validate(result).model_dump() == schema.model_validate(ANSWERS[system]).model_dump()
    [call] = standin.calls("/v1/messages")
    assert ("effort" in call.body["output_config"]) == (model == "claude-haiku-5-5")


def test_unknown_model_is_404(standin: ChatStandIn) -> None:
    err = refused(standin, model="claude-haiku-9-9")
    assert err.status_code == 404 and err.type == "not_found_error" and "claude-haiku-9-9" in said(err)


def test_effort_level_the_model_lacks(standin: ChatStandIn) -> None:
    err = refused(standin, output_config={"effort": "xhigh"})
    assert err.status_code == 400 and "use one of low, medium, high, max" in said(err)
    assert send(standin, output_config={"effort": "max"}).stop_reason == "end_turn"


@pytest.mark.parametrize(
    "schema,words",
    [
        (
            {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}, "additionalProperties": False},
            "'maxLength' is not supported",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "string"}, "maxItems": 8}},
                "additionalProperties": False,
            },
            "'maxItems' is not supported",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1}}, "additionalProperties": False},
            "'minimum' is not supported",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array", "minItems": 2}}, "additionalProperties": False},
            "minItems values other than 0 or 1",
        ),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, "'additionalProperties' to false"),
    ],
)
def test_unsupported_schema_is_400(standin: ChatStandIn, schema: dict[str, Any], words: str) -> None:
    err = refused(standin, output_config={"format": {"type": "json_schema", "schema": schema}})
    assert err.status_code == 400 and words in said(err)
    fixed = anthropic.transform_schema(schema)  # the SDK's own fix makes every one of them acceptable
    assert send(standin, output_config={"format": {"type": "json_schema", "schema": fixed}}).stop_reason == "end_turn"


@pytest.mark.parametrize("param", [{"temperature": 0}, {"top_p": 0.9}, {"top_k": 5}])
def test_haiku_5_5_refuses_sampling_parameters(standin: ChatStandIn, param: dict[str, Any]) -> None:
    err = refused(standin, **param)
    assert err.status_code == 400 and next(iter(param)) in said(err)
    assert send(standin, model="claude-haiku-4-5", **param).stop_reason == "end_turn"  # Haiku 4.5 takes them


def test_haiku_5_5_refuses_budget_tokens(standin: ChatStandIn) -> None:
    err = refused(standin, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048})
    assert err.status_code == 400 and "budget_tokens" in said(err) and "adaptive" in said(err)


def test_max_tokens_over_the_models_limit(standin: ChatStandIn) -> None:
    assert refused(standin, max_tokens=128_001).status_code == 400
    err = refused(standin, model="claude-haiku-4-5", max_tokens=64_001)
    assert "64000, which is the maximum allowed number of output tokens for claude-haiku-4-5" in said(err)


def test_429_carries_retry_after(standin: ChatStandIn) -> None:
    standin.rate_limit_next, standin.retry_after = 1, "7"
    err = refused(standin)
    assert err.status_code == 429 and err.response.headers["retry-after"] == "7"


def test_stop_reasons_max_tokens_and_refusal(standin: ChatStandIn) -> None:
    short = send(standin, max_tokens=5)
    assert short.stop_reason == "max_tokens"
    standin.refusal_next = 1
    assert send(standin).stop_reason == "refusal"


def test_adaptive_thinking_comes_first_and_is_billed(standin: ChatStandIn) -> None:
    msg = send(standin)
    assert [b.type for b in msg.content] == ["thinking", "text"] and msg.content[0].thinking == THINKING
    assert msg.usage.output_tokens > len(msg.content[1].text) // 4
    assert [b.type for b in send(standin, model="claude-haiku-4-5").content] == ["text"]


def test_token_counting_checks_the_request_too(standin: ChatStandIn) -> None:
    c = client(standin)
    ok = c.messages.count_tokens(model="claude-haiku-5-5", messages=[{"role": "user", "content": "hello world"}])
    assert ok.input_tokens > 0
    with pytest.raises(anthropic.BadRequestError, match="effort parameter"):
        c.messages.count_tokens(
            model="claude-haiku-4-5", messages=[{"role": "user", "content": "x"}], output_config={"effort": "low"}
        )


def test_batch_custom_ids_are_checked(standin: ChatStandIn) -> None:
    c = client(standin)
    params = {"model": "claude-haiku-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": "x"}]}
    for ids in (["a" * 65], ["has space"], ["same", "same"]):
        with pytest.raises(anthropic.BadRequestError, match="custom_id"):
            c.messages.batches.create(requests=[{"custom_id": i, "params": params} for i in ids])  # type: ignore[misc]


def test_batch_results_succeeded_errored_expired(standin: ChatStandIn) -> None:
    c = client(standin)
    good = {"model": "claude-haiku-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": "x"}]}
    bad = {**good, "temperature": 0}
    batch = c.messages.batches.create(
        requests=[
            {"custom_id": "ok", "params": good},  # type: ignore[misc]
            {"custom_id": "bad", "params": bad},
        ]
    )
    assert batch.processing_status == "in_progress"
    assert c.messages.batches.retrieve(batch.id).processing_status == "ended"
    results = {r.custom_id: r.result for r in c.messages.batches.results(batch.id)}
    assert results["ok"].type == "succeeded" and results["bad"].type == "errored"
    standin.expire_batches = True
    late = c.messages.batches.create(requests=[{"custom_id": "ok", "params": good}])  # type: ignore[misc]
    c.messages.batches.retrieve(late.id)
    assert [r.result.type for r in c.messages.batches.results(late.id)] == ["expired"]


def test_every_rule_names_its_documentation() -> None:
    assert len(RULES) >= 14 and all(url.startswith("https://platform.claude.com/docs/en/") for url in RULES.values())
