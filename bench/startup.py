"""Start-up an agent waits for: process wall time of `kb --help` and `kb search --json` (offline embedder,
example vault), median and spread of N runs each, plus the import time of `kb.cli` alone and the search's first
use in a home (the embedder's saved graph removed before each run: what the one-time save costs).

    python bench/startup.py [--runs 10] [--out bench/out/startup.json] [--home DIR] [--keep-server]
                            [--against OTHER_CHECKOUT]

Its own kb home (default bench/out/startup-home) and managed server: started and refreshed once before the
timed runs (not timed), so each `kb search` is a new process against a running server, as a skill calls it.
`--against DIR` times another checkout too (PYTHONPATH=DIR), its runs interleaved with this one's so that both
see the same load; each row also gives the median CPU time (user+sys) of the process, which a busy machine
inflates far less than wall time, and the load average before and after.
Bytecode is cached under the home (PYTHONPYCACHEPREFIX) as an installed kb has its .pyc files, even when the
caller sets PYTHONDONTWRITEBYTECODE (otherwise every run would time the compiler); the warm-up run writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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
COMMANDS = {
    "python -c 'import kb.cli'": [sys.executable, "-c", "import kb.cli"],
    "kb --help": [str(KB), "--help"],
    "kb search --json": [str(KB), "search", QUESTION, "--embedder", "onnx:minilm", "--json"],
}
# the same search in a home without the offline embedder's saved graph (removed before each run): its first use
FIRST_USE = "kb search --json, first use"
COMMANDS[FIRST_USE] = COMMANDS["kb search --json"]


def run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one process (started in the kb home, so the working folder is never on its
    import path); a failure stops the bench with the command's error."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True, cwd=env["KB_HOME"])
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def row(name: str, tree: str, samples: list[tuple[float, float]], load: tuple[float, float]) -> dict[str, object]:
    ms = [wall * 1e3 for wall, _ in samples]
    return {
        "command": name,
        "tree": tree,
        "runs": len(samples),
        "median_ms": round(statistics.median(ms), 1),
        "min_ms": round(min(ms), 1),
        "max_ms": round(max(ms), 1),
        "cpu_median_ms": round(statistics.median(cpu * 1e3 for _, cpu in samples), 1),
        "load_before": load[0],
        "load_after": load[1],
    }


def timed(name: str, envs: dict[str, dict[str, str]], runs: int) -> list[dict[str, object]]:
    """`runs` runs of one command per tree, alternating trees run by run."""
    for env in envs.values():
        run(COMMANDS[name], env)  # warm the page cache and write the bytecode; not counted
    samples: dict[str, list[tuple[float, float]]] = {tree: [] for tree in envs}
    load_before = round(os.getloadavg()[0], 2)
    for _ in range(runs):
        for tree, env in envs.items():
            if name == FIRST_USE:
                shutil.rmtree(Path(env["KB_HOME"]) / "cache" / "onnx", ignore_errors=True)
            samples[tree].append(run(COMMANDS[name], env))
    load = (load_before, round(os.getloadavg()[0], 2))
    return [row(name, tree, samples[tree], load) for tree in envs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", type=Path, default=OUT / "startup.json")
    ap.add_argument("--home", type=Path, default=OUT / "startup-home", help="The bench's own kb home.")
    ap.add_argument("--keep-server", action="store_true", help="Leave the bench's server running afterwards.")
    ap.add_argument("--against", type=Path, help="Another checkout to time in the same runs (PYTHONPATH).")
    args = ap.parse_args()
    home = args.home.resolve()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "NEO4J_", "PYTHONDONTWRITEBYTECODE"))}
    env = {**keep, "KB_HOME": str(home), "PYTHONPYCACHEPREFIX": str(home / "pycache"), "PYTHONPATH": str(ROOT)}
    envs = {"this": env}
    if args.against:
        if not (args.against / "kb" / "cli" / "__init__.py").is_file():
            sys.exit(f"--against {args.against} is not a kb checkout (no kb/cli/__init__.py): give its root folder")
        envs[str(args.against)] = {**env, "PYTHONPATH": str(args.against.resolve())}
    run([str(KB), "refresh", "--vault", str(VAULT), "--embedder", "onnx:minilm", "--no-extract", "--json"], env)
    try:
        rows = [r for name in COMMANDS for r in timed(name, envs, args.runs)]
        run(COMMANDS["kb search --json"], env)  # leave the saved graph in place for the next bench
    finally:
        if not args.keep_server:
            subprocess.run([str(KB), "db", "stop"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("| command | tree | runs | median ms | min ms | max ms | cpu median ms | load 1-min |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| `{r['command']}` | {r['tree']} | {r['runs']} | {r['median_ms']} | {r['min_ms']} | {r['max_ms']} "
            f"| {r['cpu_median_ms']} | {r['load_before']}-{r['load_after']} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
