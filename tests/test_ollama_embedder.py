"""OllamaEmbedder against a local stand-in server, through the real `ollama` client (no network)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import ollama
import pytest
from ollama_standin import OllamaStandIn, running, vector_for
from standin_http import keep_local

from kb.embed.ollama import RETRIES, OllamaEmbedder
from kb.errors import EmbedderError

TEXTS = ["Neo4j stores the vault as a graph.", "bge-m3 makes 1024-dim vectors.", "Ünïcödé and emoji 🧠 too."]


@pytest.fixture(autouse=True)
def _local_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or API key from the environment may redirect the client away from 127.0.0.1."""
    keep_local(monkeypatch, "OLLAMA_HOST", "OLLAMA_API_KEY")


@pytest.fixture
def standin() -> Iterator[OllamaStandIn]:
    yield from running()


def embedder(standin: OllamaStandIn, model: str = "bge-m3", timeout: float = 10.0) -> OllamaEmbedder:
    return OllamaEmbedder(model, host=standin.host, backoff=0.001, timeout=timeout)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_standin_speaks_ollamas_shapes(standin: OllamaStandIn) -> None:
    client = ollama.Client(host=standin.host)
    assert [m.model for m in client.list().models] == ["bge-m3:latest"]
    resp = client.embed(model="bge-m3", input="hello")
    assert resp.model == "bge-m3" and list(resp.embeddings[0]) == vector_for("hello", 1024)
    assert abs(sum(x * x for x in resp.embeddings[0]) - 1.0) < 1e-9
    with pytest.raises(ollama.ResponseError) as info:
        client.embed(model="x", input=["a"])
    assert info.value.status_code == 404
    assert info.value.error == 'model "x" not found, try pulling it first'


def test_batch_is_one_embed_call(standin: OllamaStandIn) -> None:
    emb = embedder(standin)
    vectors = emb.embed_documents(TEXTS)
    assert vectors == [vector_for(t, 1024) for t in TEXTS]
    assert all(len(v) == 1024 for v in vectors)
    calls = standin.calls("/api/embed")
    assert len(calls) == 1
    assert calls[0].body["model"] == "bge-m3" and calls[0].body["input"] == TEXTS
    assert emb.identity == "ollama:bge-m3:1024"
    assert emb.embed_query("one more") == vector_for("one more", 1024)
    assert len(standin.calls("/api/tags")) == 1  # the model check runs once
    assert len(standin.calls("/api/embed")) == 2  # identity needed no probe


def test_recovers_from_two_dropped_connections(standin: OllamaStandIn) -> None:
    emb = embedder(standin)
    emb.check()
    standin.drop_next = 2
    assert emb.embed_documents(TEXTS) == [vector_for(t, 1024) for t in TEXTS]
    assert len(standin.calls("/api/embed")) == 3


def test_recovers_from_two_server_errors(standin: OllamaStandIn) -> None:
    emb = embedder(standin)
    emb.check()
    standin.fail_next = 2
    assert emb.embed_documents(TEXTS) == [vector_for(t, 1024) for t in TEXTS]
    assert len(standin.calls("/api/embed")) == 3


def test_recovers_from_a_drop_during_the_model_check(standin: OllamaStandIn) -> None:
    standin.drop_next = 1
    assert embedder(standin).embed_query("x") == vector_for("x", 1024)
    assert len(standin.calls("/api/tags")) == 2


def test_gives_up_on_persistent_drops(standin: OllamaStandIn) -> None:
    emb = embedder(standin)
    emb.check()
    standin.drop_next = 100
    with pytest.raises(EmbedderError) as info:
        emb.embed_documents(TEXTS)
    message = str(info.value)
    assert standin.host in message and "ollama serve" in message and "\n" not in message
    assert len(standin.calls("/api/embed")) == RETRIES


def test_gives_up_on_persistent_server_errors(standin: OllamaStandIn) -> None:
    emb = embedder(standin)
    emb.check()
    standin.fail_next = 100
    with pytest.raises(EmbedderError) as info:
        emb.embed_documents(TEXTS)
    assert standin.host in str(info.value) and "llama runner process has terminated" in str(info.value)
    assert len(standin.calls("/api/embed")) == RETRIES


def test_recovers_from_a_hang_past_the_timeout(standin: OllamaStandIn) -> None:
    emb = embedder(standin, timeout=0.3)
    emb.check()
    standin.hang_next, standin.hang_seconds = 1, 3.0
    assert emb.embed_query("slow") == vector_for("slow", 1024)
    assert len(standin.calls("/api/embed")) == 2


def test_gives_up_when_every_call_hangs(standin: OllamaStandIn) -> None:
    emb = embedder(standin, timeout=0.2)
    emb.check()
    standin.hang_next, standin.hang_seconds = 100, 3.0
    with pytest.raises(EmbedderError) as info:
        emb.embed_query("slow")
    assert standin.host in str(info.value) and "ReadTimeout" in str(info.value)


def test_ollama_not_running() -> None:
    host = f"http://127.0.0.1:{closed_port()}"
    emb = OllamaEmbedder(host=host, backoff=0.001)
    with pytest.raises(EmbedderError) as info:
        emb.embed_documents(TEXTS)
    message = str(info.value)
    assert host in message and "ollama serve" in message and "\n" not in message


def test_model_not_pulled() -> None:
    with OllamaStandIn({"nomic-embed-text": 768}) as standin:
        with pytest.raises(EmbedderError) as info:
            embedder(standin).embed_documents(TEXTS)
        assert "ollama pull bge-m3" in str(info.value) and standin.host in str(info.value)
        assert standin.calls("/api/embed") == []


def test_embed_answered_with_model_not_found(standin: OllamaStandIn) -> None:
    emb = embedder(standin)
    emb.check()
    del standin.models["bge-m3:latest"]  # removed (`ollama rm`) after the check passed
    with pytest.raises(EmbedderError) as info:
        emb.embed_documents(TEXTS)
    assert "ollama pull bge-m3" in str(info.value)
    assert len(standin.calls("/api/embed")) == 1  # a 404 is not retried


def test_unknown_model_dimensions_come_from_a_probe() -> None:
    with OllamaStandIn({"bge-m3": 1024, "tiny-embed:v1": 16}) as standin:
        emb = embedder(standin, model="tiny-embed:v1")
        assert emb.dimensions == 16
        assert emb.identity == "ollama:tiny-embed:v1:16"
        calls = standin.calls("/api/embed")
        assert len(calls) == 1 and calls[0].body["model"] == "tiny-embed:v1"
        assert emb.embed_query("q") == vector_for("q", 16)


def test_a_multilingual_model_reads_questions_in_every_language_the_rules_read() -> None:
    """Graph search matches a German or Chinese question to claim lines by vector only with a multilingual model
    (bge-m3, the default); an English model keeps other languages to stems; no embedder, no vector matching."""
    from kb.embed import QUESTION_LANGUAGES, vector_languages
    from kb.embed.onnx import OnnxEmbedder

    assert vector_languages(OllamaEmbedder("bge-m3")) == QUESTION_LANGUAGES
    assert vector_languages(OllamaEmbedder("bge-m3:latest")) == QUESTION_LANGUAGES
    assert vector_languages(OllamaEmbedder("nomic-embed-text")) == ("en",)
    assert vector_languages(OnnxEmbedder()) == ("en",)
    assert vector_languages(None) == ()
