"""Shared bench helpers: a managed Neo4j in bench/out, timing and peak memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from kb import server
from kb.config import Config, load_config
from kb.eval.metrics import percentile
from kb.store import Connection, Store, vector_dir_for

OUT = Path(__file__).resolve().parent / "out"


def bench_config(vault: Path | None = None, **flags: object) -> Config:
    """Config for a bench run: its own kb home and server, no environment."""
    base: dict[str, object] = {"server_heap": "2g", "server_pagecache": "1g"}
    if vault is not None:
        base["vault"] = str(vault)
    return load_config(home=OUT / "home", env={}, flags={**base, **flags})


def bench_store(cfg: Config) -> Store:
    info = server.start(cfg)
    return Store(Connection(info.uri, info.user, info.password, "neo4j"), vector_dir_for(cfg))


def ints(text: str) -> list[int]:
    """A comma-separated command-line list of whole numbers ("2,4,8"); empty for ""."""
    return [int(part) for part in text.split(",") if part.strip()]


def p50_p95(times: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(times, 50), 1), "p95": round(percentile(times, 95), 1)}


def peak_rss_mb() -> float:
    """Peak resident memory of this process, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_children_rss_mb() -> float:
    """Peak resident memory of the largest finished child process (the parse workers), in MB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def server_rss_mb(cfg: Config) -> float:
    pid = server.read_pid(server.paths_for(cfg))
    if pid is None:
        return 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(cfg: Config) -> dict[str, float]:
    """CPU seconds so far of this process, its ended children (the parse workers) and the managed server: on a
    host whose speed varies by the hour, who spent the CPU says more than the wall time alone."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    pid = server.read_pid(server.paths_for(cfg))
    neo4j = 0.0
    if pid is not None:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        neo4j = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return {"kb": me.ru_utime + me.ru_stime, "parse_workers": kids.ru_utime + kids.ru_stime, "neo4j": neo4j}


def ensure_vault(path: Path, notes: int, words: int, seed: int = 7) -> Path:
    """Generate the synthetic vault once (bench/gen_vault.py)."""
    marker = path / ".generated"
    wanted = f"{notes} {words} {seed}"
    if marker.exists() and marker.read_text() == wanted:
        return path
    subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parent / "gen_vault.py"),
            str(path),
            "--notes",
            str(notes),
            "--words",
            str(words),
            "--seed",
            str(seed),
        ],
        check=True,
    )
    marker.write_text(wanted)
    return path
