"""The extraction cache on disk: one JSON file per (model, prompt version, text); durable before counted."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_key(model: str, version: str, text: str) -> str:
    """What a result depends on: the model, the prompt version and the text (breadcrumb + chunk)."""
    return hashlib.sha256(f"{model}\x00{version}\x00{text}".encode()).hexdigest()


class ExtractionCache:
    """Writes to one folder; reads it and any read-only folders (a vault's shipped cache, say).

    A read-only folder also answers for the models in `recorded_by`: a vault's shipped extraction counts
    whichever listed model recorded it (each entry names its model), so the default model can change without
    the shipped cache going stale. kb's own folder answers only for the model asked."""

    def __init__(self, folder: Path, read_only: tuple[Path, ...] = (), recorded_by: tuple[str, ...] = ()) -> None:
        self.folder = folder
        self.read_only = read_only
        self.recorded_by = recorded_by

    def lookup(self, model: str, version: str, text: str) -> dict[str, Any] | None:
        """The entry for (model, version, text): kb's folder first, then the read-only ones."""
        entry = self.get(cache_key(model, version, text))
        if entry is not None or not self.read_only:
            return entry
        for other in self.recorded_by:
            if other != model:
                key = cache_key(other, version, text)
                for base in self.read_only:
                    found = self._read(self._path(base, key))
                    if found is not None:
                        return found
        return None

    def _path(self, base: Path, key: str) -> Path:
        return base / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        for base in (self.folder, *self.read_only):
            found = self._read(self._path(base, key))
            if found is not None:
                return found
        return None

    def _read(self, path: Path) -> dict[str, Any] | None:
        if not path.is_file():
            return None
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError):
            return None  # a damaged entry is a miss, never a crash

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Atomic and fsynced: after this returns, a kill -9 cannot lose or half-write the entry."""
        path = self._path(self.folder, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps({**entry, "key": key}, indent=1, sort_keys=True, ensure_ascii=False).encode()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
