"""A local stand-in for the two chat APIs kb's extractor uses, with programmable faults.

Speaks Anthropic's Messages API (`POST /v1/messages`, non-streaming; `POST /v1/messages/count_tokens`; the
Message Batches endpoints) and Ollama's chat API (`POST /api/chat`, `stream: false`), in the exact response
shapes the official `anthropic` and `ollama` clients parse. It refuses what the documented API refuses
(anthropic_rules.py, each rule beside its documentation page): a request the real API would reject is
rejected here too. The assistant's answer comes from `responder`, set per test: given the request body, it
returns the JSON object to answer with (serialised as the assistant's text), or a raw string (for
invalid-JSON tests). Faults apply to the next N requests, in the order of `FAULTS`. Every request is
recorded (method, path, headers, parsed JSON body, raw body), so tests can assert what was sent and
what was not.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any

from anthropic_rules import CUSTOM_ID, MODELS, request_problem
from standin_http import JsonHandler, Recorded, StandInServer, full_name

Responder = Callable[[dict[str, Any]], str | dict[str, Any]]

EMPTY: dict[str, Any] = {"entities": [], "relationships": [], "claims": []}
DEFAULT_OLLAMA_MODELS = frozenset({"qwen2.5:7b"})
CREDIT_MESSAGE = (
    "Your credit balance is too low to access the Anthropic API. "
    "Please go to Plans & Billing to upgrade or purchase credits."
)
SPEND_LIMIT_MESSAGE = (
    "You have reached your specified workspace API usage limits. You will regain access on 2026-12-01 at 00:00 UTC."
)
INVALID_JSON = '{"entities": [{"name": "Acme", "type": '  # a truncated answer
THINKING = "The passage names a company and a count; I copy what it states."

# Fault counters, in the order they are taken (one fault per request at most).
FAULTS = (
    "drop_next",
    "hang_next",
    "unauthorized_next",
    "no_credit_next",
    "spend_limit_next",
    "payment_required_next",
    "rate_limit_next",
    "overloaded_next",
    "fail_next",
    "invalid_json_next",
    "refusal_next",
    "truncate_next",
)


def default_responder(body: dict[str, Any]) -> dict[str, Any]:
    """An extraction that found nothing."""
    return dict(EMPTY)


def tokens(text: str) -> int:
    """The stand-in's token count for a text: about four characters a token, at least one."""
    return max(1, len(text) // 4)


def prompt_text(body: dict[str, Any]) -> str:
    """Everything the model would read from a Messages or chat request: system prompt, then messages."""
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(str(b.get("text", "")) for b in system if isinstance(b, dict))
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def input_tokens_for(body: dict[str, Any]) -> int:
    """The input (prompt) token count the stand-in reports for a request body."""
    return tokens(prompt_text(body))


class ChatStandIn(StandInServer):
    """A stand-in Anthropic Messages and Ollama chat server on 127.0.0.1; use as a context manager."""

    FAULTS = FAULTS

    def __init__(
        self,
        responder: Responder | None = None,
        ollama_models: frozenset[str] | set[str] | None = None,
        anthropic_models: Callable[[str], bool] | None = None,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.ollama_models = {full_name(m) for m in (ollama_models or DEFAULT_OLLAMA_MODELS)}
        self.anthropic_models: Callable[[str], bool] = anthropic_models or (lambda m: m in MODELS)
        self.drop_next = 0  # close the socket without any response
        self.hang_next = 0  # wait `hang_seconds` (longer than any test timeout), then answer normally
        self.hang_seconds = 5.0
        self.unauthorized_next = 0  # 401 authentication_error
        self.no_credit_next = 0  # 400 invalid_request_error: credit balance too low
        self.spend_limit_next = 0  # 429 rate_limit_error with error_code enforced_spend_limit_reached
        self.payment_required_next = 0  # 402 with error_code linked_organization_spend_limit_reached
        self.rate_limit_next = 0  # 429 rate_limit_error, retry-after: `retry_after`
        self.retry_after = "0"
        self.overloaded_next = 0  # 529 overloaded_error
        self.fail_next = 0  # 500 api_error
        self.invalid_json_next = 0  # 200, but the assistant's text is not JSON
        self.refusal_next = 0  # 200, stop_reason "refusal"
        self.truncate_next = 0  # 200, stop_reason "max_tokens" (the answer cut short)
        # a test's own refusal: given a request body, a message to answer 400 invalid_request_error with, or None
        self.refuse: Callable[[dict[str, Any]], str | None] = lambda body: None
        self.batches: dict[str, dict[str, Any]] = {}
        self.end_batches = True  # a batch has ended by the first retrieve after it was created
        self.expire_batches = False  # ...with every request expired instead
        self.errored_ids: set[str] = set()  # custom_ids whose batch result is an api_error
        self._ids = itertools.count(1)
        super().__init__(_make_handler(self), "chat-standin")

    @property
    def base_url(self) -> str:
        """For `anthropic.Anthropic(base_url=...)` and `ollama.Client(host=...)` alike."""
        return f"http://127.0.0.1:{self.port}"

    host = base_url

    def calls(self, path: str | None = None) -> list[Recorded]:
        """The recorded requests (to `path`, if given), oldest first."""
        with self._lock:
            return [r for r in self.requests if path is None or r.path == path]

    def sent_text(self) -> str:
        """Every request's headers and body as sent, joined: assert that a text is `not in` it."""
        with self._lock:
            return "\n".join(f"{r.method} {r.path}\n{json.dumps(r.headers)}\n{r.raw}" for r in self.requests)

    def _answer(self, body: dict[str, Any], fault: str | None) -> str:
        if fault == "invalid_json_next":
            return INVALID_JSON
        value = self.responder(body)
        return value if isinstance(value, str) else json.dumps(value)

    def _next_id(self, prefix: str) -> str:
        n = next(self._ids)
        return prefix + hashlib.sha256(f"{prefix}{n}".encode()).hexdigest()[:24]

    # Anthropic -------------------------------------------------------------------------------------

    def _anthropic_error(
        self, status: int, kind: str, message: str, error_code: str | None = None
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        error: dict[str, Any] = {"type": kind, "message": message}
        if error_code:
            error["details"] = {"error_code": error_code}
        headers = {"request-id": self._next_id("req_")}
        if status == 429:
            headers["retry-after"] = self.retry_after  # https://platform.claude.com/docs/en/api/rate-limits
        return status, {"type": "error", "error": error, "request_id": headers["request-id"]}, headers

    def _fault_answer(self, fault: str | None) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        if fault == "unauthorized_next":
            return self._anthropic_error(401, "authentication_error", "invalid x-api-key")
        if fault == "no_credit_next":
            return self._anthropic_error(400, "invalid_request_error", CREDIT_MESSAGE)
        if fault == "spend_limit_next":
            return self._anthropic_error(429, "rate_limit_error", SPEND_LIMIT_MESSAGE, "enforced_spend_limit_reached")
        if fault == "payment_required_next":
            return self._anthropic_error(
                402,
                "billing_error",
                "This organization has reached its spend limit.",
                "linked_organization_spend_limit_reached",
            )
        if fault == "rate_limit_next":
            return self._anthropic_error(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your "
                "per-minute rate limit (https://docs.claude.com/en/api/rate-limits)",
            )
        if fault == "overloaded_next":
            return self._anthropic_error(529, "overloaded_error", "Overloaded")
        if fault == "fail_next":
            return self._anthropic_error(500, "api_error", "Internal server error")
        return None

    def _checked(self, headers: dict[str, str], body: Any) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        """The error answer for a request the documented API refuses, else None."""
        if not headers.get("x-api-key") and not headers.get("authorization"):
            return self._anthropic_error(401, "authentication_error", "x-api-key header is required")
        if not isinstance(body, dict):
            return self._anthropic_error(400, "invalid_request_error", "request body is not a JSON object")
        return self._body_problem(body)

    def _body_problem(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        for field in ("model", "max_tokens", "messages"):
            if field not in body:
                return self._anthropic_error(400, "invalid_request_error", f"{field}: Field required")
        for msg in body["messages"]:
            if isinstance(msg, dict) and msg.get("content") in ("", []):
                return self._anthropic_error(
                    400, "invalid_request_error", "messages: text content blocks must be non-empty"
                )
        if body.get("stream"):
            return self._anthropic_error(400, "invalid_request_error", "the stand-in does not stream")
        if not self.anthropic_models(str(body["model"])):
            return self._anthropic_error(404, "not_found_error", f"model: {body['model']}")
        problem = request_problem(body)
        if problem:
            return self._anthropic_error(*problem)
        said = self.refuse(body)
        return self._anthropic_error(400, "invalid_request_error", said) if said else None

    def _message(self, body: dict[str, Any], fault: str | None) -> dict[str, Any]:
        """A Message for an accepted request: thinking first on adaptive models, stop_reason as documented."""
        model = str(body["model"])
        adaptive = MODELS[model].adaptive if model in MODELS else False
        thought = THINKING if adaptive and "thinking" not in body else ""
        text = self._answer(body, fault)
        stop = "end_turn"
        used = tokens(thought) if thought else 0
        if fault == "refusal_next":
            text, stop = "", "refusal"
        elif fault == "truncate_next" or used + tokens(text) > int(body["max_tokens"]):
            text, stop = text[: max(0, (int(body["max_tokens"]) - used) * 4) // 2], "max_tokens"
        content: list[dict[str, Any]] = []
        if thought:
            content.append({"type": "thinking", "thinking": thought, "signature": "c2ln"})
        content.append({"type": "text", "text": text})
        return {
            "id": self._next_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens_for(body),
                "output_tokens": used + tokens(text),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def _messages(
        self, headers: dict[str, str], body: Any, fault: str | None
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        refused = self._fault_answer(fault) or self._checked(headers, body)
        if refused:
            return refused
        return 200, self._message(body, fault), {"request-id": self._next_id("req_")}

    def _count_tokens(self, headers: dict[str, str], body: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
        """POST /v1/messages/count_tokens: the same checks as a message, no max_tokens."""
        if isinstance(body, dict):
            body = {**body, "max_tokens": 1}
        refused = self._checked(headers, body)
        if refused:
            return refused
        return 200, {"input_tokens": input_tokens_for(body)}, {}

    def _model_info(self, model_id: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        """GET /v1/models/{id}: the documented capabilities (https://platform.claude.com/docs/en/api/models)."""
        doc = MODELS.get(model_id)
        if doc is None or not self.anthropic_models(model_id):
            return self._anthropic_error(404, "not_found_error", f"model: {model_id}")
        yes_no = {lvl: {"supported": lvl in doc.effort} for lvl in ("low", "medium", "high", "max", "xhigh")}
        off = {"supported": False}
        caps = {
            "batch": {"supported": True},
            "citations": {"supported": True},
            "code_execution": off,
            "context_management": {
                "supported": False,
                "clear_thinking_20251015": None,
                "clear_tool_uses_20250919": None,
                "compact_20260112": None,
            },
            "effort": {"supported": bool(doc.effort), **yes_no},
            "image_input": {"supported": True},
            "pdf_input": {"supported": True},
            "server_tools": {"supported": False},
            "structured_outputs": {"supported": True},
            "thinking": {
                "supported": True,
                "types": {"adaptive": {"supported": doc.adaptive}, "enabled": {"supported": doc.budget_tokens}},
            },
        }
        return (
            200,
            {
                "type": "model",
                "id": model_id,
                "display_name": model_id,
                "created_at": "2026-10-07T00:00:00Z",
                "lifecycle": "active",
                "max_tokens": doc.max_output,
                "max_input_tokens": 1_000_000,
                "capabilities": caps,
            },
            {},
        )

    # Message Batches -------------------------------------------------------------------------------

    def _batch_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for r in batch["results"].values():
            counts[r["result"]["type"]] += 1
        counts["processing"] = len(batch["requests"]) - len(batch["results"])
        ended = batch["status"] == "ended"
        created = batch["created_at"]
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": batch["status"],
            "request_counts": counts,
            "created_at": created.isoformat(),
            "expires_at": (created + timedelta(hours=24)).isoformat(),  # 24 hours after creation
            "ended_at": created.isoformat() if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{batch['id']}/results" if ended else None,
        }

    def _create_batch(self, headers: dict[str, str], body: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
        if not headers.get("x-api-key") and not headers.get("authorization"):
            return self._anthropic_error(401, "authentication_error", "x-api-key header is required")
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return self._anthropic_error(400, "invalid_request_error", "requests: must be a non-empty list")
        ids = [r.get("custom_id") for r in requests]
        bad = next((i for i in ids if not isinstance(i, str) or not CUSTOM_ID.match(i)), None)
        if bad is not None or len(set(ids)) != len(ids):
            return self._anthropic_error(
                400,
                "invalid_request_error",
                f"requests: custom_id {bad!r} must match ^[a-zA-Z0-9_-]{{1,64}}$ and be unique within the batch",
            )
        batch = {
            "id": self._next_id("msgbatch_"),
            "requests": requests,
            "results": {},
            "status": "in_progress",
            "created_at": datetime.now(UTC),
        }
        with self._lock:
            self.batches[batch["id"]] = batch
        return 200, self._batch_view(batch), {}

    def _process(self, batch: dict[str, Any]) -> None:
        """End a batch: each request answered as the Messages API would, expired, or errored on demand."""
        for req in batch["requests"]:
            cid, params = req["custom_id"], req.get("params") or {}
            if self.expire_batches:
                result: dict[str, Any] = {"type": "expired"}
            elif cid in self.errored_ids:
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
                }
            else:
                refused = self._body_problem(params) if isinstance(params, dict) else None
                if refused:
                    result = {"type": "errored", "error": refused[1]}
                else:
                    result = {"type": "succeeded", "message": self._message(params, None)}
            batch["results"][cid] = {"custom_id": cid, "result": result}
        batch["status"] = "ended"

    def _retrieve_batch(self, batch_id: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return self._anthropic_error(404, "not_found_error", f"message_batch: {batch_id}")
        if batch["status"] == "in_progress" and self.end_batches:
            self._process(batch)
        return 200, self._batch_view(batch), {}

    def _batch_results(self, batch_id: str) -> tuple[int, str]:
        batch = self.batches.get(batch_id)
        if batch is None or batch["status"] != "ended":
            return 404, json.dumps(
                {"type": "error", "error": {"type": "not_found_error", "message": f"results of {batch_id}"}}
            )
        return 200, "".join(json.dumps(r) + "\n" for r in batch["results"].values())

    def _list_batches(self) -> tuple[int, dict[str, Any], dict[str, str]]:
        data = [self._batch_view(b) for b in reversed(list(self.batches.values()))]
        return (
            200,
            {
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            },
            {},
        )

    # Ollama ----------------------------------------------------------------------------------------

    def _chat(self, body: Any, fault: str | None) -> tuple[int, dict[str, Any], dict[str, str]]:
        # Ollama's errors are `{"error": "..."}`; the Anthropic-only faults map to its nearest answer.
        if fault == "unauthorized_next":
            return 401, {"error": "unauthorized"}, {}
        if fault in ("no_credit_next", "spend_limit_next", "payment_required_next", "rate_limit_next"):
            return 429, {"error": "too many requests"}, {}
        if fault == "overloaded_next":
            return 503, {"error": "server busy, please try again.  maximum pending requests exceeded"}, {}
        if fault == "fail_next":
            return 500, {"error": "llama runner process has terminated: exit status 2"}, {}
        if not isinstance(body, dict):
            return 400, {"error": "invalid request body"}, {}
        model = str(body.get("model", ""))
        if full_name(model) not in self.ollama_models:
            return 404, {"error": f'model "{model}" not found, try pulling it first'}, {}
        if body.get("stream", True):
            return 400, {"error": "the stand-in only speaks stream: false"}, {}
        text = self._answer(body, fault)
        # https://github.com/ollama/ollama/blob/main/docs/faq.md ("How can I specify the context window size?"):
        # a prompt longer than num_ctx (default 4096) is cut from the start; the stand-in answers from what is left
        num_ctx = int((body.get("options") or {}).get("num_ctx", 4096))
        prompt = input_tokens_for(body)
        done = "stop"
        if prompt + tokens(text) > num_ctx:
            text, done = "", "length"
        return (
            200,
            {
                "model": model,
                "created_at": "2026-11-29T12:00:00.000000000Z",
                "message": {"role": "assistant", "content": text},
                "done": True,
                "done_reason": done,
                "total_duration": 1_500_000_000,
                "load_duration": 20_000_000,
                "prompt_eval_count": min(prompt, num_ctx),
                "prompt_eval_duration": 300_000_000,
                "eval_count": tokens(text) if text else 0,
                "eval_duration": 1_100_000_000,
            },
            {},
        )


def _make_handler(standin: ChatStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def serve(self, method: str) -> None:
            raw, body = self.read_body()
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            standin._record(Recorded(method, path, body, headers, raw.decode("utf-8", "replace")))
            # token counting and model lookups are free and separate: faults are kept for the calls a test is about
            free = path == "/v1/messages/count_tokens" or path.startswith("/v1/models/")
            fault = None if free else standin._take_fault()
            if fault == "drop_next":
                self.drop()
                return
            if fault == "hang_next":
                standin._hang()
                fault = None
            self.route(method, path, headers, body, fault)

        def route(self, method: str, path: str, headers: dict[str, str], body: Any, fault: str | None) -> None:
            parts = path.strip("/").split("/")
            if (method, path) == ("POST", "/v1/messages"):
                self.send_json(*standin._messages(headers, body, fault))
            elif (method, path) == ("POST", "/v1/messages/count_tokens"):
                self.send_json(*standin._count_tokens(headers, body))
            elif (method, path) == ("POST", "/v1/messages/batches"):
                self.send_json(*(standin._fault_answer(fault) or standin._create_batch(headers, body)))
            elif (method, path) == ("GET", "/v1/messages/batches"):
                self.send_json(*standin._list_batches())
            elif method == "GET" and parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                self.send_json(*(standin._fault_answer(fault) or standin._retrieve_batch(parts[3])))
            elif method == "GET" and parts[:3] == ["v1", "messages", "batches"] and parts[4:] == ["results"]:
                status, text = standin._batch_results(parts[3])
                self.send_text(status, text, "application/x-jsonl" if status == 200 else "application/json")
            elif method == "GET" and parts[:2] == ["v1", "models"] and len(parts) == 3:
                self.send_json(*standin._model_info(parts[2]))
            elif (method, path) == ("POST", "/api/chat"):
                self.send_json(*standin._chat(body, fault))
            else:
                self.send_json(404, {"error": "404 page not found"}, {})

    return Handler


def running(responder: Responder | None = None) -> Iterator[ChatStandIn]:
    """Generator form for a pytest fixture: `yield from running()`."""
    with ChatStandIn(responder) as standin:
        yield standin
