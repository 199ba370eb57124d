"""The managed server's run safety: the stored password is never overwritten, never on a command line,
never echoed inside a URI, and kb's home and the Neo4j folders are private (issue 18, items 4 and 8)."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kb import server
from kb.cli import cli
from kb.config import load_config, read_config_file
from kb.errors import ServerError, redact_uri
from kb.java import find_java
from kb.store import Connection, Store, connection_for

WRONG = "wrong-env-password-123"


def link_lib(src: Path, home: Path) -> None:
    """Give a fresh kb home the session server's verified jars (hard links: no second fetch)."""
    dest = home / "neo4j" / src.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, copy_function=os.link)


class ArgvRecorder:
    """Every argv kb hands to subprocess (run and Popen both go through Popen)."""

    def __init__(self) -> None:
        self.argvs: list[list[str]] = []
        real = subprocess.Popen
        recorder = self

        class Recording(real):  # type: ignore[misc, valid-type]
            def __init__(self, args: Any, *rest: Any, **kw: Any) -> None:
                recorder.argvs.append([str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)])
                super().__init__(args, *rest, **kw)

        self.cls = Recording


@pytest.fixture(scope="module")
def managed(neo4j_server: server.ServerInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A first start in a fresh home with a wrong NEO4J_PASSWORD and NEO4J_USER in the environment."""
    home = tmp_path_factory.mktemp("managed") / "kbhome"
    link_lib(server.paths_for(load_config(home=neo4j_server.home.parent, env={})).lib, home)
    recorder = ArgvRecorder()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(subprocess, "Popen", recorder.cls)
        mp.setenv("NEO4J_PASSWORD", WRONG)
        cfg = load_config(home=home, env={"NEO4J_PASSWORD": WRONG, "NEO4J_USER": "mallory"})
        info = server.start(cfg)
        cmdlines = [
            Path(f"/proc/{p}/cmdline").read_bytes()
            for p in os.listdir("/proc")
            if p.isdigit() and Path(f"/proc/{p}/cmdline").exists()
        ]
    yield {"home": home, "info": info, "argvs": recorder.argvs, "cmdlines": cmdlines}
    server.stop(load_config(home=home, env={}))


def test_env_password_is_never_written_back(managed: dict[str, Any]) -> None:
    home, info = managed["home"], managed["info"]
    stored = read_config_file(home / "config.toml")
    assert stored["neo4j_password"] == info.password != WRONG
    assert info.user == "neo4j"
    with Store(Connection(info.uri, info.user, info.password, "neo4j")) as st:
        assert st.version.startswith("5.26")
    later = load_config(home=home, env={})  # a later command without the environment
    with Store(connection_for(later)) as st:
        assert st.version.startswith("5.26")
    again = server.start(load_config(home=home, env={"NEO4J_PASSWORD": WRONG}))
    assert again.password == info.password and read_config_file(home / "config.toml") == stored


def test_cli_without_env_after_a_start_with_a_wrong_env(managed: dict[str, Any]) -> None:
    env = {"KB_HOME": str(managed["home"]), "NEO4J_PASSWORD": None, "NEO4J_URI": None, "NEO4J_USER": None}
    result = CliRunner().invoke(cli, ["db", "init", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert f'"uri": "{managed["info"].uri}"' in result.output and '"schema_version"' in result.output


def test_db_start_says_the_env_password_is_not_used(managed: dict[str, Any]) -> None:
    before = (managed["home"] / "config.toml").read_bytes()
    env = {"KB_HOME": str(managed["home"]), "NEO4J_PASSWORD": WRONG, "NEO4J_URI": None}
    result = CliRunner().invoke(cli, ["db", "start"], env=env)
    assert result.exit_code == 0, result.output
    assert "NEO4J_PASSWORD is set but NEO4J_URI is not" in result.output and WRONG not in result.output
    assert (managed["home"] / "config.toml").read_bytes() == before


def test_password_never_on_a_command_line(managed: dict[str, Any]) -> None:
    password = managed["info"].password
    argvs = managed["argvs"]
    assert any("set-initial-password" in argv for argv in argvs), argvs
    assert any(server.MAIN_CLASS in argv for argv in argvs)
    assert not [argv for argv in argvs if any(password in a for a in argv)]
    assert not [c for c in managed["cmdlines"] if password.encode() in c]
    environ = Path(f"/proc/{managed['info'].pid}/environ").read_bytes()
    assert password.encode() not in environ and WRONG.encode() not in environ
    assert not list((managed["home"] / "neo4j" / "run").glob("*.args"))


def _loose(path: Path) -> list[str]:
    return sorted(
        str(p) for p in [path, *path.rglob("*")] if not p.is_symlink() and stat.S_IMODE(p.lstat().st_mode) & 0o077
    )


def test_home_and_server_files_are_private(managed: dict[str, Any]) -> None:
    home = managed["home"]
    root = home / "neo4j"
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "config.toml").stat().st_mode) == 0o600
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert (root / "data" / "dbms" / "auth.ini").exists()
    assert list((root / "data" / "transactions").rglob("*.transaction.db.*"))
    for folder in ("conf", "data", "logs", "run"):
        assert _loose(root / folder) == [], folder


def test_restart_tightens_old_modes_and_keeps_flag_values_out(managed: dict[str, Any]) -> None:
    home = managed["home"]
    root = home / "neo4j"
    before = (home / "config.toml").read_bytes()
    assert server.stop(load_config(home=home, env={}))
    for path in [home, *[p for f in ("conf", "data", "logs") for p in [root / f, *(root / f).rglob("*")]]]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    port = server.free_port()
    info = server.start(load_config(home=home, env={"KB_SERVER_PORT": str(port)}))
    assert info.port == port and info.password == managed["info"].password
    assert (home / "config.toml").read_bytes() == before
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert [p for f in ("conf", "data", "logs") for p in _loose(root / f)] == []
    assert server.status(load_config(home=home, env={}))["uri"] == f"bolt://127.0.0.1:{port}"


def test_lost_password_is_a_one_line_error(managed: dict[str, Any], tmp_path: Path) -> None:
    home = tmp_path / "kbhome"
    (home / "neo4j" / "data" / "dbms").mkdir(parents=True)
    (home / "neo4j" / "data" / "dbms" / "auth.ini").write_text("neo4j:SHA-256,x,y,1024:\n")
    with pytest.raises(ServerError, match=r"config.toml has no neo4j_password: put it back there"):
        server.start(load_config(home=home, env={"NEO4J_PASSWORD": WRONG}))
    assert not (home / "config.toml").exists()


def _neo4j_hash(password: str, salt_hex: str) -> str:
    """Neo4j's stored credential: SHA-256 of salt + password, hashed 1,024 times in all."""
    digest = hashlib.sha256(bytes.fromhex(salt_hex) + password.encode()).digest()
    for _ in range(1023):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()


def test_initial_password_file_keeps_odd_characters(managed: dict[str, Any], tmp_path: Path) -> None:
    paths = server.ServerPaths(tmp_path / "neo4j", "5.26.31")
    paths.root.mkdir()
    os.symlink(server.paths_for(load_config(home=managed["home"], env={})).lib, paths.lib)
    server.write_conf(paths, server.free_port(), "256m", "64m")
    odd = "-dash sp ace\"quote\\back'single#hash"
    server._set_initial_password(paths, find_java(), odd)
    _, credential, _ = (paths.data / "dbms" / "auth.ini").read_text().split(":", 2)
    _, digest, salt, _ = credential.split(",")
    assert digest == _neo4j_hash(odd, salt)
    assert not list((paths.root / "run").glob("*.args"))


@pytest.mark.parametrize(
    "uri, shown",
    [
        ("neo4j://alice:hunter22@db.example:7687", "neo4j://alice:***@db.example:7687"),
        ("bolt://127.0.0.1:7687", "bolt://127.0.0.1:7687"),
        ("neo4j+s://bob@db.example", "neo4j+s://bob@db.example"),
    ],
)
def test_redact_uri(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown


@pytest.mark.parametrize("args", [["db", "init"], ["db", "status"], ["db", "start"], ["browse"]])
@pytest.mark.parametrize("password_env", [None, "x"])
def test_a_password_inside_neo4j_uri_is_never_echoed(args: list[str], password_env: str | None, tmp_path: Path) -> None:
    env = {
        "KB_HOME": str(tmp_path),
        "NEO4J_URI": f"neo4j://alice:hunter22@127.0.0.1:{server.free_port()}",
        "NEO4J_PASSWORD": password_env,
    }
    result = CliRunner().invoke(cli, args, env=env)
    assert "hunter22" not in result.output
    assert "alice:***@127.0.0.1" in result.output
    if args == ["db", "init"]:
        assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1


def test_server_jvm_runs_with_its_whole_heap_and_the_throughput_collector(managed: dict[str, Any]) -> None:
    """kb starts the JVM itself, so the conf's heap.initial_size never reaches it: the command line must say it."""
    cfg = load_config(home=managed["home"], env={})
    pid = server.read_pid(server.paths_for(cfg))  # a test before may have restarted it
    assert pid is not None
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    heap = cfg.server_heap
    assert f"-Xms{heap}" in argv and f"-Xmx{heap}" in argv
    assert "-XX:+UseParallelGC" in argv and not [
        a for a in argv if a.startswith("-XX:+Use") and a.endswith("GC") and a != "-XX:+UseParallelGC"
    ]
    assert "-XX:InlineSmallCode=1000" in argv  # less C2 work on a two-core machine (kb/server.py)
