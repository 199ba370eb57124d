"""`kb mcp`: the read-only MCP server for coding agents, over stdio."""

from __future__ import annotations

import click

from kb.cli.common import config, embedder_option, vault_option


@click.command("mcp")
@vault_option
@embedder_option
def mcp_cmd(vault: str | None, embedder: str | None) -> None:
    """Serve search, cypher, get_note and schema to an MCP client over stdio (read-only)."""
    from kb.mcp_server import serve

    serve(config(vault=vault, embedder=embedder))


def register(cli: click.Group) -> None:
    cli.add_command(mcp_cmd)
