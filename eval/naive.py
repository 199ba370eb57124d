"""The naive windowed baseline kb must beat: BM25 and the same embedder over 250-word windows of every note
(stride 200, the note path prepended), fused by reciprocal rank (k = 60), windows rolled up to notes."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kb.config import Config
from kb.embed import Embedder
from kb.vault import parse_note, scan_vault

WINDOW = 250
STRIDE = 200
RRF_K = 60
DEPTH = 100
K1 = 1.5
B = 0.75
TOKEN = re.compile(r"\w+", re.UNICODE)
STOP = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her his how i if in into "
    "is it its me my no not of on or our she so such than that the their them then there these they this to "
    "us was we were what when where which who whom whose why will with would you your".split()
)


@dataclass(frozen=True)
class Window:
    path: str
    text: str  # the note path, a newline, then the window's words


def windows(path: str, body: str, size: int = WINDOW, stride: int = STRIDE) -> list[Window]:
    """Windows of `size` words every `stride` words; the last one ends at the note's end."""
    words = body.split()
    out = []
    for start in range(0, max(len(words), 1), stride):
        out.append(Window(path, path + "\n" + " ".join(words[start : start + size])))
        if start + size >= len(words):
            break
    return out


def tokens(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text.lower()) if t not in STOP]


class BM25:
    """Okapi BM25 with Lucene's idf, over a fixed list of texts."""

    def __init__(self, texts: Sequence[str], k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        docs = [tokens(t) for t in texts]
        self.lengths = np.array([len(d) for d in docs], dtype=np.float64)
        self.avg = float(self.lengths.mean()) if len(docs) else 0.0
        self.postings: dict[str, dict[int, int]] = {}
        for i, doc in enumerate(docs):
            for term in doc:
                row = self.postings.setdefault(term, {})
                row[i] = row.get(i, 0) + 1
        self.n = len(docs)

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.n)
        norm = self.k1 * (1 - self.b + self.b * self.lengths / max(self.avg, 1e-9))
        for term in dict.fromkeys(tokens(query)):
            row = self.postings.get(term)
            if not row:
                continue
            idf = math.log(1 + (self.n - len(row) + 0.5) / (len(row) + 0.5))
            ids = np.fromiter(row.keys(), dtype=np.int64)
            tf = np.fromiter(row.values(), dtype=np.float64)
            out[ids] += idf * tf * (self.k1 + 1) / (tf + norm[ids])
        return out


@dataclass
class NaiveHit:
    path: str
    score: float
    windows: list[Window]


class NaiveIndex:
    """Every window of a vault, keyword- and vector-indexed in memory."""

    def __init__(self, cfg: Config, embedder: Embedder | None) -> None:
        vault = cfg.require_vault()
        scan = scan_vault(Path(vault), cfg.include, cfg.exclude, cfg.max_file_bytes)
        self.windows = [w for vf in scan.notes for w in windows(vf.path, parse_note(vf).body)]
        self.bm25 = BM25([w.text for w in self.windows])
        self.embedder = embedder
        vecs = embedder.embed_documents([w.text for w in self.windows]) if embedder and self.windows else []
        self.vectors = np.array(vecs, dtype=np.float32).reshape(len(vecs), -1)

    def search(self, question: str, k: int = 20) -> list[NaiveHit]:
        """Notes ranked by their best fused window (ties on the path), each with its windows in fused order."""
        fused: dict[int, float] = {}
        for ranking in self._legs(question):
            for rank, i in enumerate(ranking, start=1):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank)
        hits: dict[str, NaiveHit] = {}
        for i in sorted(fused, key=lambda j: (-fused[j], j)):
            w = self.windows[i]
            hit = hits.setdefault(w.path, NaiveHit(w.path, fused[i], []))
            hit.windows.append(w)
        return sorted(hits.values(), key=lambda h: (-h.score, h.path))[:k]

    def _legs(self, question: str) -> list[list[int]]:
        if not self.windows:
            return []
        kw = self.bm25.scores(question)
        legs = [[int(i) for i in _top(kw) if kw[i] > 0]]
        if self.embedder is not None and len(self.vectors):
            q = np.array(self.embedder.embed_query(question[:32000]), dtype=np.float32)
            legs.append([int(i) for i in _top(self.vectors @ q)])
        return legs


def _top(scores: np.ndarray, depth: int = DEPTH) -> list[int]:
    """Indices of the `depth` highest scores, best first, ties on the index."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [int(i) for i in order[:depth]]
