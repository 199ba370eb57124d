"""kb's managed Neo4j Community server: jars from Maven, one JVM, Bolt on 127.0.0.1."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kb.config import Config, write_config_values
from kb.errors import ServerError

MAIN_CLASS = "org.neo4j.server.CommunityEntryPoint"
ADMIN_CLASS = "org.neo4j.cli.AdminTool"
JVM_FLAGS = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-Djdk.tls.ephemeralDHKeySize=2048",
)


@dataclass(frozen=True)
class ServerInfo:
    """Where a running managed server listens and how to log in."""

    uri: str
    user: str
    password: str
    pid: int
    port: int
    home: Path


@dataclass(frozen=True)
class ServerPaths:
    """The managed server's folders under the kb home."""

    root: Path
    version: str

    @property
    def lib(self) -> Path:
        return self.root / f"lib-{self.version}"

    @property
    def conf(self) -> Path:
        return self.root / "conf"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def pid_file(self) -> Path:
        return self.root / "run" / "kb-neo4j.pid"


def paths_for(cfg: Config) -> ServerPaths:
    return ServerPaths(cfg.server_dir, cfg.neo4j_version)


def check_tools() -> None:
    """Java 17+ and Maven must be on PATH; say what to install otherwise."""
    if shutil.which("java") is None:
        raise ServerError("java not found: install a Java 17 or newer JDK (e.g. apt-get install openjdk-17-jdk-headless)")
    if shutil.which("mvn") is None:
        raise ServerError("mvn not found: install Maven (e.g. apt-get install maven) so kb can fetch the Neo4j jars")


