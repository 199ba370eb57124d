"""From validated extractions to graph rows: resolved entities, mentions, typed relationships with evidence,
claims with their timelines, hubs and canonical notes. Every list is sorted: same inputs, same graph."""

from __future__ import annotations

import hashlib
import json
import math
import posixpath
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kb.config import CANONICAL_FOLDERS
from kb.extract.models import Extraction
from kb.extract.resolve import Mention, Overrides, norm, resolve
from kb.extract.timeline import timelines
from kb.words import attribute_stems

MAX_EVIDENCE = 5


@dataclass
class _Ent:
    names: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    aliases: set[str] = field(default_factory=set)
    chunks: set[str] = field(default_factory=set)
    dates: list[str] = field(default_factory=list)


@dataclass
class KnowledgeRows:
    entities: list[dict[str, Any]]
    mentions: list[dict[str, Any]]
    relationships: dict[str, list[dict[str, Any]]]
    claims: list[dict[str, Any]]
    claim_edges: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    described_by: list[dict[str, str]] = field(default_factory=list)
    merges: list[dict[str, str]] = field(default_factory=list)

    def signature(self) -> str:
        blob = json.dumps(
            [self.entities, self.mentions, self.relationships, self.claims, self.claim_edges, self.described_by],
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()


def hub_threshold(chunk_count: int, override: int | None = None) -> int:
    """300 chunks by default; in a vault of under 500 chunks, 60% of them (at least 5)."""
    return int(override) if override else min(300, max(5, math.ceil(chunk_count * 0.6)))


def build_rows(
    results: dict[str, Extraction],
    chunks: dict[str, dict[str, Any]],
    overrides: Overrides | None = None,
    canonical: tuple[str, ...] = CANONICAL_FOLDERS,
    judged: list[tuple[str, str, str]] | None = None,
) -> KnowledgeRows:
    """Aggregate per-chunk extractions into nodes and edges."""
    overrides = overrides or Overrides()
    mentions = [
        Mention(cid, chunks[cid]["path"], chunks[cid].get("date") or "", e.name, e.type, tuple(e.aliases))
        for cid in sorted(results)
        for e in results[cid].entities
    ]
    res = resolve(mentions, overrides, judged)
    ents: dict[str, _Ent] = {}
    rels: dict[tuple[str, str, str], dict[str, Any]] = {}
    claims: list[dict[str, Any]] = []
    for cid in sorted(results):
        ext, chunk = results[cid], chunks[cid]
        local = _register(ext, cid, chunk.get("date") or "", res.key_of, ents)
        _add_relationships(ext, cid, chunk.get("date") or "", local, rels, bool(chunk.get("private")))
        claims.extend(_claims(ext, cid, chunk, local))
    claims.sort(key=lambda c: c["props"]["id"])
    edges = timelines(claims)
    threshold = hub_threshold(len(chunks), overrides.hub_threshold)
    entity_rows = _entity_rows(ents, threshold, res.merges, {c for c, v in chunks.items() if v.get("private")})
    mark_owner(entity_rows, claims)
    return KnowledgeRows(
        entity_rows,
        _mention_rows(ents),
        _rel_rows(rels),
        claims,
        edges,
        _described_by(entity_rows, chunks, canonical),
        res.merges,
    )


OWNER_MIN_CLAIMS = 10  # fewer claims than this about any entity: no owner is told apart
OWNER_LEAD = 2.0  # the owner has at least this many times the claims of the runner-up


def mark_owner(entity_rows: list[dict[str, Any]], claims: list[dict[str, Any]]) -> None:
    """Mark the entity the vault is about (`owner`: the one with by far the most claims, in a founder's vault the
    company): a question that says "we" or "our" and names nothing asks about it. None when no entity leads
    clearly (two companies, a thin graph) or the leader is known only from private notes."""
    counts = Counter(c["entity"] for c in claims)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked or ranked[0][1] < OWNER_MIN_CLAIMS:
        return
    if len(ranked) > 1 and ranked[0][1] < OWNER_LEAD * ranked[1][1]:
        return
    for row in entity_rows:
        if row["key"] == ranked[0][0] and not row["private_only"]:
            row["owner"] = True


def _register(
    ext: Extraction, cid: str, date: str, key_of: dict[tuple[str, str], str], ents: dict[str, _Ent]
) -> dict[str, str]:
    """Entity keys for this chunk's names and aliases."""
    local: dict[str, str] = {}
    for e in ext.entities:
        key = key_of[(cid, e.name)]
        agg = ents.setdefault(key, _Ent())
        agg.names[e.name] += 1
        agg.types[e.type] += 1
        agg.aliases.update(a for a in e.aliases if norm(a) != norm(e.name))
        agg.chunks.add(cid)
        agg.dates.append(date)
        local[e.name] = key
    for e in ext.entities:
        for alias in e.aliases:
            local.setdefault(alias, local[e.name])
    return local


def _add_relationships(
    ext: Extraction,
    cid: str,
    date: str,
    local: dict[str, str],
    rels: dict[tuple[str, str, str], dict[str, Any]],
    private: bool,
) -> None:
    for r in ext.relationships:
        src, tgt = local.get(r.source), local.get(r.target)
        if not src or not tgt or src == tgt:
            continue
        agg = rels.setdefault(
            (src, r.type, tgt), {"chunks": set(), "evidence": set(), "dates": [], "modalities": set(), "public": set()}
        )
        agg["chunks"].add(cid)
        agg["evidence"].add((date, r.evidence))
        if not private:
            agg["public"].add((date, r.evidence, cid))
        agg["dates"].append(date)
        agg["modalities"].add(r.modality)


def _claims(ext: Extraction, cid: str, chunk: dict[str, Any], local: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for i, c in enumerate(ext.claims):
        if c.entity not in local:
            continue
        out.append(
            {
                "chunk": cid,
                "entity": local[c.entity],
                "props": {
                    "id": hashlib.sha1(f"{cid}\x00{i}\x00{c.attribute}\x00{c.value}".encode()).hexdigest()[:24],
                    "attribute": c.attribute,
                    "value": c.value,
                    "quote": c.quote,
                    "modality": c.modality,
                    "valid_from": c.valid_from,
                    "valid_to": c.valid_to,
                    "note_date": chunk.get("date"),
                    "note_updated": chunk.get("updated"),
                    "note_path": chunk.get("path"),
                    "private": bool(chunk.get("private")),
                },
            }
        )
    return out


def claim_line(entity: str, attribute: str, value: str) -> str:
    """The text a claim is scored by against a question (embedded once, when the graph is built)."""
    return f"{entity} {attribute.replace('_', ' ')}: {value}"


def link_line(source: str, rtype: str, target: str, evidence: str) -> str:
    return f"{source} {rtype.lower().replace('_', ' ')} {target}: {evidence}"


def attach_lines(rows: KnowledgeRows) -> None:
    """Give each claim and relationship its scoring line and the line's hash."""
    names = {e["key"]: e["name"] for e in rows.entities}
    for c in rows.claims:
        p = c["props"]
        p["line"] = claim_line(names[c["entity"]], p["attribute"], p["value"])
        p["line_hash"] = hashlib.sha1(p["line"].encode()).hexdigest()
        p["attr_stems"] = attribute_stems(p["attribute"])
    for rtype, items in rows.relationships.items():
        for r in items:
            p = r["props"]
            evidence = p["evidence"][0] if p["evidence"] else ""
            p["line"] = link_line(names[r["source"]], rtype, names[r["target"]], evidence)
            p["line_hash"] = hashlib.sha1(p["line"].encode()).hexdigest()


def _top(counter: Counter[str]) -> str:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _entity_rows(
    ents: dict[str, _Ent], threshold: int, merges: list[dict[str, str]], private_chunks: set[str]
) -> list[dict[str, Any]]:
    log: dict[str, list[dict[str, str]]] = {}
    for m in merges:
        log.setdefault(m["into"], []).append(m)
    rows = []
    for key in sorted(ents):
        e = ents[key]
        dates = sorted(d for d in e.dates if d)
        exact = Counter({n: c for n, c in e.names.items() if norm(n) == key.split(":", 1)[1]})
        name = _top(exact or e.names)  # the name the entity's key came from, if it was used
        aliases = sorted((set(e.names) | e.aliases) - {name})
        rows.append(
            {
                "key": key,
                "name": name,
                "type": _top(e.types),
                "aliases": aliases,
                "names_text": " | ".join([name, *aliases]),
                "mentions": len(e.chunks),
                "hub": len(e.chunks) > threshold,
                "private_only": e.chunks <= private_chunks,
                "first_seen": dates[0] if dates else None,
                "last_seen": dates[-1] if dates else None,
                "merge_log": json.dumps(log.get(key, []), sort_keys=True),
            }
        )
    return rows


def _mention_rows(ents: dict[str, _Ent]) -> list[dict[str, Any]]:
    return [{"chunk": c, "entity": k} for k in sorted(ents) for c in sorted(ents[k].chunks)]


def _rel_rows(rels: dict[tuple[str, str, str], dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for src, rtype, tgt in sorted(rels):
        agg = rels[(src, rtype, tgt)]
        dates = sorted(d for d in agg["dates"] if d)
        evidence = [text for _, text in sorted(agg["evidence"])][:MAX_EVIDENCE]
        out.setdefault(rtype, []).append(
            {
                "source": src,
                "target": tgt,
                "props": {
                    "count": len(agg["chunks"]),
                    "evidence": evidence,
                    "chunk_ids": sorted(agg["chunks"]),
                    "first_seen": dates[0] if dates else None,
                    "last_seen": dates[-1] if dates else None,
                    "modalities": sorted(agg["modalities"]),
                    # what may be shown to an agent: evidence from notes outside private folders
                    "public_evidence": [e for _, e, _ in sorted(agg["public"])][:MAX_EVIDENCE],
                    "public_chunk_ids": sorted({c for _, _, c in agg["public"]}),
                },
            }
        )
    return out


def _described_by(
    entities: list[dict[str, Any]], chunks: dict[str, dict[str, Any]], canonical: tuple[str, ...]
) -> list[dict[str, str]]:
    """Entities named by a note in a canonical folder (wiki/entities, wiki/concepts) link to it."""
    titles: dict[str, str] = {}
    for c in chunks.values():
        if any(c["path"].startswith(f.rstrip("/") + "/") for f in canonical):
            titles.setdefault(norm(posixpath.splitext(posixpath.basename(c["path"]))[0]), c["path"])
    out = []
    for e in entities:
        for name in (e["name"], *e["aliases"]):
            path = titles.get(norm(name))
            if path:
                out.append({"entity": e["key"], "path": path})
                break
    return out
