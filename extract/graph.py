"""From validated extractions to graph rows: entities, mentions, typed relationships with evidence, claims.

Names are matched with simple rules here (case, punctuation, whitespace; one namespace for organizations,
products, projects and concepts). Every row list is sorted, so the same inputs give the same graph.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from extract.models import Extraction
from extract.schema import SHARED_NAMESPACE

MAX_EVIDENCE = 5


def norm(name: str) -> str:
    """Case, accents-preserving Unicode form, punctuation and whitespace folded."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = re.sub(r"[^\w\s&+.-]", " ", text)
    return " ".join(text.replace(".", " ").split())


def entity_key(name: str, etype: str) -> str:
    space = "thing" if etype in SHARED_NAMESPACE else etype.lower()
    return f"{space}:{norm(name)}"


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

    def signature(self) -> str:
        blob = json.dumps([self.entities, self.mentions, self.relationships, self.claims], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


def build_rows(results: dict[str, Extraction], chunks: dict[str, dict[str, Any]]) -> KnowledgeRows:
    """Aggregate per-chunk extractions into nodes and edges."""
    ents: dict[str, _Ent] = {}
    rels: dict[tuple[str, str, str], dict[str, Any]] = {}
    claims: list[dict[str, Any]] = []
    for cid in sorted(results):
        ext, chunk = results[cid], chunks[cid]
        date = chunk.get("date") or ""
        local = _register(ext, cid, date, ents)
        for r in ext.relationships:
            key = (local[r.source], r.type, local[r.target])
            agg = rels.setdefault(key, {"chunks": set(), "evidence": set(), "dates": [], "modalities": set()})
            agg["chunks"].add(cid)
            agg["evidence"].add((date, r.evidence))
            agg["dates"].append(date)
            agg["modalities"].add(r.modality)
        for i, c in enumerate(ext.claims):
            claims.append({"chunk": cid, "entity": local[c.entity], "props": {
                "id": hashlib.sha1(f"{cid}\x00{i}\x00{c.attribute}\x00{c.value}".encode()).hexdigest()[:24],
                "attribute": c.attribute, "value": c.value, "quote": c.quote, "modality": c.modality,
                "valid_from": c.valid_from, "valid_to": c.valid_to, "note_date": chunk.get("date"),
                "note_path": chunk.get("path")}})
    return KnowledgeRows(_entity_rows(ents), _mention_rows(ents), _rel_rows(rels),
                         sorted(claims, key=lambda c: c["props"]["id"]))


def _register(ext: Extraction, cid: str, date: str, ents: dict[str, _Ent]) -> dict[str, str]:
    """Entity keys for this chunk's names and aliases."""
    local: dict[str, str] = {}
    for e in ext.entities:
        key = entity_key(e.name, e.type)
        agg = ents.setdefault(key, _Ent())
        agg.names[e.name] += 1
        agg.types[e.type] += 1
        agg.aliases.update(a for a in e.aliases if norm(a) != norm(e.name))
        agg.chunks.add(cid)
        agg.dates.append(date)
        local[e.name] = key
        for alias in e.aliases:
            local.setdefault(alias, key)
    return local


def _top(counter: Counter[str]) -> str:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _entity_rows(ents: dict[str, _Ent]) -> list[dict[str, Any]]:
    rows = []
    for key in sorted(ents):
        e = ents[key]
        dates = sorted(d for d in e.dates if d)
        rows.append({"key": key, "name": _top(e.names), "type": _top(e.types), "aliases": sorted(e.aliases),
                     "mentions": len(e.chunks), "first_seen": dates[0] if dates else None,
                     "last_seen": dates[-1] if dates else None})
    return rows


def _mention_rows(ents: dict[str, _Ent]) -> list[dict[str, Any]]:
    return [{"chunk": c, "entity": k} for k in sorted(ents) for c in sorted(ents[k].chunks)]


def _rel_rows(rels: dict[tuple[str, str, str], dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for (src, rtype, tgt) in sorted(rels):
        agg = rels[(src, rtype, tgt)]
        dates = sorted(d for d in agg["dates"] if d)
        evidence = [text for _, text in sorted(agg["evidence"])][:MAX_EVIDENCE]
        out.setdefault(rtype, []).append({"source": src, "target": tgt, "props": {
            "count": len(agg["chunks"]), "evidence": evidence, "chunk_ids": sorted(agg["chunks"]),
            "first_seen": dates[0] if dates else None, "last_seen": dates[-1] if dates else None,
            "modalities": sorted(agg["modalities"])}})
    return out
