"""The public passage vectors in one float32 matrix on disk beside the graph: the vector leg's exact scan.

Neo4j's vector index answers a query in 78-84 ms at 13,284 notes (179,379 passages) on this machine, most of it
the index walk and re-scoring each candidate on its stored vector; one matrix-vector product over the same vectors
in this process takes 15 ms and is exact (bench/vector_leg.py). A refresh writes the matrix as one generation, a
folder named by its stamp (a digest of the embedder and of every public passage's id, note, hash, date, folder and
tags), then records the stamp in the graph; a refresh clears the graph's stamp before it writes anything. Search
reads the matrix only while the two stamps agree, else it asks Neo4j as before, so a killed refresh, another
database or a vault switch can never answer from stale vectors. Private passages are never in the matrix: they
stay in the private index.

Above SHORTLIST_MIN rows, the scan reads int8 codes of the vectors first (a quarter of the bytes, kb.int8scan): the
SHORTLIST_FACTOR x `limit` rows they rank first (at least SHORTLIST_FLOOR) are scored exactly on their float32
vectors, and the top `limit` of those is the answer. bench/search_latency.py measures how much of the exact top it
keeps and what it saves. A generation written before the codes existed has none and is scanned whole.

Which product is faster depends on the machine: the int8 one took 6.4 ms against the float32 one's 14.5 ms at 13,284
notes on one day of this 2-core machine class, 24 ms against 10-11 ms on another. So writing a generation (or adding
its codes) times both on its own rows and records the choice in its scan.json: the shortlist is read only where it
took at most SHORTLIST_GAIN of the exact scan's time. The choice is fixed with the generation, so every search on it
takes the same path (a choice timed per process could let rankings differ between two processes)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kb import int8scan

META_KEY = "vector_file"  # the graph's KbMeta entry: `stamp` (valid now, or null) and `written` (last generation)
_FILES = ("vectors.npy", "ids.npy", "hashes.npy", "notes.npy", "dates.npy", "folders.npy", "tag_rows.npy")
_loaded: dict[Path, Matrix] = {}  # one matrix per folder per process (the MCP server keeps it between calls)
_CODES = ("codes.npy", "scales.npy")  # the int8 shortlist's files (a generation may predate them)
SHORTLIST_MIN = 20_000  # rows: below it the float32 scan takes about 1.5 ms, and it stays exact
SHORTLIST_FACTOR = 4
SHORTLIST_FLOOR = 400
SHORTLIST_GAIN = 0.7  # the shortlist is chosen only where it takes at most this share of the exact scan's time
SCAN_FILE = "scan.json"  # the generation's timed choice: {"shortlist": bool, "exact_ms": .., "shortlist_ms": ..}
SCAN_TRIALS = 5
NO_DATE = b"-"  # a passage without a date passes no date filter (as `c.date >= $since` on null in Cypher)


class Listed(NamedTuple):
    """One public passage as the graph holds it: what the file stores beside its vector."""

    passage: str
    path: str
    hash: str
    date: str | None
    folder_key: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Matrix:
    """One generation: passage ids in id order, each with its note (index into `names`), hash, date, folder (index
    into `folder_keys`) and unit vector; `tag_rows[tag_ptr[t]:tag_ptr[t + 1]]` are the rows tagged `tags[t]`."""

    stamp: str
    embedder: str
    ids: np.ndarray
    notes: np.ndarray
    names: tuple[str, ...]
    hashes: np.ndarray
    dates: np.ndarray
    folders: np.ndarray
    folder_keys: tuple[str, ...]
    tags: tuple[str, ...]
    tag_ptr: tuple[int, ...]
    tag_rows: np.ndarray
    vectors: np.ndarray
    codes: np.ndarray | None = None  # int8 (dims x rows) and per-dimension scales: kb.int8scan
    scales: np.ndarray | None = None
    use_codes: bool = True  # the generation's scan.json chose the shortlist (one written before the choice: yes)

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(
        self, vec: Sequence[float], limit: int, filters: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """The `limit` passages nearest `vec` that pass `filters` (folder, tag, since, until, as Filters.params
        gives them), as rows of the vector leg (chunk `id`, `path`, `passage`, `score`), scored as Neo4j's
        vector.similarity.cosine, (1 + cos) / 2, ties by passage id; each row also carries the passage `hash` the
        matrix holds, for a caller that confirms rows against the graph."""
        q = np.asarray(vec, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if len(self.ids) == 0 or limit <= 0 or norm == 0.0 or q.shape != (self.vectors.shape[1],):
            return []
        q = q / norm
        passing = self.passing(filters or {})
        rows = self.shortlist(q, limit, passing)
        if rows is None:
            cos = self.vectors @ q
            if passing is not None:
                cos = np.where(passing, cos, -np.inf)
        else:  # the shortlist passed the filters already
            cos = np.asarray(self.vectors[rows]) @ q
        n = len(cos) if passing is None or rows is not None else int(passing.sum())
        if limit < n:
            kth = np.partition(cos, len(cos) - limit)[len(cos) - limit]
            picked = np.flatnonzero(cos >= kth)  # every row tied at the cut is in, then the ids decide
        else:
            picked = np.flatnonzero(cos > -np.inf)
        at = picked if rows is None else rows[picked]
        scored = [((1.0 + float(cos[j])) / 2.0, str(self.ids[i]), int(i)) for j, i in zip(picked, at, strict=True)]
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

    def shortlist(self, q: np.ndarray, limit: int, passing: np.ndarray | None) -> np.ndarray | None:
        """The rows (ascending) to score exactly, ranked by the int8 codes; None: score every row."""
        if not self.use_codes or self.codes is None or self.scales is None or len(self.ids) < SHORTLIST_MIN:
            return None
        want = max(limit * SHORTLIST_FACTOR, SHORTLIST_FLOOR)
        if passing is not None and int(passing.sum()) <= want:
            return np.flatnonzero(passing)
        if want >= len(self.ids):
            return None
        approx = int8scan.scores(self.codes, self.scales, q)
        if passing is not None:
            approx = np.where(passing, approx, np.iinfo(np.int32).min)
        return _top_rows(approx, want)

    def passing(self, filters: Mapping[str, Any]) -> np.ndarray | None:
        """Which rows pass the filters, as kb.cypher.chunk_filter reads them (None: no filter is active)."""
        mask: np.ndarray | None = None

        def both(m: np.ndarray) -> None:
            nonlocal mask
            mask = m if mask is None else mask & m

        if filters.get("folder"):
            prefix = f"{str(filters['folder']).strip('/')}/"
            allowed = [i for i, key in enumerate(self.folder_keys) if key.startswith(prefix)]
            both(np.isin(self.folders, np.asarray(allowed, dtype=np.int32)))
        if filters.get("tag"):
            tagged = np.zeros(len(self.ids), dtype=bool)
            if filters["tag"] in self.tags:
                t = self.tags.index(filters["tag"])
                tagged[self.tag_rows[self.tag_ptr[t] : self.tag_ptr[t + 1]]] = True
            both(tagged)
        if filters.get("since") or filters.get("until"):  # a scan of every row's date: only when one is asked for
            dated = self.dates != NO_DATE
            if filters.get("since"):
                both(dated & (self.dates >= str(filters["since"]).encode()))
            if filters.get("until"):
                both(dated & (self.dates <= str(filters["until"]).encode()))
        return mask


def stamp_of(embedder: str, listing: Sequence[Listed]) -> str:
    """What a generation holds: the embedder and every listed passage with all it stores, in id order."""
    fields = (
        "\x1f".join((r.passage, r.path, r.hash, r.date or "\x00", r.folder_key, "\x1d".join(r.tags))) for r in listing
    )
    text = embedder + "\x1e" + "\x1e".join(fields)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def load(root: Path, stamp: str) -> Matrix | None:
    """The generation named `stamp` under `root` (memory-mapped, kept for the process), or None when it is missing
    or damaged: the caller then asks Neo4j."""
    held = _loaded.get(root)
    # codes another process added since (ensure_codes writes the scales last) are read again: a long-lived MCP server
    # gets the shortlist after the refresh that added them
    if held is not None and held.stamp == stamp and (held.codes is not None or not (root / stamp / _CODES[1]).exists()):
        return held
    folder = root / stamp
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        arrays = [np.load(folder / name, mmap_mode="r") for name in _FILES]
    except (OSError, ValueError, json.JSONDecodeError):
        return None
    codes, scales = _codes(folder, arrays[0])
    vectors, ids, hashes, notes, dates, folders, tag_rows = arrays
    if meta.get("stamp") != stamp or any(len(a) != meta["count"] for a in arrays[:6]):
        return None
    matrix = Matrix(
        stamp,
        str(meta["embedder"]),
        ids,
        notes,
        tuple(meta["names"]),
        hashes,
        dates,
        folders,
        tuple(meta["folder_keys"]),
        tuple(meta["tags"]),
        tuple(meta["tag_ptr"]),
        tag_rows,
        vectors,
        codes,
        scales,
        _scan(folder).get("shortlist", True) is not False,
    )
    _loaded[root] = matrix
    return matrix


def _top_rows(approx: np.ndarray, want: int) -> np.ndarray:
    """The `want` rows (ascending) the int8 scores rank first: the shortlist search reads and the timing times."""
    return np.sort(np.argpartition(approx, len(approx) - want)[len(approx) - want :])


def _scan(folder: Path) -> dict[str, Any]:
    """The generation's recorded scan choice; {} when it has none (written before kb timed the two)."""
    try:
        data = json.loads((folder / SCAN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def choose_scan(vectors: np.ndarray, codes: np.ndarray, scales: np.ndarray) -> dict[str, Any]:
    """Time the exact float32 scan and the int8 shortlist (its product and the exact scoring of the rows it keeps)
    on SCAN_TRIALS of the matrix's own rows, after one untimed run of each; the shortlist is chosen when its median
    is at most SHORTLIST_GAIN of the exact one's. Below SHORTLIST_MIN rows the scan is exact anyway."""
    if len(vectors) < max(SHORTLIST_MIN, 1):
        return {"shortlist": False}
    want = min(SHORTLIST_FLOOR, len(vectors))
    exact: list[float] = []
    short: list[float] = []
    for n, row in enumerate([0, *np.linspace(0, len(vectors) - 1, SCAN_TRIALS).astype(int).tolist()]):
        q = np.asarray(vectors[row], dtype=np.float32)
        t0 = time.perf_counter()
        _ = np.asarray(vectors) @ q
        t1 = time.perf_counter()
        approx = int8scan.scores(codes, scales, q)
        kept = _top_rows(approx, want)
        _ = np.asarray(vectors[kept]) @ q
        t2 = time.perf_counter()
        if n:  # the first run of each only loads what they read
            exact.append(t1 - t0)
            short.append(t2 - t1)
    exact_s, short_s = float(np.median(exact)), float(np.median(short))
    return {
        "shortlist": short_s <= SHORTLIST_GAIN * exact_s,
        "exact_ms": round(exact_s * 1e3, 3),
        "shortlist_ms": round(short_s * 1e3, 3),
    }


def _write_scan(folder: Path, vectors: np.ndarray, codes: np.ndarray, scales: np.ndarray) -> None:
    """Time the two scans and record the choice in the folder, atomically."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(choose_scan(vectors, codes, scales), fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, folder / SCAN_FILE)


def _codes(folder: Path, vectors: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The generation's int8 codes (memory-mapped: a one-shot search reads them from the page cache, 1 ms to
    open against 160 ms to copy at 13,284 notes) and scales, or (None, None) when they are missing or do not fit
    the vectors: the scan is then exact over every row."""
    try:
        codes = np.load(folder / _CODES[0], mmap_mode="r")
        scales = np.load(folder / _CODES[1])
    except (OSError, ValueError):
        return None, None
    rows, dims = vectors.shape if vectors.ndim == 2 else (0, 0)
    if codes.dtype != np.int8 or codes.shape != (dims, rows) or scales.shape != (dims,):
        return None, None
    return codes, scales


def ensure_codes(root: Path, stamp: str) -> bool:
    """Give the generation `stamp` its int8 codes when it was written without them (before kb had them); whether it
    wrote them. They derive from the vectors alone, so the generation's stamp still says what it holds."""
    matrix = load(root, stamp)
    if matrix is None or matrix.codes is not None:
        return False
    codes, scales = int8scan.quantize_rows(matrix.vectors)
    _write_scan(root / stamp, matrix.vectors, codes, scales)  # before the codes: a reader that sees them sees it
    for name, array in zip(_CODES, (codes, scales), strict=True):
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npy", dir=root / stamp)
        os.close(fd)
        _save(Path(tmp), array)
        os.replace(tmp, root / stamp / name)
    _fsync(root / stamp)
    _loaded.pop(root, None)
    return True


def write(root: Path, stamp: str, embedder: str, listing: Sequence[Listed], vectors: np.ndarray) -> Matrix:
    """Write a generation atomically (a temporary folder, each file synced, then renamed into place), drop the
    older ones, and return it loaded. `vectors`: one row per listing entry, any length, stored unit length (a
    writable float32 array is scaled in place, anything else copied)."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = root / stamp
    if not folder.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        arrays, meta = _arrays(listing, vectors)
        for name, array in arrays.items():
            _save(tmp / name, array)
        _write_scan(tmp, arrays["vectors.npy"], arrays["codes.npy"], arrays["scales.npy"])
        (tmp / "meta.json").write_text(json.dumps({"stamp": stamp, "embedder": embedder, **meta}), encoding="utf-8")
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


def _arrays(listing: Sequence[Listed], vectors: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A generation's files, and what its meta.json says of them besides the stamp and embedder."""
    names = sorted({row.path for row in listing})
    folder_keys = sorted({row.folder_key for row in listing})
    at, folder_at = {n: i for i, n in enumerate(names)}, {k: i for i, k in enumerate(folder_keys)}
    by_tag: dict[str, list[int]] = {}
    for i, row in enumerate(listing):
        for tag in dict.fromkeys(row.tags):
            by_tag.setdefault(tag, []).append(i)
    tags = sorted(by_tag)
    ptr = [0]
    for tag in tags:
        ptr.append(ptr[-1] + len(by_tag[tag]))
    owned = vectors.dtype == np.float32 and vectors.flags.writeable and vectors.flags.c_contiguous
    unit = vectors if owned else np.array(vectors, dtype=np.float32)
    if len(unit):
        norms = np.linalg.norm(unit, axis=1, keepdims=True)
        unit /= np.where(norms == 0, 1, norms).astype(np.float32)
    codes, scales = int8scan.quantize_rows(unit)
    arrays = {
        "vectors.npy": unit,
        "codes.npy": codes,
        "scales.npy": scales,
        "ids.npy": np.array([row.passage for row in listing], dtype=str),
        "hashes.npy": np.array([row.hash for row in listing], dtype="S64"),
        "notes.npy": np.array([at[row.path] for row in listing], dtype=np.int32),
        "dates.npy": np.array([(row.date or "").encode() or NO_DATE for row in listing], dtype=bytes),
        "folders.npy": np.array([folder_at[row.folder_key] for row in listing], dtype=np.int32),
        "tag_rows.npy": np.array([i for tag in tags for i in by_tag[tag]], dtype=np.int32),
    }
    meta = {"count": len(listing), "names": names, "folder_keys": folder_keys, "tags": tags, "tag_ptr": ptr}
    return arrays, meta


def _save(path: Path, array: np.ndarray) -> None:
    """One array written to `path` and synced to disk."""
    with open(path, "wb") as fh:
        np.save(fh, array)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def describe(root: Path | None, stamp: str | None) -> dict[str, Any]:
    """What `kb status` says of the vector file: `state` (current, none, missing, off), and for a current one the
    passages it holds, whether it has the int8 codes and reads through the shortlist, and its size on disk."""
    if root is None:
        return {"state": "off"}
    if stamp is None:
        return {"state": "none"}  # no vectors yet, or a refresh was stopped before it vouched for a file
    matrix = load(root, stamp)
    if matrix is None:
        return {"state": "missing", "stamp": stamp}
    size = sum(f.stat().st_size for f in (root / stamp).iterdir() if f.is_file())
    return {
        "state": "current",
        "stamp": stamp,
        "passages": len(matrix),
        "codes": matrix.codes is not None,
        "shortlist": matrix.use_codes and matrix.codes is not None and len(matrix) >= SHORTLIST_MIN,
        "scan": _scan(root / stamp),
        "bytes": size,
    }
