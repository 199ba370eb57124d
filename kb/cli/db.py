"""`kb db start|stop|status|init`: kb's own Neo4j server, or the one you point it at."""

from __future__ import annotations

import os
from typing import Any

import click

from kb import server
from kb.cli.common import config, emit_json, json_option, store
from kb.config import Config, load_config
from kb.errors import redact_uri


@click.group("db")
def db() -> None:
    """Run kb's private Neo4j server, or check the one you configured."""


@db.command("start")
@json_option
def start(as_json: bool) -> None:
    """Start kb's managed Neo4j (its jars verified against kb's lock file) and wait until it answers."""
    cfg = config()
    if cfg.neo4j_uri:
        click.echo(f"NEO4J_URI is set ({redact_uri(cfg.neo4j_uri)}): kb uses that server and does not start its own.")
        return
    if not as_json:
        if os.environ.get("NEO4J_PASSWORD"):
            click.echo(
                "NEO4J_PASSWORD is set but NEO4J_URI is not: kb's own server keeps using the password "
                f"stored in {cfg.config_file} (set NEO4J_URI to use another server).",
                err=True,
            )
        click.echo("Starting Neo4j (the first start fetches and verifies its jars)...", err=True)
    info = server.start(cfg, progress=None if as_json else lambda line: click.echo(line, err=True))
    cfg = load_config()
    planned = _plan_searches(cfg)
    if as_json:
        emit_json({"uri": info.uri, "user": info.user, "pid": info.pid, "config": str(cfg.config_file), **planned})
        return
    click.echo(f"Neo4j is running at {info.uri} (pid {info.pid}).")
    if "searches_planned_s" in planned:
        click.echo(
            f"Search is ready: {planned['warm_searches']} searches planned its statements and warmed the server "
            f"in {planned['searches_planned_s']} s."
        )
    elif "searches_not_planned" in planned:
        click.echo(f"Warning: {planned['searches_not_planned']}", err=True)
    click.echo(
        f"Connect Neo4j Desktop or Browser: add a remote connection to {info.uri}, user "
        f"'{info.user}', password from neo4j_password in {cfg.config_file}."
    )


def _plan_searches(cfg: Config) -> dict[str, Any]:
    """Run searches on the started server so the first question does not wait for the statements' plans (about
    5 s on a just-started server) nor meet a cold server (kb.search.warm); nothing for a graph without a vault."""
    from kb.search.warm import warm_searches

    try:
        with store(cfg) as st:
            warmed = warm_searches(st)
        if warmed is None:
            return {}
        return {"searches_planned_s": round(warmed.seconds, 2), "warm_searches": warmed.searches}
    except Exception as exc:  # the server runs: a failed warm-up leaves the planning to the first search
        return {"searches_not_planned": f"{type(exc).__name__}: {str(exc)[:200]} (the first search plans them)"}


@db.command("stop")
def stop() -> None:
    """Stop kb's managed Neo4j."""
    stopped = server.stop(config())
    click.echo("Neo4j stopped." if stopped else "kb's Neo4j was not running.")


@db.command("status")
@json_option
def status(as_json: bool) -> None:
    """Say whether kb's managed server runs, or which server is configured."""
    cfg = config()
    info = {"managed": cfg.neo4j_uri is None, **server.status(cfg)}
    if cfg.neo4j_uri:
        info.update(uri=redact_uri(cfg.neo4j_uri), running=None)
    if as_json:
        emit_json(info)
        return
    if cfg.neo4j_uri:
        click.echo(f"Using your Neo4j at {redact_uri(cfg.neo4j_uri)} (user {cfg.neo4j_user}).")
    elif info["running"]:
        click.echo(f"kb's Neo4j {info['version']} is running at {info['uri']} (pid {info['pid']}).")
    else:
        click.echo("kb's Neo4j is not running: start it with `kb db start`.")
    if not cfg.neo4j_uri:
        click.echo(f"Java: {info['java']}")


@db.command("init")
@json_option
def init(as_json: bool) -> None:
    """Create kb's constraints and indexes (idempotent) and record the schema version."""
    with store(config()) as st:
        st.init_schema()
        meta = st.get_meta("schema")
        names = st.index_names()
        result = {
            "uri": redact_uri(st.conn.uri),
            "server_version": st.version,
            "schema_version": meta.get("version"),
            "indexes": names,
        }
    if as_json:
        emit_json(result)
    else:
        click.echo(
            f"Schema v{result['schema_version']} ready on {result['uri']} (Neo4j {result['server_version']}); "
            f"{len(names)} indexes and constraints."
        )


def register(cli: click.Group) -> None:
    cli.add_command(db)
