"""One writer per database: a lock file in kb's home that the operating system releases when its owner dies."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kb.errors import KbError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; kb's supported systems do
    fcntl = None  # type: ignore[assignment]


class LockedError(KbError):
    """Another kb process is writing to the same database."""


def lock_path(home: Path, uri: str, database: str) -> Path:
    key = hashlib.sha1(f"{uri}|{database}".encode()).hexdigest()[:16]
    return home / "locks" / f"write-{key}.lock"


@contextlib.contextmanager
def write_lock(home: Path, uri: str, database: str, what: str = "kb refresh") -> Iterator[Path]:
    """Hold the database's write lock for the block, or fail at once naming the process that holds it.

    flock is released by the kernel when the holder exits, kill -9 included, so a stale lock cannot exist;
    the pid and start time written inside are only there to tell the user who holds it.
    """
    path = lock_path(home, uri, database)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle = open(path, "a+", encoding="utf-8")
    try:
        _acquire(handle, path, database)
        handle.seek(0)
        handle.truncate()
        handle.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "what": what,
                    "database": database,
                    "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                }
            )
        )
        handle.flush()
        yield path
    finally:
        handle.close()


def _acquire(handle: IO[str], path: Path, database: str) -> None:
    if fcntl is None:
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        try:
            owner = json.loads(handle.read() or "{}")
        except json.JSONDecodeError:
            owner = {}
        handle.close()
        who = (
            f"{owner.get('what', 'another kb command')} (pid {owner.get('pid', '?')}, "
            f"started {owner.get('started', '?')})"
        )
        raise LockedError(
            f"{who} is writing to the Neo4j database '{database}': wait for it to finish or stop "
            f"it, then run this again (lock file {path})"
        ) from None
