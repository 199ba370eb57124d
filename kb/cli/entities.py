"""`kb rebuild-entities`, `kb entities show NAME`, `kb entities merges`."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from kb.cli.common import config, emit_json, json_option, stdin_is_tty, store
from kb.embed import make_embedder
from kb.embeddings import line_embedder
from kb.errors import ConfigError
from kb.extract.backends import make_extractor
from kb.extract.lookup import pick
from kb.extract.step import policy_for, rebuild
from kb.extract.timeline import timelines, written
from kb.search.hybrid import iso_date
from kb.store import KnowledgeStore


@click.command("rebuild-entities")
@json_option
def rebuild_entities(as_json: bool) -> None:
    """Rebuild the entity layer from the extraction cache: local, free and deterministic."""
    cfg = config()
    with store(cfg) as st:
        emb = make_embedder(cfg)
        result = rebuild(st, cfg, line_embedder(st, emb))
    if as_json:
        emit_json(result.to_json())
    else:
        c = result.counts
        click.echo(
            f"Rebuilt from {result.cached} cached extractions: {c['entities']} entities, "
            f"{c['relationships']} relationships, {c['claims']} claims."
        )


@click.command("retype")
@click.option("--yes", is_flag=True, help="Accept an estimate over the cost threshold.")
@json_option
def retype_cmd(yes: bool, as_json: bool) -> None:
    """Re-type vague RELATED_TO links in batches of 40 from their endpoints and evidence (paid, cached)."""
    cfg = config()
    confirm = None if as_json or not stdin_is_tty() else (lambda q: click.confirm(q, default=False))
    extractor = make_extractor(cfg, dict(os.environ))
    if extractor is None:
        raise ConfigError(
            'kb retype needs an extractor: set ANTHROPIC_API_KEY, or extractor = "ollama:MODEL" in the kb config'
        )
    with store(cfg) as st:
        emb = make_embedder(cfg)
        result = rebuild(
            st,
            cfg,
            line_embedder(st, emb),
            extractor,
            retype=True,
            policy=policy_for(cfg, yes, False, confirm),
        )
    if as_json:
        emit_json(result.to_json())
        return
    click.echo(f"Re-typed {len(result.retyped)} links; {result.counts['relationships']} relationships now.")
    for r in result.retyped:
        click.echo(f"  {r['link']} -> {r['type']}")


@click.group("entities")
def entities() -> None:
    """Look at the entities of the knowledge layer."""


def _one(ks: KnowledgeStore, name: str) -> dict[str, Any]:
    found = pick(name, ks.find_entities(name))
    if not found:
        raise ConfigError(f"no entity named {name!r}: check the spelling, or run `kb refresh` first")
    return found[0]


@entities.command("show")
@click.argument("name")
@json_option
def show(name: str, as_json: bool) -> None:
    """An entity with aliases, merges, claim timeline (current first) and relationships with evidence."""
    with store(config()) as st:
        ks = KnowledgeStore(st)
        e = _one(ks, name)
        claims = ks.entity_claims(e["key"])
        rels = ks.entity_relationships(e["key"])
    data: dict[str, Any] = {
        "entity": {**e, "merge_log": json.loads(e.get("merge_log") or "[]")},
        "claims": claims,
        "relationships": rels,
    }
    if as_json:
        emit_json(data)
        return
    hub = " (hub)" if e.get("hub") else ""
    click.echo(f"{e['name']} [{e['type']}]{hub}: {e['mentions']} chunks, {e['first_seen']} to {e['last_seen']}")
    if e.get("aliases"):
        click.echo(f"  aliases: {', '.join(e['aliases'])}")
    for m in data["entity"]["merge_log"]:
        click.echo(f"  merged {m['from']} ({m['rule']}: {m['reason']})")
    for row in claims:
        click.echo("  " + _claim_line(row))
    for r in rels:
        arrow = f"-{r['type']}->" if r["outgoing"] else f"<-{r['type']}-"
        p = r["props"]
        click.echo(
            f"  {arrow} {r['other']} ({p['count']}x, {p['first_seen']}..{p['last_seen']}, "
            f'{"/".join(p["modalities"])}): "{p["evidence"][0]}"'
        )


def _claim_line(row: dict[str, Any]) -> str:
    c = row["claim"]
    mark = "current" if c.get("is_current") else c["modality"]
    valid = f", valid from {c['valid_from']}" if c.get("valid_from") else ""
    line = f"{c['attribute']} = {c['value']} [{mark}] per {c['note_path']} ({c['note_date']}{valid})"
    for n in row["superseded_by"]:
        line += f"; superseded by {n['value']} as of {n['as_of']} ({n['note_path']})"
    for x in row["conflicts"]:
        line += f"; CONFLICTS with {x['value']} in {x['note_path']} (same date)"
    for t in row["then"]:
        line += f"; planned, then {t['value']} as of {t['as_of']}"
    return line


@entities.command("merges")
@click.option("--entity", "name", help="Only the merges into this entity.")
@json_option
def merges(name: str | None, as_json: bool) -> None:
    """The merge log: every merge with its rule and reason (veto one in overrides.yaml merges_vetoed)."""
    with store(config()) as st:
        ks = KnowledgeStore(st)
        ents = [_one(ks, name)] if name else ks.all_entities_with_merges()
    rows = [{"into": e["name"], **m} for e in ents for m in json.loads(e.get("merge_log") or "[]")]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No merges.")
    for r in rows:
        click.echo(f"{r['from']} -> {r['into']} [{r['rule']}] {r['reason']}")


@click.command("path")
@click.argument("a")
@click.argument("b")
@json_option
def path_cmd(a: str, b: str, as_json: bool) -> None:
    """The shortest path (up to 4 hops, never through a hub) between two entities, with evidence."""
    with store(config()) as st:
        ks = KnowledgeStore(st)
        ea, eb = _one(ks, a), _one(ks, b)
        rows = ks.shortest_path(ea["key"], eb["key"])
        cites = ks.chunk_dates(sorted({r["chunk_ids"][0] for row in rows for r in row["rels"] if r["chunk_ids"]}))
    if not rows:
        raise ConfigError(f"no path of up to 4 hops between {ea['name']} and {eb['name']} that avoids hubs")
    steps = [{**r, "source": cites.get((r["chunk_ids"] or [""])[0], {})} for r in rows[0]["rels"]]
    if as_json:
        emit_json({"names": rows[0]["names"], "steps": steps})
        return
    click.echo(" -> ".join(rows[0]["names"]))
    for s in steps:
        src = s["source"]
        cite = f"[{src.get('path')}, {src.get('date')}]"
        click.echo(f'  {s["from"]} -{s["type"]}-> {s["to"]}: "{s["evidence"]}" {cite}')


@click.command("timeline")
@click.argument("entity")
@click.argument("attribute", required=False)
@click.option("--as-of", "as_of", help="What the notes said on this date (YYYY-MM-DD).")
@json_option
def timeline_cmd(entity: str, attribute: str | None, as_of: str | None, as_json: bool) -> None:
    """An entity's claim timeline as of a date, current value first, superseded values marked."""
    day = iso_date(as_of, "--as-of")
    with store(config()) as st:
        ks = KnowledgeStore(st)
        e = _one(ks, entity)
        rows = [r["claim"] for r in ks.entity_claims(e["key"])]
    claims = [
        {"entity": e["key"], "props": dict(c)}
        for c in rows
        if (attribute is None or c["attribute"] == attribute) and (day is None or written(c) <= day)
    ]
    edges = timelines(claims)  # recomputed over what was written by then
    by_id = {c["props"]["id"]: c["props"] for c in claims}
    later = {x["a"]: by_id[x["b"]] for x in edges["SUPERSEDED_BY"]}
    ordered = sorted(by_id.values(), key=lambda c: str(c.get("valid_from") or c["note_date"]), reverse=True)
    ordered.sort(key=lambda c: (c["attribute"], not c.get("is_current")))  # current first, then newest first
    if as_json:
        emit_json({"entity": e["name"], "as_of": day, "claims": ordered, "edges": edges})
        return
    click.echo(f"{e['name']}{' ' + attribute if attribute else ''}{' as of ' + day if day else ''}:")
    for c in ordered:
        mark = "CURRENT" if c.get("is_current") else c["modality"]
        tail = f"; superseded by {later[c['id']]['value']}" if c["id"] in later else ""
        click.echo(f"  {c['attribute']} = {c['value']} [{mark}] {c['note_path']} ({c['note_date']}){tail}")


def register(cli: click.Group) -> None:
    for command in (rebuild_entities, retype_cmd, entities, path_cmd, timeline_cmd):
        cli.add_command(command)
