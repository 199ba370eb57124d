"""Extractor backends against a local stand-in server, through the real `anthropic` and `ollama` clients.

No network and no Neo4j: both clients talk to `ChatStandIn` on 127.0.0.1.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic_standin import INVALID_JSON, THINKING, ChatStandIn, Recorded, input_tokens_for, running, tokens
from standin_http import keep_local

from kb.errors import ConfigError
from kb.extract.backends import (
    ANSWER_TOKENS,
    RETRIES,
    THINKING_TOKENS,
    AnthropicExtractor,
    OllamaExtractor,
    Usage,
    context_for,
)
from kb.extract.errors import ExtractError, FatalExtractError, InvalidOutput, Refused, Truncated
from kb.extract.models import Extraction, json_schema
from kb.extract.prompt import SYSTEM, user_message

SCHEMA = json_schema(Extraction)
PASSAGE = "Acme Corp had 120 customers in March 2026. Tobias Reinholt leads Acme Corp."
MESSAGE = user_message("work/acme.md", "2026-03-14", "Acme > Customers", PASSAGE)
ANSWER: dict[str, Any] = {
    "entities": [
        {"name": "Acme Corp", "type": "Organization", "aliases": []},
        {"name": "Tobias Reinholt", "type": "Person", "aliases": []},
    ],
    "relationships": [
        {
            "source": "Tobias Reinholt",
            "target": "Acme Corp",
            "type": "WORKS_AT",
            "evidence": "Tobias Reinholt leads Acme Corp",
            "modality": "fact",
        }
    ],
    "claims": [
        {
            "entity": "Acme Corp",
            "attribute": "customer_count",
            "value": "120",
            "quote": "Acme Corp had 120 customers in March 2026",
            "modality": "fact",
            "valid_from": "2026-03",
            "valid_to": None,
        }
    ],
}
MESSAGES = "/v1/messages"
CHAT = "/api/chat"


@pytest.fixture(autouse=True)
def _local_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy, key or base URL from the environment may redirect a client away from the stand-in."""
    keep_local(
        monkeypatch,
        "OLLAMA_HOST",
        "OLLAMA_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CONFIG_DIR",
    )


@pytest.fixture
def standin() -> Iterator[ChatStandIn]:
    yield from running()


def claude(standin: ChatStandIn, model: str = "claude-haiku-4-5", **kwargs: Any) -> AnthropicExtractor:
    options: dict[str, Any] = {"timeout": 0.5, "backoff": 0.01, **kwargs}
    return AnthropicExtractor(model=model, api_key="test-key", base_url=f"http://127.0.0.1:{standin.port}", **options)


def local(standin: ChatStandIn, model: str = "qwen2.5:7b", **kwargs: Any) -> OllamaExtractor:
    options: dict[str, Any] = {"backoff": 0.01, **kwargs}
    return OllamaExtractor(model=model, host=f"http://127.0.0.1:{standin.port}", **options)


def api_key_sent(rec: Recorded) -> str | None:
    """The API key a request carried: `x-api-key` (older SDKs) or `Authorization: Bearer` (the SDK here)."""
    if "x-api-key" in rec.headers:
        return rec.headers["x-api-key"]
    auth = rec.headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Anthropic: the request and the answer ------------------------------------------------------------


def test_anthropic_returns_the_answer_and_usage(standin: ChatStandIn) -> None:
    standin.responder = lambda body: ANSWER
    result, usage = claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert result == ANSWER
    Extraction.model_validate(result)  # the answer fixture itself fits the schema
    [call] = standin.calls(MESSAGES)
    assert usage == Usage(input_tokens_for(call.body), tokens(json.dumps(ANSWER)))
    assert usage.input_tokens > 100 and usage.output_tokens > 50


