"""`kb browse`: how to open the graph in Neo4j Browser or Desktop, with a style and saved queries."""

from __future__ import annotations

from pathlib import Path

import click

from kb.cli.common import config, emit_json, json_option
from kb.cypher import BROWSER_QUERIES as QUERIES
from kb.errors import redact_uri
from kb.store import connection_for

STYLE = """node {
  diameter: 40px;
  color: #A5ABB6;
  border-color: #9AA1AC;
  text-color-internal: #FFFFFF;
  caption: '{name}';
}
node.Note { color: #4C8EDA; border-color: #2870C2; diameter: 50px; caption: '{title}'; }
node.Chunk { color: #C990C0; border-color: #B261A5; diameter: 25px; caption: '{ord}'; }
node.Tag { color: #FFC454; border-color: #D7A013; text-color-internal: #2A2C34; caption: '{name}'; }
node.Folder { color: #8DCC93; border-color: #5DB665; text-color-internal: #2A2C34; caption: '{path}'; }
node.Missing { color: #F16667; border-color: #EB2728; caption: '{name}'; }
node.Attachment { color: #D9C8AE; border-color: #C0A378; text-color-internal: #2A2C34; caption: '{path}'; }
node.KbMeta { color: #ECB5C9; caption: '{key}'; }
node.Entity { color: #57C7E3; border-color: #23B3D7; diameter: 45px; caption: '{name}'; }
node.HubEntity { color: #F79767; border-color: #F36924; diameter: 80px; border-width: 4px; caption: '{name} (hub)'; }
node.Claim { color: #DA7194; border-color: #CC3C6C; diameter: 30px; caption: '{attribute} = {value}'; }
relationship.SUPERSEDED_BY { color: #A5ABB6; shaft-width: 1px; }
relationship.CONFLICTS_WITH { color: #EB2728; shaft-width: 3px; }
relationship { shaft-width: 1px; font-size: 8px; caption: '<type>'; }
relationship.LINKS_TO { shaft-width: 2px; color: #4C8EDA; }
"""


@click.command("browse")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the style and queries (default: KB_HOME/browse).",
)
@json_option
def browse(out: Path | None, as_json: bool) -> None:
    """Print how to open the graph in Neo4j Browser/Desktop; write a style file and saved queries."""
    cfg = config()
    conn = connection_for(cfg)
    folder = out or cfg.home / "browse"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kb-style.grass").write_text(STYLE, encoding="utf-8")
    for name, text in QUERIES.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    uri = redact_uri(conn.uri)
    info = {
        "uri": uri,
        "user": conn.user,
        "database": conn.database,
        "style": str(folder / "kb-style.grass"),
        "queries": [str(folder / n) for n in QUERIES],
    }
    if as_json:
        emit_json(info)
        return
    where = "neo4j_password in " + str(cfg.config_file) if not cfg.neo4j_uri else "your NEO4J_PASSWORD"
    click.echo(f"Neo4j Desktop: Add > Remote connection > {uri}, user '{conn.user}', password from {where}.")
    click.echo(f"Neo4j Browser (browser.neo4j.io or Desktop's): connect to {uri} as '{conn.user}'.")
    click.echo(f"Style: drag {folder / 'kb-style.grass'} onto the Browser window (or run :style and paste it).")
    click.echo(f"Saved queries in {folder}: " + ", ".join(QUERIES) + " (add them to Browser favourites).")
    click.echo("Start with most-linked-notes.cypher, or a note's neighbourhood with note-neighbourhood.cypher.")


def register(cli: click.Group) -> None:
    cli.add_command(browse)
