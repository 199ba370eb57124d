"""Start-up an agent waits for: process wall time of `kb --help` and `kb search --json` (offline embedder,
example vault), median and spread of N runs each, plus the import time of `kb.cli` alone.

    python bench/startup.py [--runs 10] [--out bench/out/startup.json] [--home DIR] [--keep-server]

Its own kb home (default bench/out/startup-home) and managed server: started and refreshed once before the
timed runs (not timed), so each `kb search` is a new process against a running server, as a skill calls it.
To compare with another checkout, run it with PYTHONPATH=that checkout and another --home.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KB = Path(sys.executable).parent / "kb"
OUT = Path(__file__).resolve().parent / "out"
VAULT = ROOT / "examples" / "vault"
QUESTION = "what did we decide about the pricing of the seed round?"


def run(args: list[str], env: dict[str, str]) -> float:
    """Seconds of wall time for one process (started in the kb home, so the working folder is never on its
    import path); a failure stops the bench with the command's error."""
    t0 = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True, cwd=env["KB_HOME"])
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return seconds


def timed(name: str, args: list[str], env: dict[str, str], runs: int) -> dict[str, object]:
    run(args, env)  # warm the page cache; not counted
    ms = [run(args, env) * 1e3 for _ in range(runs)]
    return {
        "command": name,
        "runs": runs,
        "median_ms": round(statistics.median(ms), 1),
        "min_ms": round(min(ms), 1),
        "max_ms": round(max(ms), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", type=Path, default=OUT / "startup.json")
    ap.add_argument("--home", type=Path, default=OUT / "startup-home", help="The bench's own kb home.")
    ap.add_argument("--keep-server", action="store_true", help="Leave the bench's server running afterwards.")
    args = ap.parse_args()
    home = args.home.resolve()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("KB_", "NEO4J_"))}, "KB_HOME": str(home)}
    run([str(KB), "refresh", "--vault", str(VAULT), "--embedder", "onnx:minilm", "--no-extract", "--json"], env)
    try:
        rows = [
            timed("python -c 'import kb.cli'", [sys.executable, "-c", "import kb.cli"], env, args.runs),
            timed("kb --help", [str(KB), "--help"], env, args.runs),
            timed(
                "kb search --json", [str(KB), "search", QUESTION, "--embedder", "onnx:minilm", "--json"], env, args.runs
            ),
        ]
    finally:
        if not args.keep_server:
            subprocess.run([str(KB), "db", "stop"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("| command | runs | median ms | min ms | max ms |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r['command']}` | {r['runs']} | {r['median_ms']} | {r['min_ms']} | {r['max_ms']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