def test_haiku_4_5_request_has_no_effort_and_a_transformed_schema(standin: ChatStandIn) -> None:
    claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    [call] = standin.calls()
    assert (call.method, call.path) == ("POST", MESSAGES)
    body = call.body
    assert set(body) == {"model", "max_tokens", "system", "messages", "output_config"}  # nothing else leaves
    assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == ANSWER_TOKENS
    assert body["system"] == SYSTEM
    assert body["messages"] == [{"role": "user", "content": MESSAGE}]
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": anthropic.transform_schema(SCHEMA)}}
    sent = json.dumps(body["output_config"])
    assert '"maxLength"' not in sent and "{maxLength: 120, minLength: 1}" in sent  # a description, not a keyword
    assert not body.get("stream")
    assert api_key_sent(call) == "test-key"
    assert call.headers.get("anthropic-version")
    assert "test-key" not in call.raw  # the key is a header, never part of the body


def test_haiku_5_5_request_has_low_effort_room_for_thinking_and_no_sampling(standin: ChatStandIn) -> None:
    standin.responder = lambda body: ANSWER
    result, usage = claude(standin, "claude-haiku-5-5").complete(SYSTEM, MESSAGE, SCHEMA)
    [call] = standin.calls(MESSAGES)
    body = call.body
    assert body["output_config"]["effort"] == "low"
    assert body["max_tokens"] == ANSWER_TOKENS + THINKING_TOKENS
    assert not {"temperature", "top_p", "top_k", "thinking"} & set(body)
    assert result == ANSWER  # the thinking block that comes first is not the answer
    assert usage.output_tokens == tokens(THINKING) + tokens(json.dumps(ANSWER))  # thinking is billed as output


def test_effort_is_sent_only_where_the_model_takes_that_level(standin: ChatStandIn) -> None:
    claude(standin, "claude-haiku-5-5", effort="xhigh").complete(SYSTEM, MESSAGE, SCHEMA)
    claude(standin, "claude-haiku-4-5", effort="low").complete(SYSTEM, MESSAGE, SCHEMA)
    first, second = standin.calls(MESSAGES)
    assert "effort" not in first.body["output_config"] and "effort" not in second.body["output_config"]


