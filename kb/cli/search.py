"""`kb search`: hybrid search with dated citations."""

from __future__ import annotations

import click

from kb.cli.common import config, embedder_option, emit_json, json_option, store
from kb.embed import make_embedder
from kb.errors import EmbedderError
from kb.store import SearchIndex
from search.hybrid import Filters, hybrid_search, iso_date


@click.command("search")
@click.argument("question")
@click.option("--k", default=20, show_default=True, type=click.IntRange(1, 100), help="How many notes.")
@click.option("--folder", help="Only notes in this folder (and its subfolders).")
@click.option("--tag", help="Only notes with this tag (nested tags count).")
@click.option("--since", help="Only chunks dated on or after YYYY-MM-DD.")
@click.option("--until", help="Only chunks dated on or before YYYY-MM-DD.")
@click.option("--include-private", is_flag=True,
              help="Also search notes in private folders (their text then reaches whoever reads the output).")
@embedder_option
@json_option
def search_cmd(question: str, k: int, folder: str | None, tag: str | None, since: str | None,
               until: str | None, include_private: bool, embedder: str | None, as_json: bool) -> None:
    """Hybrid search (keyword + dense, fused by rank) over the vault's chunks."""
    cfg = config(embedder=embedder)
    filters = Filters(folder, tag, iso_date(since, "--since"), iso_date(until, "--until"), include_private)
    with store(cfg) as st:
        meta = st.get_meta("embedder")
        emb = make_embedder(cfg)
        if not meta:
            raise EmbedderError("no embeddings yet: run `kb refresh` first")
        if meta.get("identity") != emb.identity:
            raise EmbedderError(f"the vector index was built with {meta.get('identity')} but the configured "
                                f"embedder is {emb.identity}: run `kb refresh --reembed` or set --embedder")
        result = hybrid_search(SearchIndex(st), emb, question, k=k, filters=filters)
    if as_json:
        emit_json(result)
        return
    if not result["results"]:
        click.echo("No matching notes.")
    for note in result["results"]:
        click.echo(f"{note['rank']:>2}. {note['path']} ({note['date']})  score {note['score']:.4f} "
                   f"[keyword #{note['keyword_rank'] or '-'}, vector #{note['vector_rank'] or '-'}]")
        best = note["chunks"][0]
        snippet = " ".join((best["text"] or "").split())[:240]
        click.echo(f"    {best['breadcrumb']}: {snippet}")


def register(cli: click.Group) -> None:
    cli.add_command(search_cmd)
