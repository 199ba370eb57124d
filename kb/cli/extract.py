"""`kb extract --sample N [--folder F]` (judge the extractor on a few chunks first) and `kb extract status`."""

from __future__ import annotations

import os
from typing import Any

import click

from kb.cli.common import config, emit_json, json_option, stdin_is_tty, store
from kb.errors import ConfigError
from kb.extract.backends import make_extractor
from kb.extract.models import Extraction
from kb.extract.report import outcome_head
from kb.extract.run import MODELS, KnowledgeRun, Policy
from kb.extract.step import cache_for, graph_vault, knowledge_step, model_name, policy_for
from kb.store import KnowledgeStore


def pick_sample(chunks: list[dict[str, Any]], n: int, folder: str | None) -> list[dict[str, Any]]:
    """N chunks spread evenly over the folder (all chunks without one), in path order: the same N every time."""
    f = (folder or "").strip("/")
    pool = sorted(
        (c for c in chunks if not f or c["folder"] == f or c["folder"].startswith(f + "/")),
        key=lambda c: (c["path"], c["ord"]),
    )
    if not pool:
        raise ConfigError(
            f"no chunks in folder {folder!r}: check the name (kb status lists folders) or run kb refresh first"
        )
    n = min(n, len(pool))
    return [pool[i * len(pool) // n] for i in range(n)]


def found_lines(extraction: Extraction) -> list[str]:
    """What one chunk gave: entities, relationships and claims with modality and dates."""
    lines = [
        f"    entity {e.name} [{e.type}]" + (f" aka {', '.join(e.aliases)}" if e.aliases else "")
        for e in extraction.entities
    ]
    lines += [f'    {r.source} -{r.type}-> {r.target} ({r.modality}): "{r.evidence}"' for r in extraction.relationships]
    for c in extraction.claims:
        when = "" if not (c.valid_from or c.valid_to) else f", valid {c.valid_from or '?'}..{c.valid_to or ''}"
        lines.append(f'    claim {c.entity}.{c.attribute} = {c.value} ({c.modality}{when}): "{c.quote}"')
    return lines or ["    (nothing found)"]


@click.command("extract")
@click.argument("action", required=False, type=click.Choice(["status"]))
@click.option("--sample", type=click.IntRange(1, 200), help="Extract this many chunks and show what was found.")
@click.option("--folder", help="Take the sample from this vault folder.")
@click.option("--yes", is_flag=True, help="Accept an estimate over the cost threshold.")
@json_option
def extract_cmd(action: str | None, sample: int | None, folder: str | None, yes: bool, as_json: bool) -> None:
    """A sample before a full run (--sample N [--folder F]); `kb extract status` collects finished batches into
    the cache and builds the layer from it."""
    if action == "status":
        status(as_json)
        return
    if sample is None:
        raise ConfigError(
            "kb extract needs --sample N (e.g. kb extract --sample 5 --folder Projects) or `kb extract status`"
        )
    cfg = config()
    extractor = make_extractor(cfg, dict(os.environ))
    with store(cfg) as st:
        chunks = pick_sample(KnowledgeStore(st).chunks(), sample, folder)
        cache = cache_for(cfg, graph_vault(st))
    base = policy_for(
        cfg, yes, False, None if as_json or not stdin_is_tty() else (lambda q: click.confirm(q, default=False))
    )
    # no triage: a sample extracts chat chunks directly, so it shows what a kept chat would give
    policy = Policy(
        ai_chat_folders=(),
        private_optin=base.private_optin,
        threshold_usd=base.threshold_usd,
        yes=yes,
        workers=base.workers,
        confirm=base.confirm,
    )
    planned = KnowledgeRun(model_name(cfg), cache, extractor, Policy(**{**policy.__dict__, "dry_run": True})).run(
        chunks
    )
    if planned.estimate is not None and not as_json:
        click.echo("Estimate for the sample:")
        for line in planned.estimate.lines():
            click.echo(line)
    out = KnowledgeRun(model_name(cfg), cache, extractor, policy).run(chunks)
    rows = [
        {
            "path": c["path"],
            "breadcrumb": c["breadcrumb"],
            "found": out.results[c["id"]].model_dump() if c["id"] in out.results else None,
        }
        for c in chunks
    ]
    result = {
        **outcome_head(out),
        "estimate": None if planned.estimate is None else round(planned.estimate.total_usd, 4),
        "chunks": rows,
    }
    if as_json:
        emit_json(result)
    else:
        _print_sample(result, chunks, out.results)
    if out.status == "failed":
        raise ConfigError(f"the sample failed: {out.message}")


def _print_sample(result: dict[str, Any], chunks: list[dict[str, Any]], found: dict[str, Extraction]) -> None:
    click.echo(
        f"Sample of {len(chunks)} chunks ({result['model']}): {result['cached']} from the cache, "
        f"{result['extracted']} extracted now, {len(result['failed'])} failed, "
        f"{result['skipped_private']} private chunks not sent."
    )
    for c in chunks:
        click.echo(f"  {c['path']} > {c['breadcrumb']}")
        for line in found_lines(found[c["id"]]) if c["id"] in found else ["    (not extracted)"]:
            click.echo(line)
    for f in result["failed"]:
        click.echo(f"  failed: {f['path']}: {f['error']}")
    if result["message"]:
        click.echo(f"  {result['message']}")


def status(as_json: bool) -> None:
    """Collect finished batches into the cache and build the layer from it; list batches still running."""
    cfg = config()
    extractor = make_extractor(cfg, dict(os.environ))
    with store(cfg) as st:
        run = KnowledgeRun(model_name(cfg), cache_for(cfg, graph_vault(st)), extractor, Policy())
        queue = run.queue()
        if queue is None:
            raise ConfigError(
                "kb extract status needs the Anthropic extractor and ANTHROPIC_API_KEY: batches are an Anthropic API"
            )
        got = queue.collect(MODELS)
        knowledge = knowledge_step(st, cfg, policy_for(cfg, False, False, None), paid=False)
    result = {
        "collected": got.done,
        "stored": got.stored,
        "resubmit": got.resubmit,
        "failed": got.failed,
        "waiting": got.waiting,
        "knowledge": knowledge.to_json(),
    }
    if as_json:
        emit_json(result)
        return
    click.echo(
        f"Batches: {len(got.done)} collected ({got.stored} answers stored, {got.resubmit} to submit "
        f"again), {len(got.waiting)} still running{': ' + ', '.join(got.waiting) if got.waiting else ''}."
    )
    c = knowledge.counts
    click.echo(
        f"Knowledge layer from the cache: {knowledge.cached} chunks; {c.get('entities', 0)} entities, "
        f"{c.get('relationships', 0)} relationships, {c.get('claims', 0)} claims."
    )


def register(cli: click.Group) -> None:
    cli.add_command(extract_cmd)
