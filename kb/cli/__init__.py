"""The `kb` command: one lazy click group; subcommands live in small modules beside this one.

`kb --help` reads only the table below; a command's module (and the driver, embedders, SDKs it imports) is
loaded when that command runs, so an agent's one call per question pays only for what it uses.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any

import click

from kb import __version__
from kb.errors import KbError
from kb.terminal import SafeStream, visible

# name -> (module that registers it, the first paragraph of its help); tests/test_startup_table.py checks it.
COMMANDS: dict[str, tuple[str, str]] = {
    "browse": (
        "kb.cli.browse",
        "Print how to open the graph in Neo4j Browser/Desktop; write a style file and saved queries.",
    ),
    "db": ("kb.cli.db", "Run kb's private Neo4j server, or check the one you configured."),
    "entities": ("kb.cli.entities", "Look at the entities of the knowledge layer."),
    "eval": ("kb.cli.eval", "Score search modes on graded questions over a vault."),
    "extract": (
        "kb.cli.extract",
        "A sample before a full run (--sample N [--folder F]); `kb extract status` "
        "collects finished batches into the cache and builds the layer from it.",
    ),
    "mcp": ("kb.cli.mcp", "Serve search, cypher, get_note and schema to an MCP client over stdio (read-only)."),
    "path": (
        "kb.cli.entities",
        "The shortest path (up to 4 hops, never through a hub) between two entities, with evidence.",
    ),
    "rebuild-entities": (
        "kb.cli.entities",
        "Rebuild the entity layer from the extraction cache: local, free and deterministic.",
    ),
    "refresh": (
        "kb.cli.refresh",
        "Bring the graph up to date with the vault: only new or edited notes are parsed again.",
    ),
    "retype": (
        "kb.cli.entities",
        "Re-type vague RELATED_TO links in batches of 40 from their endpoints and evidence (paid, cached).",
    ),
    "search": ("kb.cli.search", "Search the vault: hybrid (keyword + dense, fused by rank), graph, or auto."),
    "skills": ("kb.cli.skills", "kb's agent skills (kb-admin, kb-hybrid-retrieval, kb-graph-search)."),
    "status": ("kb.cli.refresh", "What the graph holds: counts, embedder, broken links and notes with warnings."),
    "timeline": (
        "kb.cli.entities",
        "An entity's claim timeline as of a date, current value first, superseded values marked.",
    ),
}


# One-shot reads, an agent's call per question (bench/startup.py). Their one matrix product is the vector
# file's (kb.vectorfile; onnxruntime runs its own threads): numpy's BLAS gets two threads, not a pool per core (a
# pool cost ~40 ms CPU at start against none); at 13,284 notes the product, page faults included, took 28-30 ms
# with two threads and 43-49 ms with one. Once their output is out they hold nothing to finalize (the driver is
# closed, no temporary files, no threads), so they end without the interpreter's teardown, which frees every
# module's objects one by one (~20 ms CPU).
ONE_SHOT = frozenset({"search"})


def load_command(name: str) -> click.Command:
    """Import the module that defines `name` and return its command."""
    module = importlib.import_module(COMMANDS[name][0])
    group = click.Group()
    module.register(group)
    return group.commands[name]


class KbGroup(click.Group):
    """Commands loaded on first use; the single error boundary: expected errors become one-line messages."""

    one_shot = False  # the command being run is one of ONE_SHOT

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        self.one_shot = cmd_name in ONE_SHOT
        if cmd_name not in self.commands:
            self.commands[cmd_name] = load_command(cmd_name)
            if not gc.isenabled():  # main() paused it for the imports; what they made lives to the end
                gc.freeze()
                gc.enable()
        return self.commands[cmd_name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the table, without importing any command."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [
            (name, click.Command(name, help=text).get_short_help_str(limit))
            for name, (_, text) in sorted(COMMANDS.items())
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbError as exc:
            raise click.ClickException(visible(str(exc))) from exc


@click.group(cls=KbGroup)
@click.version_option(__version__, prog_name="kb")
def cli() -> None:
    """kb: a knowledge graph of your Markdown vault in Neo4j, searched with dated citations."""


def main() -> None:
    # start-up imports make ~10^5 objects that all live to the end: collecting them cost ~40 ms CPU per process
    gc.disable()
    if sys.argv[1:2] and sys.argv[1] in ONE_SHOT:  # the command comes first: the group's options run none
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")  # read when numpy loads, with the command's modules
    if sys.stdout.isatty():  # names and text from the vault must not drive the terminal (titles, clears)
        sys.stdout = SafeStream(sys.stdout)
    try:
        cli(prog_name="kb")
    except SystemExit as exc:
        if isinstance(cli, KbGroup) and cli.one_shot and isinstance(exc.code, int | None):
            _leave_now(exc.code or 0)
        raise


def _leave_now(code: int) -> None:
    """End the process once its output is flushed; an output that cannot be flushed takes the normal exit."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    if "logging" in sys.modules:  # its atexit hook, the only one a search registers (the driver's logger)
        sys.modules["logging"].shutdown()
    os._exit(code)
