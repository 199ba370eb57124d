"""A local stand-in for the parts of Ollama's HTTP API that kb uses, with programmable faults.

Speaks `GET /api/tags`, `POST /api/embed` (deterministic unit vectors seeded from each text's
sha256) and Ollama's 404 for an unknown model. Faults apply to the next N requests, in this order:
drop the connection without a response, hang, answer HTTP 500. Every request is recorded.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from standin_http import JsonHandler, Recorded, StandInServer, full_name

DEFAULT_MODELS: dict[str, int] = {"bge-m3:latest": 1024}


def vector_for(text: str, dims: int) -> list[float]:
    """The unit-length vector the stand-in returns for `text` (same text, same vector)."""
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).digest())
    raw = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


class OllamaStandIn(StandInServer):
    """A stand-in Ollama server on 127.0.0.1 (a free port); use as a context manager."""

    FAULTS = ("drop_next", "hang_next", "fail_next")

    def __init__(self, models: dict[str, int] | None = None) -> None:
        self.models: dict[str, int] = {full_name(k): v for k, v in (models or DEFAULT_MODELS).items()}
        self.drop_next = 0  # close the socket without any response, for the next N requests
        self.fail_next = 0  # answer HTTP 500, for the next N requests
        self.hang_next = 0  # sleep `hang_seconds` before answering, for the next N requests
        self.hang_seconds = 0.0
        super().__init__(_make_handler(self), "ollama-standin")

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def calls(self, path: str) -> list[Recorded]:
        """The recorded requests to `path`, oldest first."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def _tags(self) -> tuple[int, dict[str, Any]]:
        models = [
            {
                "name": name,
                "model": name,
                "modified_at": "2025-01-01T00:00:00.000000000Z",
                "size": 1_157_672_605,
                "digest": hashlib.sha256(name.encode()).hexdigest(),
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "bert",
                    "families": ["bert"],
                    "parameter_size": "566.70M",
                    "quantization_level": "F16",
                },
            }
            for name in self.models
        ]
        return 200, {"models": models}

    def _embed(self, body: Any) -> tuple[int, dict[str, Any]]:
        model = str(body.get("model", "")) if isinstance(body, dict) else ""
        dims = self.models.get(full_name(model)) if model else None
        if dims is None:
            return 404, {"error": f'model "{model}" not found, try pulling it first'}
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else list(texts)
        return 200, {
            "model": model,
            "embeddings": [vector_for(str(t), dims) for t in texts],
            "total_duration": 12_000_000,
            "load_duration": 1_000_000,
            "prompt_eval_count": sum(len(str(t).split()) + 2 for t in texts),
        }


def _make_handler(standin: OllamaStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def serve(self, method: str) -> None:
            _, body = self.read_body()
            standin._record(Recorded(method, self.path, body))
            fault = standin._take_fault()
            if fault == "drop_next":
                self.drop()
                return
            if fault == "hang_next":
                standin._hang()
            if fault == "fail_next":
                self.send_json(500, {"error": "llama runner process has terminated: exit status 2"})
            elif (method, self.path) == ("GET", "/api/tags"):
                self.send_json(*standin._tags())
            elif (method, self.path) == ("POST", "/api/embed"):
                self.send_json(*standin._embed(body))
            else:
                self.send_json(404, {"error": "404 page not found"})

    return Handler


def running(models: dict[str, int] | None = None) -> Iterator[OllamaStandIn]:
    """Generator form for a pytest fixture: `yield from running()`."""
    with OllamaStandIn(models) as standin:
        yield standin
