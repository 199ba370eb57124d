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
    """Writes to one folder; reads it and any read-only folders (a vault's shipped cache, say)."""

    def __init__(self, folder: Path, read_only: tuple[Path, ...] = ()) -> None:
        self.folder = folder
        self.read_only = read_only

    def _path(self, base: Path, key: str) -> Path:
        return base / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        for base in (self.folder, *self.read_only):
            path = self._path(base, key)
            if path.is_file():
                try:
                    return dict(json.loads(path.read_text(encoding="utf-8")))
                except (OSError, json.JSONDecodeError):
                    continue  # a damaged entry is a miss, never a crash
        return None

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
