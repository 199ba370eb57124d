"""Time from an empty kb home to a running managed server (cold and warm, wheel vs system Java) and the
server's peak RSS at the default heap.

    python bench/server_start.py [--cold-maven] [--out bench/out/server_start.json]

Cold: an empty kb home; the jars come from a stand-in repository on 127.0.0.1 (a copy of the local
Maven repository, so kb's own download, resume and SHA-256 code runs, without the network), or, with
--cold-maven, from Maven with an empty local repository (a real download). Warm: the same home, stopped,
started again (jars verified, data kept), three times. Every start is `kb db start` in a new process.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from kb import jars, server
from kb.config import load_config, write_config_values
from kb.java import find_java

KB = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "kb"
OUT = Path(__file__).resolve().parent / "out"
WARM_RUNS = 3


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    """A Maven-layout stand-in repository over `folder` on 127.0.0.1."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def kb_start(home: Path, env: dict[str, str]) -> float:
    """Seconds for `kb db start` in a new process."""
    t0 = time.monotonic()
    subprocess.run(
        [str(KB), "db", "start"],
        check=True,
        env={**os.environ, **env, "KB_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.monotonic() - t0


def rss(home: Path) -> dict[str, float]:
    """Current and peak resident memory of the home's server, in MB."""
    pid = server.read_pid(server.paths_for(load_config(home=home, env={})))
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


def refresh_example(home: Path) -> float:
    vault = Path(__file__).resolve().parents[1] / "examples" / "vault"
    t0 = time.monotonic()
    subprocess.run(
        [str(KB), "refresh", "--vault", str(vault), "--no-extract", "--embedder", "onnx:minilm"],
        check=True,
        env={**os.environ, "KB_HOME": str(home)},
        stdout=subprocess.DEVNULL,
    )
    return time.monotonic() - t0


def one(java: str, cold_maven: bool, repo_url: str, work: Path) -> dict[str, object]:
    """Cold start, a refresh of the example vault, then a stop and a warm start, with `java`."""
    home = work / f"home-{java}"
    write_config_values(home, {"java": java})
    env = {"KB_JAR_REPOSITORY": repo_url, "HOME": str(work / f"user-{java}")}  # no local Maven repository
    if cold_maven:
        env = {"MAVEN_OPTS": f"-Dmaven.repo.local={work / f'm2-{java}'}", "HOME": str(work / f"user-{java}")}
    row: dict[str, object] = {
        "java": java,
        "java_version": find_java(java).version,
        "cold_source": "maven" if cold_maven else "stand-in repository (127.0.0.1)",
    }
    row["cold_s"] = round(kb_start(home, env), 1)
    row["after_start_mb"] = rss(home)
    row["refresh_example_s"] = round(refresh_example(home), 1)
    row["after_refresh_mb"] = rss(home)
    warm = []
    for _ in range(WARM_RUNS):
        subprocess.run(
            [str(KB), "db", "stop"], check=True, env={**os.environ, "KB_HOME": str(home)}, stdout=subprocess.DEVNULL
        )
        warm.append(round(kb_start(home, {}), 1))
    row["warm_s"] = warm
    lib = server.paths_for(load_config(home=home, env={})).lib
    t0 = time.monotonic()
    assert jars.bad_jars(lib, jars.packaged_lock()) == []
    row["verify_s"] = round(time.monotonic() - t0, 2)
    subprocess.run(
        [str(KB), "db", "stop"], check=True, env={**os.environ, "KB_HOME": str(home)}, stdout=subprocess.DEVNULL
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-maven", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT / "server_start.json")
    args = parser.parse_args()
    lock = jars.packaged_lock()
    work = Path(tempfile.mkdtemp(prefix="kb-server-bench-"))
    httpd, url = serve(jars.local_repository())
    try:
        rows = [one(java, args.cold_maven, url, work) for java in ("system", "wheel")]
    finally:
        httpd.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "jars": len(lock.jars),
        "jar_mb": round(sum(j.size for j in lock.jars) / 1e6, 1),
        "heap": load_config(home=work, env={}).server_heap,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
