"""The public passage vectors in one float32 matrix on disk beside the graph: the vector leg's exact scan.

Neo4j's vector index answers a query in 78-84 ms at 13,284 notes (179,379 passages) on this machine, most of it
the index walk and re-scoring each candidate on its stored vector; one matrix-vector product over the same vectors
in this process takes 15 ms and is exact (bench/vector_leg.py). A refresh writes the matrix as one generation, a
folder named by its stamp (a digest of the embedder and of every public passage's id, note and hash), then records
the stamp in the graph; a refresh clears the graph's stamp before it writes anything. Search reads the matrix only
while the two stamps agree, else it asks Neo4j as before, so a killed refresh, another database or a vault switch
can never answer from stale vectors. Private passages are never in the matrix: they stay in the private index."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

META_KEY = "vector_file"  # the graph's KbMeta entry: `stamp` (valid now, or null) and `written` (last generation)
_FILES = ("vectors.npy", "ids.npy", "hashes.npy", "notes.npy")
_loaded: dict[Path, Matrix] = {}  # one matrix per folder per process (the MCP server keeps it between calls)


@dataclass(frozen=True)
class Matrix:
    """One generation: passage ids in id order, their note (index into `names`), hash and unit vector."""

    stamp: str
    embedder: str
    ids: np.ndarray
    notes: np.ndarray
    names: tuple[str, ...]
    hashes: np.ndarray
    vectors: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(self, vec: Sequence[float], limit: int) -> list[dict[str, Any]]:
        """The `limit` passages nearest `vec` as rows of the vector leg (chunk `id`, `path`, `passage`, `score`),
        scored as Neo4j's vector.similarity.cosine, (1 + cos) / 2, ties by passage id; each row also carries
        the passage `hash` the matrix holds, for the caller to confirm against the graph."""
        q = np.asarray(vec, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        n = len(self.ids)
        if n == 0 or limit <= 0 or norm == 0.0 or q.shape != (self.vectors.shape[1],):
            return []
        cos = self.vectors @ (q / norm)
        if limit < n:
            kth = np.partition(cos, n - limit)[n - limit]
            picked = np.flatnonzero(cos >= kth)  # every row tied at the cut is in, then the ids decide
        else:
            picked = np.arange(n)
        scored = [((1.0 + float(cos[i])) / 2.0, str(self.ids[i]), int(i)) for i in picked]
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [
            {
                "id": pid.rsplit(":", 1)[0],
                "path": self.names[int(self.notes[i])],
                "passage": pid,
                "score": score,
                "hash": self.hashes[i].decode(),
            }
            for score, pid, i in scored[:limit]
        ]


def stamp_of(embedder: str, listing: Sequence[tuple[str, str, str]]) -> str:
    """What a generation holds: the embedder and every (passage id, note path, hash), in id order."""
    h = hashlib.sha256(embedder.encode())
    for pid, path, digest in listing:
        h.update(f"\x00{pid}\x01{path}\x01{digest}".encode())
    return h.hexdigest()[:32]


def load(root: Path, stamp: str) -> Matrix | None:
    """The generation named `stamp` under `root` (memory-mapped, kept for the process), or None when it is missing
    or damaged: the caller then asks Neo4j."""
    held = _loaded.get(root)
    if held is not None and held.stamp == stamp:
        return held
    folder = root / stamp
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        arrays = [np.load(folder / name, mmap_mode="r") for name in _FILES]
    except (OSError, ValueError, json.JSONDecodeError):
        return None
    vectors, ids, hashes, notes = arrays
    if meta.get("stamp") != stamp or not (len(vectors) == len(ids) == len(hashes) == len(notes) == meta["count"]):
        return None
    matrix = Matrix(stamp, str(meta["embedder"]), ids, notes, tuple(meta["names"]), hashes, vectors)
    _loaded[root] = matrix
    return matrix


def write(
    root: Path, stamp: str, embedder: str, listing: Sequence[tuple[str, str, str]], vectors: np.ndarray
) -> Matrix:
    """Write a generation atomically (a temporary folder, each file synced, then renamed into place), drop the
    older ones, and return it loaded. `vectors`: one row per listing entry, any length (stored unit length)."""
    root.mkdir(parents=True, exist_ok=True)
    folder = root / stamp
    if not folder.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        names = sorted({path for _, path, _ in listing})
        at = {name: i for i, name in enumerate(names)}
        norms = np.linalg.norm(vectors, axis=1, keepdims=True) if len(vectors) else np.ones((0, 1))
        arrays = {
            "vectors.npy": (vectors / np.where(norms == 0, 1, norms)).astype(np.float32),
            "ids.npy": np.array([pid for pid, _, _ in listing], dtype=str),
            "hashes.npy": np.array([digest for _, _, digest in listing], dtype="S64"),
            "notes.npy": np.array([at[path] for _, path, _ in listing], dtype=np.int32),
        }
        meta = {"stamp": stamp, "embedder": embedder, "count": len(listing), "names": names}
        for name, array in arrays.items():
            with open(tmp / name, "wb") as fh:
                np.save(fh, array)
                fh.flush()
                os.fsync(fh.fileno())
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        _fsync(tmp / "meta.json")
        os.replace(tmp, folder)
        _fsync(root)
    for other in root.iterdir():
        if other.name != stamp:
            shutil.rmtree(other, ignore_errors=True)
    loaded = load(root, stamp)
    if loaded is None:
        raise OSError(f"{folder}: the vector file just written does not read back")
    return loaded


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
