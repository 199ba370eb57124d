"""kb's managed Neo4j Community server: locked, verified jars, one JVM, Bolt on 127.0.0.1, files private."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kb.config import Config, read_config_file, write_config_values
from kb.errors import ServerError
from kb.java import Java, find_java

MAIN_CLASS = "org.neo4j.server.CommunityEntryPoint"
MANAGED_USER = "neo4j"  # set-initial-password sets this user's password
ADMIN_CLASS = "org.neo4j.cli.AdminTool"
JVM_FLAGS = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    # the throughput collector: at 13,284 notes a first build 62.2-73.6 s -> 59.7-65.6 s (Neo4j's CPU 76-89 -> 66-73 s)
    # and search right after the warm-up p50 40 -> 31 ms against G1, same day (bench/structure.py, search_latency.py)
    "-XX:+UseParallelGC",
    # C2 inlines an already compiled method only when its code is under this size (JDK-8254913 raised the x64
    # default to 2,500 bytes; 1,000 was the default before): on two cores Neo4j's C2 thread took 43-47 s of CPU in
    # a first build at 13,284 notes and now 25-30 s, the build 62.7-70.1 s -> 55.4-57.2 s with Bolt workers no
    # slower, search right after the warm-up p50 38-53 -> 31-34 ms, steady state the same (bench, in turns)
    "-XX:InlineSmallCode=1000",
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


def ensure_jars(paths: ServerPaths, cfg: Config | None = None, progress: Callable[[str], None] | None = None) -> Path:
    """The server's jars, every one verified against the lock file on every start and fetched again if bad."""
    from kb import jars  # urllib.request and the XML reader: only a start needs them, not each `kb search`

    lock = jars.packaged_lock()
    if lock.version == paths.version:
        repo = cfg.jar_repository if cfg else None
        jars.ensure(paths.lib, lock, str(repo) if repo else None, progress)
        return paths.lib
    return _maven_unlocked(paths)


def _maven_unlocked(paths: ServerPaths) -> Path:
    """A Neo4j version the lock file does not cover: fetched once with Maven, unverified."""
    from kb import jars  # as in ensure_jars

    if (paths.lib / ".complete").exists():
        return paths.lib
    if shutil.which("mvn") is None:
        raise ServerError(
            f"Neo4j {paths.version} is not in kb's jar lock and mvn is not installed: install Maven, "
            f'or use neo4j_version = "{jars.packaged_lock().version}"'
        )
    work = paths.root / f"fetch-{paths.version}"
    failed = jars.maven_copy(paths.version, work)
    if failed is not None:
        raise ServerError(f"mvn could not fetch Neo4j {paths.version}: {failed}")
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
    paths.conf.mkdir(mode=0o700, parents=True, exist_ok=True)
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


# Variables a child JVM never needs; NEO4J_PASSWORD / NEO4J_AUTH would put a secret in its environment.
_DROPPED_ENV = ("NEO4J_PASSWORD", "NEO4J_AUTH", "NEO4J_URI", "NEO4J_USER", "NEO4J_USERNAME", "JAVA_TOOL_OPTIONS")
PRIVATE_UMASK = 0o077


def _java_env(paths: ServerPaths, java: Java) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env["NEO4J_HOME"] = str(paths.root)
    env["NEO4J_CONF"] = str(paths.conf)
    env["JAVA_HOME"] = str(java.home)
    return env


def make_private(path: Path) -> None:
    """Take group and other permissions off `path` and everything under it (kb home, data, logs, conf)."""
    if not path.exists():
        return
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            _tighten(Path(root) / name)
    _tighten(path)


def _tighten(path: Path) -> None:
    try:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & 0o077:
            os.chmod(path, stat.S_IMODE(mode) & 0o700)
    except FileNotFoundError:
        pass


def _argfile_quote(text: str) -> str:
    """One argument for the admin tool's @-file: quoted, with backslashes and quotes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _set_initial_password(paths: ServerPaths, java: Java, password: str) -> None:
    """Set the password through an @-file (mode 600, deleted after), so it never appears in a process list."""
    run_dir = paths.root / "run"
    run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    argfile = run_dir / f"initial-password.{os.getpid()}.args"
    fd = os.open(argfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("--\n" + _argfile_quote(password) + "\n")  # `--`: a password may start with "-"
        cmd = [str(java.path), "-cp", f"{paths.lib}/*", ADMIN_CLASS, "dbms", "set-initial-password", f"@{argfile}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_java_env(paths, java), umask=PRIVATE_UMASK)
    finally:
        argfile.unlink(missing_ok=True)
    if proc.returncode != 0:
        raise ServerError(f"could not set the Neo4j password: {proc.stderr.strip().replace(password, '***')[-300:]}")


def running_port(paths: ServerPaths) -> int | None:
    """The Bolt port in the neo4j.conf kb wrote (the one a running server listens on)."""
    try:
        text = (paths.conf / "neo4j.conf").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("server.bolt.listen_address="):
            port = line.rsplit(":", 1)[-1]
            return int(port) if port.isdigit() else None
    return None


def _stored_password(cfg: Config, paths: ServerPaths) -> tuple[str, bool]:
    """The managed server's password from config.toml (never from the environment); True when just generated."""
    stored = read_config_file(cfg.config_file).get("neo4j_password")
    if stored:
        return str(stored), False
    if (paths.data / "dbms" / "auth.ini").exists() or (paths.data / "databases" / "system").exists():
        raise ServerError(
            f"kb's Neo4j in {paths.data} already has a password but {cfg.config_file} has no "
            "neo4j_password: put it back there, or delete that data folder to start afresh"
        )
    return secrets.token_urlsafe(18), True