def test_only_the_given_text_leaves_the_machine(standin: ChatStandIn) -> None:
    """What is not in the system prompt or the message is never sent, not even in headers."""
    other = "PRIVATE-NOTE-7f3a: the salary of Tobias Reinholt"
    ext = claude(standin)
    ext.complete(SYSTEM, MESSAGE, SCHEMA)
    local(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    sent = standin.sent_text()
    assert PASSAGE in sent
    assert other not in sent and "PRIVATE-NOTE" not in sent


def test_anthropic_responder_sees_the_request(standin: ChatStandIn) -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        return {
            "entities": [{"name": "Acme Corp", "type": "Organization", "aliases": []}],
            "relationships": [],
            "claims": [],
        }

    standin.responder = responder
    result, _ = claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert result["entities"][0]["name"] == "Acme Corp"
    assert len(seen) == 1 and seen[0]["messages"][0]["content"] == MESSAGE


# Anthropic: transient failures are retried -----------------------------------------------------------


@pytest.mark.parametrize("fault", ["rate_limit_next", "overloaded_next", "fail_next", "drop_next"])
def test_anthropic_retries_two_transient_failures(standin: ChatStandIn, fault: str) -> None:
    standin.responder = lambda body: ANSWER
    setattr(standin, fault, 2)
    result, usage = claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert result == ANSWER and usage.output_tokens > 0
    assert len(standin.calls(MESSAGES)) == 3


def test_rate_limit_answer_says_retry_after(standin: ChatStandIn) -> None:
    """The stand-in's 429 looks like Anthropic's; the SDK's own retries are off (max_retries=0)."""
    import anthropic

    standin.rate_limit_next = 1
    client = anthropic.Anthropic(api_key="k", base_url=standin.base_url, max_retries=0)
    with pytest.raises(anthropic.RateLimitError) as info:
        client.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert info.value.response.headers["retry-after"] == "0"
    assert info.value.type == "rate_limit_error"
    assert claude(standin).client.max_retries == 0


def test_anthropic_retries_a_hang_past_the_timeout(standin: ChatStandIn) -> None:
    standin.hang_next = 1
    started = time.monotonic()
    result, _ = claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert result == {"entities": [], "relationships": [], "claims": []}
    assert len(standin.calls(MESSAGES)) == 2
    assert time.monotonic() - started < 4.0  # the client gave up after its 0.5 s timeout


@pytest.mark.parametrize("fault", ["fail_next", "overloaded_next", "rate_limit_next"])
def test_anthropic_persistent_failure_is_a_chunk_error(standin: ChatStandIn, fault: str) -> None:
    setattr(standin, fault, 100)
    with pytest.raises(ExtractError) as info:
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert not isinstance(info.value, FatalExtractError)
    assert f"after {RETRIES} tries" in str(info.value)
    assert len(standin.calls(MESSAGES)) == RETRIES


def test_anthropic_unreachable_is_a_chunk_error_after_retries() -> None:
    ext = AnthropicExtractor(
        model="claude-haiku-4-5",
        api_key="test-key",
        base_url=f"http://127.0.0.1:{closed_port()}",
        timeout=0.5,
        backoff=0.001,
    )
    with pytest.raises(ExtractError) as info:
        ext.complete(SYSTEM, MESSAGE, SCHEMA)
    assert not isinstance(info.value, FatalExtractError)
    assert "APIConnectionError" in str(info.value)


# Anthropic: fatal failures stop the run at once ------------------------------------------------------


def test_anthropic_bad_key_is_fatal_and_not_retried(standin: ChatStandIn) -> None:
    standin.unauthorized_next = 1
    with pytest.raises(FatalExtractError) as info:
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert "test-key" not in str(info.value)
    assert len(standin.calls(MESSAGES)) == 1


def test_anthropic_credit_balance_is_fatal_and_not_retried(standin: ChatStandIn) -> None:
    standin.no_credit_next = 1
    with pytest.raises(FatalExtractError) as info:
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert "spend limit" in str(info.value)
    assert "credit balance is too low" in str(info.value)  # Anthropic's own words are kept
    assert len(standin.calls(MESSAGES)) == 1
    assert standin.calls(MESSAGES)[0].body["messages"][0]["content"] == MESSAGE


def test_a_model_kb_does_not_know_or_a_retired_one_is_refused_before_any_call() -> None:
    with pytest.raises(ConfigError, match="not in kb's capability table"):
        AnthropicExtractor(model="gpt-4o", api_key="test-key")
    with pytest.raises(ConfigError, match='retired: set extractor = "anthropic:claude-haiku-5-5"'):
        AnthropicExtractor(model="claude-3-5-haiku-latest", api_key="test-key")


def test_anthropic_404_model_is_fatal_and_names_the_fix() -> None:
    with ChatStandIn(anthropic_models=lambda m: False) as standin:
        with pytest.raises(FatalExtractError) as info:
            claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
        assert len(standin.calls(MESSAGES)) == 1
    assert "404" in str(info.value) and "model: claude-haiku-4-5" in str(info.value)
    assert 'extractor = "anthropic:claude-haiku-5-5"' in str(info.value)


def test_anthropic_bad_request_is_fatal_and_quotes_the_api(standin: ChatStandIn) -> None:
    """A 400 would come back for every chunk: the run stops at once with the API's own words."""
    with pytest.raises(FatalExtractError) as info:
        claude(standin).complete(SYSTEM, "", SCHEMA)
    assert "400: messages: text content blocks must be non-empty" in str(info.value)
    assert "extract/capabilities.py" in str(info.value)
    assert len(standin.calls(MESSAGES)) == 1


def test_anthropic_spend_limit_429_is_fatal_and_not_retried(standin: ChatStandIn) -> None:
    standin.spend_limit_next = 100
    with pytest.raises(FatalExtractError) as info:
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert "spend limit" in str(info.value)
    assert len(standin.calls(MESSAGES)) == 1


def test_anthropic_payment_required_is_fatal(standin: ChatStandIn) -> None:
    standin.payment_required_next = 1
    with pytest.raises(FatalExtractError):
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)


