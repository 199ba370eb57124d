"""Configuration: file, then environment, then flags; secrets kept private."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kb.config import load_config, write_config_values
from kb.errors import ConfigError


def test_precedence_file_env_flags(tmp_path: Path) -> None:
    write_config_values(tmp_path, {"neo4j_uri": "bolt://file:1", "embedder": "onnx:minilm", "neo4j_user": "f"})
    env = {"NEO4J_URI": "bolt://env:2", "NEO4J_USER": "e"}
    cfg = load_config(home=tmp_path, env=env, flags={"neo4j_user": "flag"})
    assert (cfg.neo4j_uri, cfg.neo4j_user, cfg.embedder) == ("bolt://env:2", "flag", "onnx:minilm")


def test_config_file_is_owner_only(tmp_path: Path) -> None:
    path = write_config_values(tmp_path, {"neo4j_password": "s3cret"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config(home=tmp_path, env={}).neo4j_password == "s3cret"


def test_private_folders_from_overrides(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "overrides.yaml").write_text("private_folders: [Journal, Health/]\n")
    cfg = load_config(home=tmp_path, env={}, flags={"vault": str(vault), "private_folders": "Therapy"})
    assert cfg.private_folders == ("Health", "Journal", "Therapy")


def test_bad_values_name_the_value_and_fix(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("server_port = 'abc'\n")
    with pytest.raises(ConfigError, match="server_port = 'abc' is not a whole number"):
        load_config(home=tmp_path, env={})
    (tmp_path / "config.toml").write_text("x = [\n")
    with pytest.raises(ConfigError, match="config.toml: not valid TOML"):
        load_config(home=tmp_path, env={})
    with pytest.raises(ConfigError, match="no vault set"):
        load_config(home=tmp_path / "other", env={}).require_vault()
