"""Extractor backends behind one interface: Anthropic (structured outputs) and Ollama (JSON-schema format)."""

from __future__ import annotations

import json
import random
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from kb.config import DEFAULT_EXTRACTOR, Config
from kb.errors import ConfigError
from kb.extract.capabilities import ERRORS_DOC, MODELS, RETIRED, Model
from kb.extract.capabilities import model as model_entry
from kb.extract.errors import ExtractError, FatalExtractError, InvalidOutput, Refused, Truncated
from kb.tokens import count_tokens

RETRIES = 5
DEFAULT_MODEL = DEFAULT_EXTRACTOR.partition(":")[2]
ANSWER_TOKENS = 4096  # the longest extraction answer kb accepts
THINKING_TOKENS = 8192  # room for adaptive thinking, which counts toward max_tokens (billed only when used)
EXTRACT_EFFORT = "low"  # extraction copies what a passage states: the lowest effort the model accepts


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


class Extractor(Protocol):
    """Sends one system prompt and one message; returns the parsed JSON object and the token usage."""

    model: str
    remote: bool  # True when text leaves this machine

    def complete(self, system: str, message: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]: ...


def _retry(
    call: Callable[[], Any],
    transient: tuple[type[BaseException], ...],
    backoff: float,
    hint: Callable[[BaseException], float | None] = lambda exc: None,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Retry transient failures with exponential backoff; a server's `retry-after` (via `hint`) wins."""
    delay = backoff
    for attempt in range(RETRIES):
        try:
            return call()
        except transient as exc:
            if attempt == RETRIES - 1:
                raise
            told = hint(exc)
            sleep(told if told is not None else delay * (1 + random.random() / 4))
            delay *= 2
    raise AssertionError("unreachable")


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a `retry-after` header (https://platform.claude.com/docs/en/api/rate-limits), capped at 60."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(60.0, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None


def _parse_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidOutput(f"not JSON: {exc.msg} at {exc.pos}") from exc
    if not isinstance(value, dict):
        raise InvalidOutput("the answer is JSON but not an object")
    return value


def known_model(model: str) -> Model:
    """The capability entry, or a one-line error naming the models kb knows."""
    if model.startswith(RETIRED):
        raise ConfigError(
            f'extractor model {model!r} is retired: set extractor = "{DEFAULT_EXTRACTOR}" in the kb config'
        )
    entry = model_entry(model)
    if entry is None:
        raise ConfigError(
            f"extractor model {model!r} is not in kb's capability table (extract/capabilities.py): "
            f"use one of {', '.join(MODELS)}"
        )
    return entry


def request_params(
    entry: Model, model: str, system: str, message: str, schema: dict[str, Any], effort: str | None = EXTRACT_EFFORT
) -> dict[str, Any]:
    """The Messages API parameters for one call: optional ones only where the model takes them; the schema
    through the SDK's `transform_schema` (unsupported limits become descriptions; kb validates them locally)."""
    import anthropic

    config: dict[str, Any] = {"format": {"type": "json_schema", "schema": anthropic.transform_schema(schema)}}
    if effort and effort in entry.effort:
        config["effort"] = effort
    budget = ANSWER_TOKENS + (THINKING_TOKENS if entry.thinking == "adaptive" else 0)
    return {
        "model": model,
        "max_tokens": min(budget, entry.max_output),
        "system": system,
        "messages": [{"role": "user", "content": message}],
        "output_config": config,
    }


def parse_message(model: str, max_tokens: int, resp: Any) -> tuple[dict[str, Any], Usage]:
    """The answer's JSON from its text blocks (thinking blocks skipped); a truncated answer or a refusal is
    an error with its reason (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons)."""
    stop = getattr(resp, "stop_reason", None)
    if stop == "max_tokens":
        raise Truncated(f"{model} stopped at max_tokens ({max_tokens}) before the answer was complete")
    if stop == "refusal":
        raise Refused(f"{model} declined to answer (stop_reason refusal)")
    text = "".join(getattr(b, "text", "") for b in resp.content if getattr(b, "type", "text") == "text")
    return _parse_json(text), Usage(resp.usage.input_tokens, resp.usage.output_tokens)


class AnthropicExtractor:
    """Claude through the official SDK: structured outputs, effort only where the model takes it."""

    remote = True

    def __init__(
        self,
        model: str,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 120.0,
        backoff: float = 1.0,
        effort: str | None = EXTRACT_EFFORT,
        ask_models_api: bool = False,
    ) -> None:
        import anthropic

        self.anthropic = anthropic
        self.entry = known_model(model)
        self.model = model
        self.effort = effort
        self.backoff = backoff
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)
        if ask_models_api:
            self.entry = self._from_models_api(self.entry)

    def _from_models_api(self, entry: Model) -> Model:
        """The table entry refreshed by the Models API's capabilities when it answers (effort levels, output
        limit); the table as it is when it does not (https://platform.claude.com/docs/en/api/models/retrieve)."""
        try:
            info = self.client.models.retrieve(self.model, timeout=10.0)
        except self.anthropic.AnthropicError:
            return entry
        if info.lifecycle == "retired":
            raise ConfigError(
                f'extractor model {self.model!r} is retired: set extractor = "{DEFAULT_EXTRACTOR}" in the kb config'
            )
        caps = info.capabilities
        if caps is None:
            return entry
        effort = caps.effort
        levels = tuple(
            lvl for lvl in ("low", "medium", "high", "max") if effort.supported and getattr(effort, lvl).supported
        )
        return replace(
            entry,
            effort=levels,
            max_output=info.max_tokens or entry.max_output,
            structured_outputs=caps.structured_outputs.supported,
        )

    def params(self, system: str, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        return request_params(self.entry, self.model, system, message, schema, self.effort)

    @property
    def max_tokens(self) -> int:
        return int(request_params(self.entry, self.model, "", "", {"type": "object"}, None)["max_tokens"])

    def complete(self, system: str, message: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        params = self.params(system, message, schema)
        resp = self.call(lambda: self.client.messages.create(**params))
        return parse_message(self.model, params["max_tokens"], resp)

    def count(self, system: str, message: str, schema: dict[str, Any]) -> int | None:
        """Input tokens by the token-counting endpoint, or None when it cannot be reached."""
        params = {k: v for k, v in self.params(system, message, schema).items() if k != "max_tokens"}
        try:
            return int(self.call(lambda: self.client.messages.count_tokens(**params)).input_tokens)
        except ExtractError:
            return None

    def call(self, call: Callable[[], Any]) -> Any:
        """One API call: transient failures retried (honouring retry-after), the rest mapped to kb's errors."""
        a = self.anthropic
        transient = (a.RateLimitError, a.InternalServerError, a.APITimeoutError, a.APIConnectionError)
        try:
            return _retry(lambda: _stop_on_spend_limit(a, call), transient, self.backoff, _retry_after)
        except _SpendLimit as exc:
            raise FatalExtractError(
                f"Anthropic stopped the run: spend limit or credit balance reached "
                f"({_short(str(exc))}): raise the limit, then run kb refresh again"
            ) from exc
        except transient as exc:
            raise ExtractError(f"Anthropic kept failing after {RETRIES} tries: {type(exc).__name__}") from exc
        except a.APIStatusError as exc:
            raise self._status_error(exc) from exc

    def _status_error(self, exc: Any) -> ExtractError:
        """401/403/404/400 stop the run (nothing after would succeed); 413 and others fail one item."""
        said = _api_message(exc)
        if exc.status_code in (401, 403):
            return FatalExtractError(
                f"Anthropic refused the API key ({exc.status_code}: {said}): set ANTHROPIC_API_KEY to a valid key"
            )
        if exc.status_code == 404:
            return FatalExtractError(
                f"Anthropic answered 404 for model {self.model!r} ({said}): set extractor = "
                f'"{DEFAULT_EXTRACTOR}" in the kb config'
            )
        if exc.status_code == 400:
            return FatalExtractError(
                f"Anthropic refused kb's request to {self.model} (400: {said}): kb's "
                f"request does not fit this model; pick another in extract/capabilities.py "
                f"or report it ({ERRORS_DOC})"
            )
        return ExtractError(f"Anthropic rejected the request ({exc.status_code}: {said})")


def _api_message(exc: Any) -> str:
    """The API's own words: `error.message` of the body, else the exception text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict) and body["error"].get("message"):
        return _short(str(body["error"]["message"]))
    return _short(str(exc))


class _SpendLimit(Exception):
    """Out of credit or over a spend limit (HTTP 400, 402 or 429): stop the run, never retry."""


_SPEND_CODES = {
    "enforced_spend_limit_reached",
    "contract_spend_limit_reached",
    "linked_organization_spend_limit_reached",
    "linked_organization_billing_unavailable",
}


def _stop_on_spend_limit(a: Any, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except a.APIStatusError as exc:
        text = str(exc).lower()
        if (
            exc.status_code == 402
            or getattr(exc, "error_code", None) in _SPEND_CODES
            or (
                exc.status_code in (400, 429)
                and any(w in text for w in ("credit balance", "spend limit", "usage limits", "billing"))
            )
        ):
            raise _SpendLimit(str(exc)) from exc
        raise


def _short(text: str) -> str:
    return " ".join(text.split())[:200]


class _Busy(Exception):
    """Ollama answered 5xx or 429 (runner crashed, too many requests): retried."""


def context_for(system: str, message: str, schema: dict[str, Any]) -> int:
    """Ollama's `num_ctx` for one call: prompt (counted with cl100k, plus a quarter for other tokenizers) and
    the answer, rounded up to 1,024; its default window (2,048-4,096) silently cuts a long prompt's start."""
    prompt = count_tokens(system) + count_tokens(message) + count_tokens(json.dumps(schema))
    need = int(prompt * 1.25) + ANSWER_TOKENS
    return -(-need // 1024) * 1024


class OllamaExtractor:
    """A local chat model through Ollama, constrained by the JSON schema (`format`)."""

    def __init__(self, model: str, host: str, timeout: float = 300.0, backoff: float = 1.0) -> None:
        import ollama

        self.ollama = ollama
        self.model = model
        self.host = host
        self.backoff = backoff
        self.client = ollama.Client(host=host, timeout=timeout)
        hostname = urllib.parse.urlparse(host if "://" in host else f"http://{host}").hostname or ""
        self.remote = hostname not in ("127.0.0.1", "localhost", "::1")

    def complete(self, system: str, message: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        import httpx

        options = {"temperature": 0, "num_ctx": context_for(system, message, schema)}

        def call() -> Any:
            try:
                return self.client.chat(
                    model=self.model,
                    format=schema,
                    options=options,
                    messages=[{"role": "system", "content": system}, {"role": "user", "content": message}],
                )
            except self.ollama.ResponseError as exc:
                if exc.status_code >= 500 or exc.status_code == 429:
                    raise _Busy(str(exc.error)) from exc
                raise

        try:
            resp = _retry(call, (httpx.TransportError, ConnectionError, _Busy), self.backoff)
        except self.ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise FatalExtractError(
                    f"Ollama at {self.host} has no model {self.model!r}: run `ollama pull {self.model}`"
                ) from exc
            raise FatalExtractError(
                f"Ollama refused kb's request ({exc.status_code}: {_short(str(exc.error))}): "
                "update Ollama (kb needs 0.5 or newer for a JSON-schema format)"
            ) from exc
        except _Busy as exc:
            raise ExtractError(f"Ollama kept failing after {RETRIES} tries: {exc}") from exc
        except (httpx.TransportError, ConnectionError) as exc:
            raise FatalExtractError(f"cannot reach Ollama at {self.host}: start it with `ollama serve`") from exc
        if getattr(resp, "done_reason", None) == "length":
            raise Truncated(f"{self.model} stopped at its output limit before the answer was complete")
        usage = Usage(int(resp.prompt_eval_count or 0), int(resp.eval_count or 0))
        return _parse_json(resp.message.content or ""), usage


def extractor_spec(cfg: Config) -> tuple[str, str]:
    """(backend, model) from the `extractor` key; Anthropic's default model when none is named."""
    backend, _, model = cfg.extractor.partition(":")
    return backend, model or (DEFAULT_MODEL if backend == "anthropic" else "")


def make_extractor(cfg: Config, env: dict[str, str], probe: bool = True) -> Extractor | None:
    """The configured extractor, or None when it cannot run here (no API key): the layer is skipped. With
    `probe`, the Models API is asked for the model's capabilities (a dry run sends nothing: no probe)."""
    backend, model = extractor_spec(cfg)
    if backend == "anthropic":
        key = env.get("ANTHROPIC_API_KEY")
        if not key:
            return None
        return AnthropicExtractor(model, key, env.get("ANTHROPIC_BASE_URL"), ask_models_api=probe)
    if backend == "ollama":
        if not model:
            raise ConfigError("extractor = 'ollama:' needs a model, e.g. extractor = \"ollama:qwen2.5:7b\"")
        return OllamaExtractor(model, cfg.ollama_host)
    raise ConfigError(f"extractor = {backend!r} is unknown: use 'anthropic:MODEL' or 'ollama:MODEL'")