def _info(port: int, password: str, pid: int, paths: ServerPaths) -> ServerInfo:
    return ServerInfo(f"bolt://127.0.0.1:{port}", MANAGED_USER, password, pid, port, paths.root)


def start(cfg: Config, timeout: float = 120.0, progress: Callable[[str], None] | None = None) -> ServerInfo:
    """Start (or find) the managed server and wait until Bolt answers.

    Only values kb generates (the first password, a free port) are written to config.toml; a password,
    user or port from the environment or a flag is never written back.
    """
    paths = paths_for(cfg)
    cfg.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    if cfg.home != Path.home():
        _tighten(cfg.home)
    password, generated = _stored_password(cfg, paths)
    pid = read_pid(paths)
    port = running_port(paths) if pid is not None else None
    if pid is not None and port is not None and _wait_running(pid, port, timeout):
        return _info(port, password, pid, paths)
    ensure_jars(paths, cfg, progress)
    java = find_java(cfg.java)
    port = cfg.server_port or free_port()
    updates: dict[str, object] = {"neo4j_password": password} if generated else {}
    if cfg.server_port is None:
        updates["server_port"] = port
    if updates:
        write_config_values(cfg.home, updates)
    if port_open(port):
        raise ServerError(
            f"port {port} is taken by another program: set server_port in {cfg.config_file} "
            "or KB_SERVER_PORT to a free port"
        )
    return _launch(cfg, paths, java, port, password, timeout)


def _wait_running(pid: int, port: int, timeout: float) -> bool:
    """True once a live server's port answers (another command may have just started it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port):
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.3)
    return False


def _launch(cfg: Config, paths: ServerPaths, java: Java, port: int, password: str, timeout: float) -> ServerInfo:
    """Write the conf, set the first password, run the JVM (umask 077) and wait for Bolt."""
    write_conf(paths, port, cfg.server_heap, cfg.server_pagecache)
    if not (paths.data / "dbms" / "auth.ini").exists() and not (paths.data / "databases" / "system").exists():
        _set_initial_password(paths, java, password)
    for folder in (paths.logs, paths.pid_file.parent, paths.data):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    _tighten(paths.root)
    for folder in (paths.conf, paths.data, paths.logs, paths.pid_file.parent):
        make_private(folder)
    cmd = [
        str(java.path),
        f"-Xms{cfg.server_heap}",  # the conf's heap.initial_size is read by Neo4j's launcher only, not by this JVM
        f"-Xmx{cfg.server_heap}",
        *JVM_FLAGS,
        "-cp",
        f"{paths.lib}/*",
        MAIN_CLASS,
        f"--home-dir={paths.root}",
        f"--config-dir={paths.conf}",
    ]
    fd = os.open(paths.logs / "console.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=paths.root,
            env=_java_env(paths, java),
            start_new_session=True,
            umask=PRIVATE_UMASK,
        )
    fd = os.open(paths.pid_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(str(proc.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(
                f"Neo4j exited with code {proc.returncode} while starting: see "
                f"{paths.logs / 'console.log'} and {paths.logs / 'neo4j.log'}"
            )
        if port_open(port) and _bolt_ready(paths):
            return _info(port, password, proc.pid, paths)
        time.sleep(0.3)
    stop(cfg)
    raise ServerError(
        f"Neo4j did not answer on 127.0.0.1:{port} within {timeout:.0f} s: see {paths.logs / 'neo4j.log'}"
    )


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
    port = (running_port(paths) if pid is not None else None) or cfg.server_port
    return {
        "running": pid is not None and port is not None and port_open(port),
        "pid": pid,
        "uri": f"bolt://127.0.0.1:{port}" if port else None,
        "user": MANAGED_USER,
        "installed": (paths.lib / ".complete").exists(),
        "version": cfg.neo4j_version,
        "home": str(paths.root),
        "java": _java_status(cfg.java),
    }


def _java_status(choice: str) -> str:
    """Which java a start would use, or why none would do."""
    try:
        java = find_java(choice)
    except ServerError as exc:
        return str(exc)
    return f"{java.path} (Java {java.version}, {java.source})"