def ensure_jars(paths: ServerPaths, log: Path | None = None) -> Path:
    """Fetch the server's jars once with Maven; a half-done fetch is redone, never used."""
    if (paths.lib / ".complete").exists():
        return paths.lib
    check_tools()
    work = paths.root / f"fetch-{paths.version}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pom = resources.files("kb.data").joinpath("neo4j-pom.xml").read_text(encoding="utf-8")
    (work / "pom.xml").write_text(pom.replace("@NEO4J_VERSION@", paths.version), encoding="utf-8")
    cmd = ["mvn", "-B", "-q", "-f", str(work / "pom.xml"), "dependency:copy-dependencies",
           f"-DoutputDirectory={work / 'lib'}", "-DincludeScope=runtime"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise ServerError(f"mvn could not fetch Neo4j {paths.version}: {' '.join(tail)}")
    shutil.rmtree(paths.lib, ignore_errors=True)
    (work / "lib").rename(paths.lib)
    (paths.lib / ".complete").write_text(paths.version)
    shutil.rmtree(work, ignore_errors=True)
    return paths.lib


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_conf(paths: ServerPaths, port: int, heap: str, pagecache: str) -> None:
    """neo4j.conf for a loopback-only server with auth on."""
    paths.conf.mkdir(parents=True, exist_ok=True)
    lines = {
        "server.directories.data": paths.data,
        "server.directories.logs": paths.logs,
        "server.directories.run": paths.root / "run",
        "server.directories.import": paths.root / "import",
        "server.directories.plugins": paths.root / "plugins",
        "server.default_listen_address": "127.0.0.1",
        "server.bolt.listen_address": f"127.0.0.1:{port}",
        "server.bolt.advertised_address": f"127.0.0.1:{port}",
        "server.http.enabled": "false",
        "server.https.enabled": "false",
        "dbms.security.auth_enabled": "true",
        "dbms.security.allow_csv_import_from_file_urls": "false",
        "server.memory.heap.initial_size": heap,
        "server.memory.heap.max_size": heap,
        "server.memory.pagecache.size": pagecache,
        "db.tx_log.rotation.retention_policy": "2 files",
        "dbms.usage_report.enabled": "false",
    }
    text = "".join(f"{k}={v}\n" for k, v in lines.items())
    (paths.conf / "neo4j.conf").write_text(text, encoding="utf-8")


def read_pid(paths: ServerPaths) -> int | None:
    """The pid of a live managed server, or None."""
    try:
        pid = int(paths.pid_file.read_text().strip())
        os.kill(pid, 0)
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        return None
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists() and MAIN_CLASS.encode() not in cmdline.read_bytes():
        return None
    return pid


def port_open(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def _java_env(paths: ServerPaths) -> dict[str, str]:
    env = dict(os.environ)
    env["NEO4J_HOME"] = str(paths.root)
    env["NEO4J_CONF"] = str(paths.conf)
    return env


def _set_initial_password(paths: ServerPaths, password: str) -> None:
    cmd = ["java", "-cp", f"{paths.lib}/*", ADMIN_CLASS, "dbms", "set-initial-password", password]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_java_env(paths))
    if proc.returncode != 0:
        raise ServerError(f"could not set the Neo4j password: {proc.stderr.strip()[-300:]}")


def start(cfg: Config, timeout: float = 120.0) -> ServerInfo:
    """Start (or find) the managed server and wait until Bolt answers."""
    paths = paths_for(cfg)
    ensure_jars(paths)
    port = cfg.server_port or free_port()
    password = cfg.neo4j_password or secrets.token_urlsafe(18)
    write_config_values(cfg.home, {"server_port": port, "neo4j_password": password})
    pid = read_pid(paths)
    if pid is not None and port_open(port):
        return ServerInfo(f"bolt://127.0.0.1:{port}", cfg.neo4j_user, password, pid, port, paths.root)
    if port_open(port):
        raise ServerError(f"port {port} is taken by another program: set server_port in {cfg.config_file} "
                          "or KB_SERVER_PORT to a free port")
    write_conf(paths, port, cfg.server_heap, cfg.server_pagecache)
    if not (paths.data / "dbms" / "auth.ini").exists():
        _set_initial_password(paths, password)
    paths.logs.mkdir(parents=True, exist_ok=True)
    paths.pid_file.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["java", f"-Xmx{cfg.server_heap}", *JVM_FLAGS, "-cp", f"{paths.lib}/*", MAIN_CLASS,
           f"--home-dir={paths.root}", f"--config-dir={paths.conf}"]
    with open(paths.logs / "console.log", "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=paths.root, env=_java_env(paths), start_new_session=True)
    paths.pid_file.write_text(str(proc.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"Neo4j exited with code {proc.returncode} while starting: see "
                              f"{paths.logs / 'console.log'} and {paths.logs / 'neo4j.log'}")
        if port_open(port) and _bolt_ready(paths):
            return ServerInfo(f"bolt://127.0.0.1:{port}", cfg.neo4j_user, password, proc.pid, port, paths.root)
        time.sleep(0.3)
    stop(cfg)
    raise ServerError(f"Neo4j did not answer on 127.0.0.1:{port} within {timeout:.0f} s: see {paths.logs / 'neo4j.log'}")


def _bolt_ready(paths: ServerPaths) -> bool:
    log = paths.logs / "neo4j.log"
    return log.exists() and b"Started." in log.read_bytes()[-4000:]


def stop(cfg: Config, timeout: float = 60.0) -> bool:
    """Stop the managed server; False when none was running."""
    paths = paths_for(cfg)
    pid = read_pid(paths)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        _reap(pid)
        time.sleep(0.2)
    else:
        os.kill(pid, signal.SIGKILL)
    paths.pid_file.unlink(missing_ok=True)
    return True


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def status(cfg: Config) -> dict[str, object]:
    """What a user needs to know about the managed server."""
    paths = paths_for(cfg)
    pid = read_pid(paths)
    port = cfg.server_port
    return {
        "running": pid is not None and port is not None and port_open(port),
        "pid": pid,
        "uri": f"bolt://127.0.0.1:{port}" if port else None,
        "user": cfg.neo4j_user,
        "installed": (paths.lib / ".complete").exists(),
        "version": cfg.neo4j_version,
        "home": str(paths.root),
    }
