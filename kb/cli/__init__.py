"""The `kb` command: one click group; subcommands live in small modules beside this one."""

from __future__ import annotations

import sys
from typing import Any

import click

from kb import __version__
from kb.errors import KbError
from kb.terminal import SafeStream, visible


class KbGroup(click.Group):
    """The single error boundary: expected errors become one-line messages, the rest raise."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbError as exc:
            raise click.ClickException(visible(str(exc))) from exc


@click.group(cls=KbGroup)
@click.version_option(__version__, prog_name="kb")
def cli() -> None:
    """kb: a knowledge graph of your Markdown vault in Neo4j, searched with dated citations."""


def _register() -> None:
    from kb.cli import browse, db, entities, eval, extract, mcp, refresh, search, skills

    for module in (browse, db, entities, eval, extract, mcp, refresh, search, skills):
        module.register(cli)


_register()


def main() -> None:
    if sys.stdout.isatty():  # names and text from the vault must not drive the terminal (titles, clears)
        sys.stdout = SafeStream(sys.stdout)  # type: ignore[assignment]
    cli(prog_name="kb")
