"""Extractor backends behind one interface: Anthropic (structured outputs) and Ollama (JSON-schema format)."""

from __future__ import annotations

import json
import random
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from extract.errors import ExtractError, FatalExtractError, InvalidOutput
from kb.config import Config
from kb.errors import ConfigError

RETRIES = 5


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


class Extractor(Protocol):
    """Sends one system prompt and one message; returns the parsed JSON object and the token usage."""

    model: str
    remote: bool  # True when text leaves this machine

    def complete(self, system: str, message: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]: ...


def _retry(call: Callable[[], Any], transient: tuple[type[BaseException], ...], backoff: float,
           sleep: Callable[[float], None] = time.sleep) -> Any:
    delay = backoff
    for attempt in range(RETRIES):
        try:
            return call()
        except transient:
            if attempt == RETRIES - 1:
                raise
            sleep(delay * (1 + random.random() / 4))
            delay *= 2
    raise AssertionError("unreachable")


def _parse_json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidOutput(f"not JSON: {exc.msg} at {exc.pos}") from exc
    if not isinstance(value, dict):
        raise InvalidOutput("the answer is JSON but not an object")
    return value


class AnthropicExtractor:
    """Claude through the official SDK, with structured outputs (a JSON schema) and low effort."""

    remote = True

    def __init__(self, model: str, api_key: str, base_url: str | None = None, timeout: float = 120.0,
                 backoff: float = 1.0, effort: str | None = "low", max_tokens: int = 4096) -> None:
        import anthropic
        self.anthropic = anthropic
        self.model = model
        self.effort = effort
        self.max_tokens = max_tokens
        self.backoff = backoff
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    def complete(self, system: str, message: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        a = self.anthropic
        config: dict[str, Any] = {"format": {"type": "json_schema", "schema": schema}}
        if self.effort:
            config["effort"] = self.effort

        def call() -> Any:
            return self.client.messages.create(  # type: ignore[call-overload]
                model=self.model, max_tokens=self.max_tokens, system=system,
                messages=[{"role": "user", "content": message}], output_config=config)
        transient = (a.RateLimitError, a.InternalServerError, a.APITimeoutError, a.APIConnectionError)
        try:
            resp = _retry(lambda: _stop_on_spend_limit(a, call), transient, self.backoff)
        except _SpendLimit as exc:
            raise FatalExtractError(f"Anthropic stopped the run: spend limit or credit balance reached "
                                    f"({_short(str(exc))}): raise the limit, then run kb refresh again") from exc
        except (a.AuthenticationError, a.PermissionDeniedError) as exc:
            raise FatalExtractError(f"Anthropic refused the API key ({exc.status_code}): set ANTHROPIC_API_KEY "
                                    "to a valid key") from exc
        except a.NotFoundError as exc:
            raise FatalExtractError(f"Anthropic has no model {self.model!r}: set extract_model in the kb config") from exc
        except transient as exc:
            raise ExtractError(f"Anthropic kept failing after {RETRIES} tries: {type(exc).__name__}") from exc
        except a.APIStatusError as exc:
            raise ExtractError(f"Anthropic rejected the request ({exc.status_code}): {_short(str(exc))}") from exc
        text = "".join(getattr(b, "text", "") for b in resp.content)
        usage = Usage(resp.usage.input_tokens, resp.usage.output_tokens)
        return _parse_json(text), usage


class _SpendLimit(Exception):
    """Out of credit or over a spend limit (HTTP 400, 402 or 429): stop the run, never retry."""


_SPEND_CODES = {"enforced_spend_limit_reached", "contract_spend_limit_reached",
                "linked_organization_spend_limit_reached", "linked_organization_billing_unavailable"}


def _stop_on_spend_limit(a: Any, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except a.APIStatusError as exc:
        text = str(exc).lower()
        if (exc.status_code == 402 or getattr(exc, "error_code", None) in _SPEND_CODES
                or (exc.status_code in (400, 429) and any(w in text for w in ("credit balance", "spend limit",
                                                                               "usage limits", "billing")))):
            raise _SpendLimit(str(exc)) from exc
        raise


def _short(text: str) -> str:
    return " ".join(text.split())[:200]


class _Busy(Exception):
    """Ollama answered 5xx or 429 (runner crashed, too many requests): retried."""


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

        def call() -> Any:
            try:
                return self.client.chat(model=self.model, format=schema, options={"temperature": 0},
                                        messages=[{"role": "system", "content": system},
                                                  {"role": "user", "content": message}])
            except self.ollama.ResponseError as exc:
                if exc.status_code >= 500 or exc.status_code == 429:
                    raise _Busy(str(exc.error)) from exc
                raise
        try:
            resp = _retry(call, (httpx.TransportError, ConnectionError, _Busy), self.backoff)
        except self.ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise FatalExtractError(f"Ollama at {self.host} has no model {self.model!r}: "
                                        f"run `ollama pull {self.model}`") from exc
            raise ExtractError(f"Ollama failed: {exc.error}") from exc
        except _Busy as exc:
            raise ExtractError(f"Ollama kept failing after {RETRIES} tries: {exc}") from exc
        except (httpx.TransportError, ConnectionError) as exc:
            raise FatalExtractError(f"cannot reach Ollama at {self.host}: start it with `ollama serve`") from exc
        usage = Usage(int(resp.prompt_eval_count or 0), int(resp.eval_count or 0))
        return _parse_json(resp.message.content or ""), usage


def make_extractor(cfg: Config, env: dict[str, str]) -> Extractor | None:
    """The configured extractor, or None when it cannot run here (no API key): the layer is skipped."""
    backend, _, model = str(cfg.extra.get("extractor", "anthropic:claude-haiku-4-5")).partition(":")
    if backend == "anthropic":
        key = env.get("ANTHROPIC_API_KEY")
        if not key:
            return None
        return AnthropicExtractor(model or "claude-haiku-4-5", key, env.get("ANTHROPIC_BASE_URL"))
    if backend == "ollama":
        if not model:
            raise ConfigError("extractor = 'ollama:' needs a model, e.g. extractor = \"ollama:qwen2.5:7b\"")
        return OllamaExtractor(model, cfg.ollama_host)
    raise ConfigError(f"extractor = {backend!r} is unknown: use 'anthropic:MODEL' or 'ollama:MODEL'")
