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


# models that place a question and a passage in different languages near each other (bge-m3: 100+ languages);
# any other model is taken to read English only, so a question in another language is not matched by vector
MULTILINGUAL_MODELS = frozenset(
    {
        "bge-m3",
        "multilingual-e5-small",
        "multilingual-e5-base",
        "multilingual-e5-large",
        "snowflake-arctic-embed2",
        "paraphrase-multilingual",
        "granite-embedding:278m",
        "jina-embeddings-v3",
    }
)
QUESTION_LANGUAGES = ("en", "de", "fr", "es", "zh")  # the languages kb's question rules read


def vector_languages(embedder: Embedder | None) -> tuple[str, ...]:
    """The question languages whose vectors mean something next to the vault's: all those the question rules
    read for a multilingual model, English for any other (and none without an embedder)."""
    if embedder is None:
        return ()
    name = embedder.model_name.lower()
    if name in MULTILINGUAL_MODELS or name.split(":")[0] in MULTILINGUAL_MODELS:
        return QUESTION_LANGUAGES
    return ("en",)


# the similarity to a question (Neo4j's cosine scale, 0..1) below which a graph line is about something else, per
# model, where it was measured (search/graph.py GraphConfig.line_floor); a model not listed gets no floor
LINE_FLOORS = {"all-MiniLM-L6-v2-int8": 0.60}


def line_floor(embedder: Embedder | None) -> float:
    """The embedder's measured floor for graph lines (LINE_FLOORS), 0.0 (none) for a model not measured."""
    if embedder is None:
        return 0.0
    return LINE_FLOORS.get(embedder.model_name, 0.0)


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
