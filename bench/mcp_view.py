"""What the MCP public view costs: each hiding statement's time on the configured graph, and MCP calls
during a concurrent `kb refresh`.

    python bench/mcp_view.py [--rounds 10]                  # the view alone, per statement
    python bench/mcp_view.py --concurrent --edit 50 [--pause 1]  # edit 50 notes (half private), refresh with and
                                                            # without MCP calls running, both timed
                                                            # (refreshes run --no-extract --no-embed)
Reads NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD and KB_VAULT like kb does; writes nothing but the edits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb import cypher
from kb.cypher import public_view
from kb.sandbox import PublicStore
from kb.store import Connection


def connect() -> PublicStore:
    conn = Connection(
        os.environ["NEO4J_URI"],
        os.environ.get("NEO4J_USER", "neo4j"),
        os.environ["NEO4J_PASSWORD"],
        os.environ.get("NEO4J_DATABASE", "neo4j"),
    )
    return PublicStore(conn, 30.0, ["Journal"])


def sizes(store: PublicStore) -> dict[str, int]:
    with store.driver.session() as s:
        return {r["k"]: r["n"] for r in s.run(cypher.label_sizes())}


def per_statement(store: PublicStore, rounds: int) -> None:
    """Median time of each statement, in a fresh rolled-back transaction per round."""
    times: list[list[float]] = [[] for _ in public_view()]
    totals = []
    for _ in range(rounds):
        with store.driver.session() as s:
            tx = s.begin_transaction()
            t0 = time.perf_counter()
            for i, st in enumerate(public_view()):
                t = time.perf_counter()
                tx.run(st, folders=store.folders).consume()
                times[i].append(time.perf_counter() - t)
            totals.append(time.perf_counter() - t0)
            tx.rollback()
    for st, ts in zip(public_view(), times):
        print(f"{statistics.median(ts) * 1e3:8.1f} ms  {st[:90]}")
    print(
        f"{statistics.median(totals[1:] or totals) * 1e3:8.1f} ms  the whole view (median of {rounds}, first "
        f"round {totals[0] * 1e3:.0f} ms with planning)"
    )


def calls(store: PublicStore, stop: threading.Event, out: list[float], errors: list[str], pause: float) -> None:
    """MCP-like calls in a loop (the view plus one small query), `pause` seconds apart, until `stop`."""
    while not stop.wait(pause):
        t = time.perf_counter()
        try:
            store.read(cypher.chunk_count())
            out.append(time.perf_counter() - t)
        except Exception as exc:  # a failed call is what we measure here
            errors.append(f"{type(exc).__name__}: {str(exc)[:120]}")


def edit(vault: Path, n: int, round_no: int) -> None:
    """Append a line to n notes, half of them private."""
    private = sorted((vault / "Journal").rglob("*.md"))[: n // 2]
    public = sorted(p for p in vault.rglob("*.md") if "Journal" not in p.parts)[: n - len(private)]
    for p in private + public:
        with open(p, "a", encoding="utf-8") as fh:
            fh.write(f"\nEdited in round {round_no}.\n")


def refresh_time() -> float:
    t = time.perf_counter()
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "kb"), "refresh", "--no-extract", "--no-embed", "--json"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"kb refresh failed: {proc.stderr[-500:]}")
    return time.perf_counter() - t


def concurrent(store: PublicStore, n: int, pause: float) -> None:
    vault = Path(os.environ["KB_VAULT"])
    edit(vault, n, 1)
    alone = refresh_time()
    edit(vault, n, 2)
    stop, lat, errors = threading.Event(), [], []  # type: ignore[var-annotated]
    worker = threading.Thread(target=calls, args=(store, stop, lat, errors, pause))
    worker.start()
    during = refresh_time()
    stop.set()
    worker.join()
    lat.sort()
    print(
        f"refresh of {n} edited notes: {alone:.1f} s alone, {during:.1f} s with MCP calls running ({pause:g} s apart)"
    )
    print(
        f"MCP calls during it: {len(lat)}, p50 {lat[len(lat) // 2] * 1e3:.0f} ms, "
        f"p95 {lat[int(len(lat) * 0.95)] * 1e3:.0f} ms, max {lat[-1] * 1e3:.0f} ms, errors {len(errors)}"
    )
    for e in sorted(set(errors))[:5]:
        print("  ", e)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--concurrent", action="store_true")
    ap.add_argument("--edit", type=int, default=50)
    ap.add_argument("--pause", type=float, default=0.0, help="seconds between MCP calls")
    args = ap.parse_args()
    store = connect()
    print(sizes(store))
    if args.concurrent:
        concurrent(store, args.edit, args.pause)
    else:
        per_statement(store, args.rounds)


if __name__ == "__main__":
    main()
