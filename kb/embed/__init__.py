"""Embedding providers behind one small interface; backends are imported lazily."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from kb.config import Config
from kb.errors import ConfigError


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length vectors."""

    model_name: str

    @property
    def dimensions(self) -> int: ...

    @property
    def identity(self) -> str:
        """Stored with every vector: a different identity forces a re-embed."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def make_embedder(cfg: Config) -> Embedder:
    """The configured embedder: `ollama:MODEL` or `onnx:minilm`."""
    backend, _, model = cfg.embedder.partition(":")
    if backend == "ollama":
        from kb.embed.ollama import OllamaEmbedder

        return OllamaEmbedder(model or "bge-m3", cfg.ollama_host)
    if backend == "onnx":
        from kb.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(cache=cfg.home / "cache" / "onnx")  # its optimized graph, saved once
    raise ConfigError(f"embedder = {cfg.embedder!r} is unknown: use 'ollama:bge-m3' or 'onnx:minilm'")