# Anthropic: output ---------------------------------------------------------------------------------


def test_anthropic_invalid_json_is_invalid_output(standin: ChatStandIn) -> None:
    standin.invalid_json_next = 1
    with pytest.raises(InvalidOutput) as info:
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert not isinstance(info.value, FatalExtractError)
    assert "not JSON" in str(info.value)
    assert len(standin.calls(MESSAGES)) == 1


@pytest.mark.parametrize("raw", ["[1, 2]", '"entities"', "", "Here is the JSON: {}"])
def test_anthropic_non_object_answer_is_invalid_output(standin: ChatStandIn, raw: str) -> None:
    standin.responder = lambda body: raw
    with pytest.raises(InvalidOutput):
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)


def test_a_truncated_answer_is_recorded_and_not_retried(standin: ChatStandIn) -> None:
    standin.truncate_next = 1
    with pytest.raises(Truncated, match=f"stopped at max_tokens \\({ANSWER_TOKENS}\\)"):
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert len(standin.calls(MESSAGES)) == 1


def test_an_answer_longer_than_max_tokens_stops_there(standin: ChatStandIn) -> None:
    standin.responder = lambda body: {
        "entities": [{"name": "x" * 40_000, "type": "Concept", "aliases": []}],
        "relationships": [],
        "claims": [],
    }
    with pytest.raises(Truncated):
        claude(standin).complete(SYSTEM, MESSAGE, SCHEMA)


def test_a_refusal_is_recorded_and_not_retried(standin: ChatStandIn) -> None:
    standin.refusal_next = 1
    with pytest.raises(Refused, match="declined"):
        claude(standin, "claude-haiku-5-5").complete(SYSTEM, MESSAGE, SCHEMA)
    assert len(standin.calls(MESSAGES)) == 1


def test_retry_after_is_honoured(standin: ChatStandIn) -> None:
    standin.rate_limit_next, standin.retry_after = 1, "0.3"
    started = time.monotonic()
    claude(standin, backoff=0.001).complete(SYSTEM, MESSAGE, SCHEMA)
    assert time.monotonic() - started >= 0.3 and len(standin.calls(MESSAGES)) == 2


def test_token_counting_endpoint(standin: ChatStandIn) -> None:
    n = claude(standin, "claude-haiku-5-5").count(SYSTEM, MESSAGE, SCHEMA)
    [call] = standin.calls("/v1/messages/count_tokens")
    assert n == input_tokens_for(call.body) and "max_tokens" not in call.body


