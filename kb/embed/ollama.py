"""Embeddings from a local Ollama server (bge-m3 by default), batched, with retries."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import httpx
import ollama

from kb.errors import EmbedderError

KNOWN_DIMS = {"bge-m3": 1024, "nomic-embed-text": 768, "mxbai-embed-large": 1024}
RETRIES = 5
TRANSIENT = (
    httpx.ConnectError,
    httpx.ReadError,
    httpx.RemoteProtocolError,
    httpx.ReadTimeout,
    httpx.WriteError,
    ConnectionError,
)


class OllamaEmbedder:
    """Calls Ollama's embed API; transient connection drops are retried with backoff."""

    def __init__(
        self, model: str = "bge-m3", host: str = "http://127.0.0.1:11434", backoff: float = 0.5, timeout: float = 120.0
    ) -> None:
        self.model_name = model
        self.host = host
        self.backoff = backoff
        self.client = ollama.Client(host=host, timeout=timeout)
        self._dims: int | None = KNOWN_DIMS.get(model.split(":")[0])
        self._checked = False

    @property
    def dimensions(self) -> int:
        if self._dims is None:
            self._dims = len(self.embed_query("dimension probe"))
        return self._dims

    @property
    def identity(self) -> str:
        return f"ollama:{self.model_name}:{self.dimensions}"

    def check(self) -> None:
        """Ollama answers and the model is pulled, or one line with the fix."""
        if self._checked:
            return
        listing = self._call(lambda: self.client.list())
        names = {str(m.model) for m in listing.models}
        wanted = self.model_name if ":" in self.model_name else f"{self.model_name}:latest"
        if wanted not in names and self.model_name not in names:
            raise EmbedderError(
                f"Ollama at {self.host} has no model '{self.model_name}': run `ollama pull {self.model_name}`"
            )
        self._checked = True

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        self.check()
        resp = self._call(lambda: self.client.embed(model=self.model_name, input=list(texts)))
        vectors = [list(map(float, v)) for v in resp.embeddings]
        if len(vectors) != len(texts):
            raise EmbedderError(f"Ollama returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def _call(self, fn: Any) -> Any:
        delay = self.backoff
        for attempt in range(RETRIES):
            try:
                return fn()
            except TRANSIENT as exc:
                if attempt == RETRIES - 1:
                    raise EmbedderError(
                        f"cannot reach Ollama at {self.host} ({type(exc).__name__}): start it with "
                        "`ollama serve` or set OLLAMA_HOST"
                    ) from exc
            except ollama.ResponseError as exc:
                if exc.status_code == 404 or "not found" in str(exc.error).lower():
                    raise EmbedderError(
                        f"Ollama at {self.host} has no model '{self.model_name}': run `ollama pull {self.model_name}`"
                    ) from exc
                if exc.status_code < 500 or attempt == RETRIES - 1:
                    raise EmbedderError(f"Ollama at {self.host} failed: {exc.error}") from exc
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")
