"""`kb refresh` and `kb status`."""

from __future__ import annotations

from typing import Any

import click

from kb import vectorfile
from kb.cli.common import config, embedder_option, emit_json, json_option, stdin_is_tty, store, vault_option
from kb.embed import make_embedder
from kb.embeddings import EmbedStep
from kb.extract.pipeline import refresh_all
from kb.extract.report import KnowledgeReport
from kb.extract.step import policy_for
from kb.lock import write_lock
from kb.progress import Bars
from kb.refresh import Summary, missing_with_aliases


@click.command("refresh")
@vault_option
@embedder_option
@click.option("--no-embed", is_flag=True, help="Build structure and chunks only; embed later.")
@click.option("--reembed", is_flag=True, help="Rebuild every vector with the configured embedder.")
@click.option("--no-extract", is_flag=True, help="Skip the knowledge layer (LLM extraction).")
@click.option(
    "--dry-run", is_flag=True, help="Build the free local layers; print the extraction estimate, send nothing."
)
@click.option("--yes", is_flag=True, help="Accept an extraction estimate over the cost threshold.")
@click.option(
    "--unmark-private", is_flag=True, help="Allow this refresh to make notes public that the graph holds as private."
)
@click.option(
    "--batch",
    is_flag=True,
    help="Submit uncached chunks to the Message Batches API (half price) and "
    "return; the next kb refresh collects them.",
)
@click.option(
    "--rebuild-indexes",
    is_flag=True,
    help="Recreate the full-text and vector indexes from the graph "
    "(kb does it by itself after many deletes or a vault switch).",
)
@json_option
def refresh_cmd(
    vault: str | None,
    embedder: str | None,
    no_embed: bool,
    reembed: bool,
    no_extract: bool,
    dry_run: bool,
    yes: bool,
    unmark_private: bool,
    batch: bool,
    rebuild_indexes: bool,
    as_json: bool,
) -> None:
    """Bring the graph up to date with the vault: only new or edited notes are parsed again."""
    cfg = config(vault=vault, embedder=embedder)
    step = None if no_embed else EmbedStep(make_embedder(cfg), reembed=reembed)
    with store(cfg) as st, write_lock(cfg.home, st.conn.uri, st.conn.database):
        confirm = None if as_json or not stdin_is_tty() else (lambda q: click.confirm(q, default=False))
        report = refresh_all(
            st,
            cfg,
            Bars(quiet=as_json),
            step,
            None if no_extract else policy_for(cfg, yes, dry_run, confirm, batch),
            unmark_private=unmark_private,
            rebuild_indexes=rebuild_indexes,
        )
    if as_json:
        emit_json(report.to_json())
    else:
        print_summary(report.summary)
        print_knowledge(report.knowledge)
    report.check()


def print_knowledge(k: KnowledgeReport | None) -> None:
    if k is None:
        click.echo("Knowledge layer: skipped (--no-extract).")
        return
    for est, title in (
        (k.estimate, "Extraction estimate (per folder)"),
        (k.checks_estimate, "Estimate for checking entities and links"),
    ):
        if est is not None:
            click.echo(f"{title}:")
            for line in est.lines():
                click.echo(line)
    c = k.counts
    click.echo(
        f"Knowledge layer ({k.model}): {k.status}; {k.cached} chunks from the cache, "
        f"{k.extracted} extracted now, {len(k.failed)} failed, {k.skipped_private} private chunks "
        f"not sent; {c.get('entities', 0)} entities, {c.get('relationships', 0)} relationships, "
        f"{c.get('claims', 0)} claims."
    )
    for t in k.triage:
        click.echo(f"  AI chat {t['path']}: {'kept' if t['keep'] else 'not extracted'} ({t['reason']})")
    for f in k.failed[:10]:
        click.echo(f"  failed: {f['path']}: {f['error']}")
    if k.message:
        click.echo(f"  {k.message}")


def print_summary(s: Summary) -> None:
    c = s.counts
    if s.wrote_nothing:
        click.echo(f"No change in {s.vault} since the last refresh: wrote nothing ({s.seconds:.1f} s).")
    else:
        click.echo(
            f"Refreshed {s.vault} in {s.seconds:.1f} s: {len(s.added)} added, {len(s.changed)} changed, "
            f"{len(s.removed)} removed, {s.unchanged} unchanged."
        )
    click.echo(
        f"Notes {c.get('notes', 0)}, chunks {c.get('chunks', 0)} ({s.chunks_written} written, "
        f"{s.embedded} embedded, {c.get('pending', 0)} waiting for embeddings), links {c.get('links', 0)}, "
        f"tags {c.get('tags', 0)}, folders {c.get('folders', 0)}."
    )
    if s.rederived:
        click.echo(f"Every note parsed again: {s.rederived}.")
    if s.indexes_rebuilt:
        click.echo(f"Search indexes rebuilt: {s.indexes_rebuilt}.")
    _print_missing(s.missing)
    for title, items in (("Skipped", [f"{x['path']}: {x['reason']}" for x in s.skipped]), ("Warnings", s.warnings)):
        if items:
            click.echo(f"{title} ({len(items)}):")
            for item in items:
                click.echo(f"  {item}")


def _print_missing(missing: list[dict[str, Any]]) -> None:
    if not missing:
        return
    links = sum(m["links"] for m in missing)
    click.echo(f"Missing link targets: {len(missing)} ({links} links):")
    for m in missing:
        hint = f"; matches an alias of {', '.join(m['alias_of'])}" if m["alias_of"] else ""
        click.echo(f"  {m['name']} ({m['kind']}, {m['links']} from {', '.join(m['sources'][:3])}{hint})")


@click.command("status")
@json_option
def status_cmd(as_json: bool) -> None:
    """What the graph holds: counts, embedder, broken links and notes with warnings."""
    cfg = config()
    with store(cfg) as st:
        counts = st.counts()
        missing = missing_with_aliases(st)
        embedder = st.get_meta("embedder")
        warned = st.notes_with_warnings()
        vectors = vectorfile.describe(st.vector_dir, st.vector_state()[1])
        info = {
            "uri": st.conn.uri,
            "server_version": st.version,
            "counts": counts,
            "embedder": embedder.get("identity"),
            "vector_file": vectors,
            "missing": missing,
            "warnings": warned,
        }
    if as_json:
        emit_json(info)
        return
    click.echo(f"Neo4j {info['server_version']} at {info['uri']}; embedder {info['embedder'] or 'none yet'}.")
    click.echo(", ".join(f"{k} {v}" for k, v in counts.items()))
    click.echo(_vector_file_line(vectors))
    _print_missing(missing)
    for row in warned:
        for w in row["warnings"]:
            click.echo(f"  warning: {w}")


def _vector_file_line(v: dict[str, Any]) -> str:
    """One line on what the vector leg reads."""
    if v["state"] == "current":
        scan = "an int8 shortlist, then exact" if v["shortlist"] else "an exact scan"
        return f"Vector file: {v['passages']:,} passages, {v['bytes'] / 1e6:.0f} MB; the vector leg reads it ({scan})."
    if v["state"] == "missing":
        return "Vector file: the graph names one that is missing or damaged; search asks Neo4j (run `kb refresh`)."
    if v["state"] == "none":
        return "Vector file: none yet; search asks Neo4j's vector index (`kb refresh` writes it once vectors exist)."
    return "Vector file: off; search asks Neo4j's vector index."


def register(cli: click.Group) -> None:
    cli.add_command(refresh_cmd)
    cli.add_command(status_cmd)
