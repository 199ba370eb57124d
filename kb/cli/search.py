"""`kb search`: hybrid search with dated citations."""

from __future__ import annotations

import click

from kb.cli.common import config, embedder_option, emit_json, json_option, store
from kb.embed import make_embedder
from kb.embeddings import require_built_by
from kb.search.graph import PRESETS
from kb.search.hybrid import Filters, iso_date
from kb.search.modes import MODES, run_search
from kb.search.results import NoteResult

STANDING_WORDS = {"states": "states it", "outdated": "outdated", "not_fact": "only plans, opinions or suggestions"}


@click.command("search")
@click.argument("question")
@click.option("--k", default=20, show_default=True, type=click.IntRange(1, 100), help="How many notes.")
@click.option("--folder", help="Only notes in this folder (and its subfolders).")
@click.option("--tag", help="Only notes with this tag (nested tags count).")
@click.option("--since", help="Only chunks dated on or after YYYY-MM-DD.")
@click.option("--until", help="Only chunks dated on or before YYYY-MM-DD.")
@click.option(
    "--include-private",
    is_flag=True,
    help="Also search notes in private folders (their text then reaches whoever reads the output).",
)
@click.option(
    "--mode",
    type=click.Choice(list(MODES)),
    default="hybrid",
    show_default=True,
    help="hybrid (a question naming its time: its first notes by date too); graph (hybrid plus dated claim "
    "and link lines); auto (a rule-based router picks).",
)
@click.option(
    "--as-of",
    "as_of",
    help="Read the vault as of YYYY-MM-DD: notes written by then, claims valid "
    "then, the value current that day first (relative dates in the question count from it).",
)
@click.option(
    "--current",
    "current",
    is_flag=True,
    help="Leave outdated claims (superseded, or plans that something followed) out of the graph lines.",
)
@click.option("--preset", type=click.Choice(sorted(PRESETS)), default="default", help="Graph limits preset.")
@embedder_option
@json_option
def search_cmd(
    question: str,
    k: int,
    folder: str | None,
    tag: str | None,
    since: str | None,
    until: str | None,
    include_private: bool,
    mode: str,
    as_of: str | None,
    current: bool,
    preset: str,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Search the vault: hybrid (keyword + dense, fused by rank), graph, or auto."""
    cfg = config(embedder=embedder)
    filters = Filters(folder, tag, iso_date(since, "--since"), iso_date(until, "--until"), include_private)
    as_of = iso_date(as_of, "--as-of")
    with store(cfg) as st:
        emb = make_embedder(cfg)
        require_built_by(st, emb, "run `kb refresh --reembed` or set --embedder")
        result = run_search(
            st, emb, question, mode, k, filters, preset, as_of, current, ai_chat_folders=cfg.ai_chat_folders
        )
    if as_json:
        emit_json(result.to_json())
        return
    if result.router is not None:
        click.echo(f"mode: {result.router.mode} ({result.router.reason})")
    for reading in result.question.readings if result.question is not None else []:
        click.echo(reading)
    if as_of or current:
        click.echo(
            f"claims {'as of ' + as_of if as_of else ''}{' and ' if as_of and current else ''}"
            f"{'current only' if current else ''}"
        )
    for line in result.lines:
        click.echo(f"  * {line.text}")
    if not result.notes:
        click.echo("No matching notes.")
    for note in result.notes:
        click.echo(
            f"{note.rank:>2}. {note.path} ({note.date})  score {note.score:.4f} "
            f"[keyword #{note.keyword_rank or '-'}, vector #{note.vector_rank or '-'}]"
        )
        for why in why_lines(note):
            click.echo(f"    {why}")
        best = note.chunks[0]
        snippet = " ".join((best.text or "").split())[:240]
        click.echo(f"    {best.breadcrumb}: {snippet}")


def why_lines(note: NoteResult) -> list[str]:
    """Why graph search moved the note, and how it read the note's claims (not again for a demoted one)."""
    out = [f"({key}: {why})" for key, why in (("promoted", note.promoted), ("demoted", note.demoted)) if why]
    if note.standing in STANDING_WORDS and not note.demoted:
        claim = f", {note.standing_claim}" if note.standing_claim else ""
        out.append(f"(claims read: {STANDING_WORDS[note.standing]}{claim})")
    return out


def register(cli: click.Group) -> None:
    cli.add_command(search_cmd)
