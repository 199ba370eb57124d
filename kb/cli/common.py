"""Helpers the subcommands share: config from flags, JSON output, the store."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kb.config import Config, load_config

if TYPE_CHECKING:
    from kb.store import Store

F = TypeVar("F", bound=Callable[..., Any])


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")(fn)


def vault_option(fn: F) -> F:
    return click.option(
        "--vault",
        type=click.Path(file_okay=False, path_type=str),
        help="The vault folder (default: KB_VAULT or the config file).",
    )(fn)


def embedder_option(fn: F) -> F:
    return click.option("--embedder", help="ollama:bge-m3 (default) or onnx:minilm (offline).")(fn)


def config(**flags: Any) -> Config:
    return load_config({k: v for k, v in flags.items() if v is not None})


def store(cfg: Config) -> Store:
    """The graph store; the Neo4j driver is imported here, by the commands that need it."""
    from kb.store import open_store

    return open_store(cfg)


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def stdin_is_tty() -> bool:
    return sys.stdin.isatty()