def test_invalid_json_fault_counts_down(standin: ChatStandIn) -> None:
    standin.invalid_json_next = 1
    standin.responder = lambda body: "{}"
    with pytest.raises(InvalidOutput):
        local(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert INVALID_JSON.startswith("{")
    assert local(standin).complete(SYSTEM, MESSAGE, SCHEMA)[0] == {}  # the fault counted down


# Ollama ------------------------------------------------------------------------------------------


def test_ollama_sends_schema_format_and_temperature_zero(standin: ChatStandIn) -> None:
    standin.responder = lambda body: ANSWER
    result, usage = local(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert result == ANSWER
    [call] = standin.calls()
    assert (call.method, call.path) == ("POST", CHAT)
    body = call.body
    assert body["model"] == "qwen2.5:7b"
    assert body["format"] == SCHEMA
    assert body["options"] == {"temperature": 0, "num_ctx": context_for(SYSTEM, MESSAGE, SCHEMA)}
    assert body["stream"] is False
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": MESSAGE}]
    assert usage == Usage(input_tokens_for(body), tokens(json.dumps(ANSWER)))


def test_ollama_remote_flag() -> None:
    assert OllamaExtractor("qwen2.5:7b", host="http://127.0.0.1:11434").remote is False
    assert OllamaExtractor("qwen2.5:7b", host="http://localhost:11434").remote is False
    assert OllamaExtractor("qwen2.5:7b", host="localhost:11434").remote is False
    assert OllamaExtractor("qwen2.5:7b", host="http://[::1]:11434").remote is False
    assert OllamaExtractor("qwen2.5:7b", host="http://10.1.2.3:11434").remote is True  # constructed, never called
    assert OllamaExtractor("qwen2.5:7b", host="https://ollama.example.com").remote is True
    assert AnthropicExtractor.remote is True


def test_ollama_missing_model_is_fatal_with_pull_hint(standin: ChatStandIn) -> None:
    with pytest.raises(FatalExtractError) as info:
        local(standin, model="llama3.1:8b").complete(SYSTEM, MESSAGE, SCHEMA)
    assert "ollama pull llama3.1:8b" in str(info.value)
    assert len(standin.calls(CHAT)) == 1


def test_ollama_context_fits_prompt_and_answer(standin: ChatStandIn) -> None:
    """Ollama's default window would cut a long chunk's start; num_ctx makes room for prompt and answer."""
    long_message = user_message("work/long.md", None, "Long", "Acme Corp had 120 customers. " * 900)
    standin.responder = lambda body: ANSWER
    result, _ = local(standin).complete(SYSTEM, long_message, SCHEMA)
    [call] = standin.calls(CHAT)
    assert result == ANSWER and call.body["options"]["num_ctx"] > input_tokens_for(call.body) + ANSWER_TOKENS // 2
    assert context_for(SYSTEM, long_message, SCHEMA) % 1024 == 0


def test_ollama_cut_answer_is_truncated(standin: ChatStandIn) -> None:
    standin.responder = lambda body: "x" * 100_000
    with pytest.raises(Truncated):
        local(standin).complete(SYSTEM, MESSAGE, SCHEMA)


def test_ollama_invalid_json_is_invalid_output(standin: ChatStandIn) -> None:
    standin.invalid_json_next = 1
    with pytest.raises(InvalidOutput):
        local(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert len(standin.calls(CHAT)) == 1


@pytest.mark.parametrize("fault", ["drop_next", "hang_next"])
def test_ollama_retries_dropped_and_hung_requests(standin: ChatStandIn, fault: str) -> None:
    standin.responder = lambda body: ANSWER
    setattr(standin, fault, 2)
    result, _ = local(standin, timeout=0.5).complete(SYSTEM, MESSAGE, SCHEMA)
    assert result == ANSWER
    assert len(standin.calls(CHAT)) == 3


def test_ollama_not_running_is_fatal_after_retries() -> None:
    ext = OllamaExtractor("qwen2.5:7b", host=f"http://127.0.0.1:{closed_port()}", backoff=0.001)
    with pytest.raises(FatalExtractError) as info:
        ext.complete(SYSTEM, MESSAGE, SCHEMA)
    assert "ollama serve" in str(info.value)


def test_ollama_server_error_is_a_chunk_error(standin: ChatStandIn) -> None:
    standin.fail_next = 100
    with pytest.raises(ExtractError) as info:
        local(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert not isinstance(info.value, FatalExtractError)
    assert "llama runner process has terminated" in str(info.value)


def test_ollama_retries_two_server_errors(standin: ChatStandIn) -> None:
    standin.fail_next = 2
    local(standin).complete(SYSTEM, MESSAGE, SCHEMA)
    assert len(standin.calls(CHAT)) == 3


def test_the_models_api_refreshes_the_capability_table(standin: ChatStandIn) -> None:
    ext = AnthropicExtractor("claude-haiku-5-5", "test-key", standin.base_url, ask_models_api=True)
    assert ext.entry.effort == ("low", "medium", "high", "max") and ext.entry.max_output == 128_000
    assert [r.path for r in standin.calls()] == ["/v1/models/claude-haiku-5-5"]
    ext.complete(SYSTEM, MESSAGE, SCHEMA)
    assert standin.calls(MESSAGES)[0].body["output_config"]["effort"] == "low"
    down = AnthropicExtractor(
        "claude-haiku-4-5", "k", f"http://127.0.0.1:{closed_port()}", timeout=0.5, ask_models_api=True
    )
    assert down.entry.effort == () and down.entry.max_output == 64_000  # unreachable: the table as it is
