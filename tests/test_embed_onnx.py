"""The offline embedder's saved optimized graph: same vectors as the shipped graph, made once, mended, optional."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from conftest import EXAMPLE_VAULT

from kb.config import load_config
from kb.embed import make_embedder
from kb.embed.onnx import GRAPH, WEIGHTS, OnnxEmbedder, _open, _tokenizer, cache_entry

QUESTIONS = ["what did we decide about the pricing of the seed round?", "Wer ist der CTO?", "去年的收入", "x"]


@pytest.fixture(autouse=True)
def drop_saved_graphs(tmp_path: Path) -> Iterator[None]:
    """Each saved graph is ~90 MB: none is left behind in pytest's kept temporary folders."""
    yield
    shutil.rmtree(tmp_path, ignore_errors=True)


def notes() -> list[str]:
    """Note openings of several lengths; the longest is cut at 256 tokens."""
    paths = sorted(EXAMPLE_VAULT.rglob("*.md"))[:4]
    return [p.read_text(encoding="utf-8", errors="replace")[: 100 * 4**i] for i, p in enumerate(paths)]


def vectors(session: object) -> list[list[float]]:
    """The questions as one padded batch, each note alone."""
    out = OnnxEmbedder._run(_tokenizer(), session, QUESTIONS)
    return out + [vec for text in notes() for vec in OnnxEmbedder._run(_tokenizer(), session, [text])]


@cache
def shipped() -> list[list[float]]:
    """The vectors of the shipped graph, optimized in memory (what every session did before the cache)."""
    return vectors(_open(None))


def test_the_saved_graph_gives_the_vectors_of_the_shipped_one(tmp_path: Path) -> None:
    entry = cache_entry(tmp_path)
    saving = _open(tmp_path)  # optimizes the shipped graph and saves it
    assert (entry / GRAPH).is_file() and (entry / WEIGHTS).stat().st_size > 50_000_000
    stamp = (entry / WEIGHTS).stat().st_mtime_ns
    loaded = _open(tmp_path)  # reads the saved graph
    assert (entry / WEIGHTS).stat().st_mtime_ns == stamp, "a saved graph is read, not written again"
    assert vectors(saving) == shipped()
    assert vectors(loaded) == shipped()


def test_a_damaged_entry_is_made_again(tmp_path: Path) -> None:
    entry = cache_entry(tmp_path)
    entry.mkdir(parents=True)
    (entry / GRAPH).write_bytes(b"not a graph")
    assert vectors(_open(tmp_path)) == shipped()
    assert (entry / GRAPH).stat().st_size > 1000 and (entry / WEIGHTS).is_file()


def test_older_entries_and_abandoned_temporaries_go(tmp_path: Path) -> None:
    for name in ("minilm-0.9-abc-ort1.0", ".tmp-minilm-x-123", ".tmp-minilm-y-456", "notes"):
        (tmp_path / name).mkdir()
    hour_ago = os.stat(tmp_path).st_mtime - 7200
    os.utime(tmp_path / ".tmp-minilm-x-123", (hour_ago, hour_ago))
    _open(tmp_path)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".tmp-minilm-y-456", cache_entry(tmp_path).name, "notes"]  # a recent temporary may be in use


def test_a_cache_that_cannot_be_written_falls_back_to_the_shipped_graph(tmp_path: Path) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("a file where the kb home's cache folder would go", encoding="utf-8")
    assert vectors(_open(blocker / "cache" / "onnx")) == shipped()
    assert [p.name for p in tmp_path.iterdir()] == ["home"]


def test_the_factory_keeps_the_graph_in_the_kb_home(tmp_path: Path) -> None:
    cfg = load_config(home=tmp_path, env={}, flags={"embedder": "onnx:minilm"})
    embedder = make_embedder(cfg)
    assert isinstance(embedder, OnnxEmbedder) and embedder.cache == tmp_path / "cache" / "onnx"
