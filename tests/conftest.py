"""Test session fixtures: one real Neo4j server, started through kb's own launcher."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kb import server
from kb.config import Config, load_config
from kb.store import Connection, Store

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_VAULT = REPO / "examples" / "vault"
TEST_HOME = Path(os.environ.get("KB_TEST_HOME", REPO / ".kb-test"))


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[server.ServerInfo]:
    """A real Neo4j for the whole session, on its own port and data folder; fails loudly if it cannot start."""
    home = TEST_HOME / "home"
    shutil.rmtree(home / "neo4j" / "data", ignore_errors=True)
    (home / "config.toml").unlink(missing_ok=True)
    cfg = load_config(
        home=home, env={}, flags={"server_port": server.free_port(), "server_heap": "768m", "server_pagecache": "256m"}
    )
    info = server.start(cfg)
    yield info
    server.stop(load_config(home=home, env={}))


@pytest.fixture(scope="session")
def connection(neo4j_server: server.ServerInfo) -> Connection:
    return Connection(neo4j_server.uri, neo4j_server.user, neo4j_server.password, "neo4j")


@pytest.fixture
def store(connection: Connection) -> Iterator[Store]:
    """A connected store over an empty graph (nodes, kb metadata and the vector index dropped)."""
    st = Store(connection)
    st.clear()
    st.drop_vector_index()
    yield st
    st.close()


def point_cli_at(mp: pytest.MonkeyPatch, neo4j_server: server.ServerInfo, home: Path) -> None:
    """Environment for CLI calls: a kb home pointed at the test server, offline embedder."""
    mp.setenv("KB_HOME", str(home))
    mp.setenv("NEO4J_URI", neo4j_server.uri)
    mp.setenv("NEO4J_USER", neo4j_server.user)
    mp.setenv("NEO4J_PASSWORD", neo4j_server.password)
    mp.setenv("KB_EMBEDDER", "onnx:minilm")
    for var in ("KB_VAULT", "OLLAMA_HOST", "KB_OVERRIDES"):
        mp.delenv(var, raising=False)


@pytest.fixture
def kb_env(neo4j_server: server.ServerInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Environment for CLI tests: a fresh kb home pointed at the test server, offline embedder."""
    home = tmp_path / "kbhome"
    point_cli_at(monkeypatch, neo4j_server, home)
    return home


@contextlib.contextmanager
def example_graph(
    neo4j_server: server.ServerInfo, connection: Connection, root: Path, extra: dict[str, str] | None = None
) -> Iterator[Store]:
    """The example vault (plus `extra` notes, path -> text) built once through `kb refresh`, knowledge from its
    recorded cache, for a module whose tests only read the graph; the CLI environment stays set meanwhile."""
    from click.testing import CliRunner

    from kb.cli import cli

    vault = root / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault, symlinks=True)
    for rel, text in (extra or {}).items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        point_cli_at(mp, neo4j_server, root / "kbhome")
        mp.delenv("ANTHROPIC_API_KEY", raising=False)
        st = Store(connection)
        st.clear()
        st.drop_vector_index()
        result = CliRunner().invoke(cli, ["refresh", "--vault", str(vault), "--json"])
        assert result.exit_code == 0, result.output
        try:
            yield st
        finally:
            st.close()


SHARED_BUILD = "test_shared_build"  # meta key: which shared build the graph holds (clear() deletes it)


def shared_build(connection: Connection, name: str, build: Callable[[Store], dict[str, Any]]) -> dict[str, Any]:
    """Build the graph with `build` unless it already holds the build `name` (the previous test used it too),
    and return what `build` returned. Only for tests that never write: any test that writes starts from a
    cleared graph (the `store` fixture, a vault switch), and clearing deletes the mark, so a later test
    builds again."""
    st = Store(connection)
    try:
        mark = st.get_meta(SHARED_BUILD)
        if mark.get("name") == name:
            return dict(json.loads(mark["result"]))
        st.clear()
        st.drop_vector_index()
        result = build(st)
        st.set_meta(SHARED_BUILD, {"name": name, "result": json.dumps(result, sort_keys=True)})
        return result
    finally:
        st.close()


@pytest.fixture
def reader(connection: Connection) -> Iterator[Store]:
    """A store over the graph as it is (not cleared): for tests on a `shared_build`."""
    st = Store(connection)
    yield st
    st.close()


def make_config(vault: Path, **flags: object) -> Config:
    """A Config for pipeline tests (no config file, no environment)."""
    return load_config(home=TEST_HOME / "cfg", env={}, flags={"vault": str(vault), **flags})


@pytest.fixture
def example_vault(tmp_path: Path) -> Path:
    """A writable copy of the example vault (symlinks and mtimes kept)."""
    dest = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, dest, symlinks=True)
    return dest


NEO4J_FIXTURES = {"neo4j_server", "connection", "store", "kb_env"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "neo4j: the test needs the session's real Neo4j server (applied by fixture)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reaches Neo4j through a fixture, so `pytest -m "not neo4j"` is the fast loop."""
    for item in items:
        if NEO4J_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)
