"""The knowledge step of a refresh: extract what is missing, then rebuild the layer when its inputs changed."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kb.config import Config, load_overrides
from kb.embed import Embedder
from kb.extract.audit import Checker, Retyped, Verdict
from kb.extract.backends import Extractor, extractor_spec, make_extractor
from kb.extract.cache import ExtractionCache
from kb.extract.capabilities import MODELS
from kb.extract.cost import Call, check, estimate
from kb.extract.dedupe import Judge, Judgement, judged_merges
from kb.extract.errors import FatalExtractError
from kb.extract.graph import KnowledgeRows, attach_lines, build_rows
from kb.extract.models import json_schema
from kb.extract.report import KnowledgeReport
from kb.extract.resolve import Overrides
from kb.extract.run import KnowledgeRun, Outcome, Policy
from kb.store import KnowledgeStore, Store
from kb.tokens import count_tokens

CHECK_SCHEMAS: dict[str, type[BaseModel]] = {"dedupe": Judgement, "audit": Verdict, "retype": Retyped}


def model_name(cfg: Config) -> str:
    return extractor_spec(cfg)[1]


def cache_for(cfg: Config, vault: Path | None = None) -> ExtractionCache:
    """kb's own cache (written), then a cache shipped inside the vault, then configured folders (read only)."""
    read_only: list[Path] = []
    vault = vault or cfg.vault
    if vault is not None:
        read_only.append(vault / ".kb" / "extract-cache")
    read_only += cfg.extract_cache_dirs
    return ExtractionCache(cfg.home / "cache" / "extract", tuple(read_only), recorded_by=tuple(MODELS))


def graph_vault(store: Store) -> Path | None:
    """The vault the graph was built from (recorded by refresh)."""
    path = store.get_meta("vault").get("path")
    return Path(path) if path else None


def policy_for(
    cfg: Config, yes: bool, dry_run: bool, confirm: Callable[[str], bool] | None, batch: bool = False
) -> Policy:
    return Policy(
        ai_chat_folders=cfg.ai_chat_folders,
        private_optin=cfg.remote_private_optin,
        threshold_usd=cfg.cost_threshold_usd,
        yes=yes,
        dry_run=dry_run,
        workers=min(cfg.extract_workers, 64),
        confirm=confirm,
        batch=batch,
    )


def knowledge_step(
    store: Store,
    cfg: Config,
    policy: Policy,
    extractor: Extractor | None = None,
    env: dict[str, str] | None = None,
    embedder: Embedder | None = None,
    paid: bool = True,
) -> KnowledgeReport:
    """Run extraction (cache first) and rebuild the knowledge layer if anything it is built from changed.
    With `paid` False only cached answers are used: nothing is sent anywhere."""
    if extractor is None and paid:
        extractor = make_extractor(cfg, dict(os.environ) if env is None else env, probe=not policy.dry_run)
    ks = KnowledgeStore(store)
    chunks = ks.chunks()
    outcome = KnowledgeRun(model_name(cfg), cache_for(cfg, graph_vault(store)), extractor, policy).run(chunks)
    rebuilt = False
    if outcome.status != "dry-run":
        judge_with = extractor if outcome.status in ("built", "partial") else None
        try:
            rebuilt = write_layer(
                store, cfg, outcome, chunks, force=False, extractor=judge_with, embedder=embedder, policy=policy
            )
        except FatalExtractError as exc:
            outcome.status, outcome.message = "failed", f"{exc}; decisions made so far are kept"
    return KnowledgeReport.of(outcome, ks.counts() if outcome.status != "dry-run" else {}, rebuilt)


def embed_new(known: dict[str, list[float]], texts: Mapping[str, str], embedder: Embedder) -> dict[str, list[float]]:
    """Vectors for the keys of `texts` that `known` lacks, 256 texts a call in key order; `known` grows."""
    todo = sorted(k for k in texts if k not in known)
    for start in range(0, len(todo), 256):
        batch = todo[start : start + 256]
        known.update(zip(batch, embedder.embed_documents([texts[k] for k in batch])))
    return known


def embed_lines(rows: KnowledgeRows, embedder: Embedder | None, known: dict[str, list[float]]) -> None:
    """Vectors for claim and link lines, made at build time (a query then costs a dot product per line);
    lines already embedded (`known`, by text hash) are reused."""
    if embedder is None:
        return
    props = [c["props"] for c in rows.claims] + [r["props"] for rs in rows.relationships.values() for r in rs]
    embed_new(known, {p["line_hash"]: p["line"] for p in props}, embedder)
    for p in props:
        p["line_vec"] = known.get(p["line_hash"])


class NameVectors:
    """Entity-name vectors (near-duplicate candidates): read from the graph when this embedder made them, and
    new names embedded, only when first asked for, so a refresh that compares no new name costs nothing."""

    def __init__(self, ks: KnowledgeStore, embedder: Embedder, reuse: bool) -> None:
        self.ks, self.embedder, self.reuse = ks, embedder, reuse
        self.known: dict[str, list[float]] | None = None

    def of(self, entities: list[dict[str, Any]]) -> dict[str, list[float]]:
        """Entity key -> vector of its name."""
        if self.known is None:
            self.known = self.ks.name_vectors() if self.reuse else {}
        embed_new(self.known, {e["name"]: e["name"] for e in entities}, self.embedder)
        return {e["key"]: self.known[e["name"]] for e in entities}


def write_layer(
    store: Store,
    cfg: Config,
    outcome: Outcome,
    chunks: list[dict[str, Any]],
    force: bool,
    extractor: Extractor | None = None,
    embedder: Embedder | None = None,
    retype: bool = False,
    policy: Policy | None = None,
) -> bool:
    """Resolve (rules, then judged near-duplicates), build timelines and hubs, and write the layer if its
    inputs changed (or `force`). Without an extractor only cached judgements count; vectors of this embedder
    already in the graph are reused. (Deleting the old layer while resolving the new one measured slower on
    two cores: both compete for them.)"""
    ks = KnowledgeStore(store)
    meta = store.get_meta("knowledge")
    reuse = embedder is not None and meta.get("lines_by") == embedder.identity
    names = NameVectors(ks, embedder, reuse) if embedder is not None else None
    if extractor is not None:
        _check_paid_checks(store, cfg, outcome, chunks, extractor, embedder, retype, names, policy or Policy())
    rows = _resolved_rows(store, cfg, outcome, chunks, extractor, embedder, retype, names)
    sig = rows.signature() + (f":{embedder.identity}" if embedder is not None else "")
    if not force and meta.get("signature") == sig:
        return False
    embed_lines(rows, embedder, ks.line_vectors() if reuse else {})
    name_vecs = names.of(rows.entities) if names is not None else {}  # read before the layer is replaced
    ks.replace(rows.entities, rows.mentions, rows.relationships, rows.claims, rows.claim_edges, rows.described_by)
    if embedder is not None:
        ks.set_name_vectors(name_vecs)
        ks.ensure_line_index(embedder.dimensions, fresh=not reuse)
    store.set_meta("knowledge", {"signature": sig, "lines_by": embedder.identity if embedder is not None else None})
    return True


def _check_paid_checks(
    store: Store,
    cfg: Config,
    outcome: Outcome,
    chunks: list[dict[str, Any]],
    extractor: Extractor,
    embedder: Embedder | None,
    retype: bool,
    names: NameVectors | None,
    policy: Policy,
) -> None:
    """The cost check for near-duplicate judging, the audit and re-typing: a pass with cached decisions only
    lists the calls the real pass would make; they are priced, then confirmed like extraction."""
    wanted: list[tuple[str, str, str]] = []
    _resolved_rows(store, cfg, outcome, chunks, None, embedder, retype, names, wanted)
    if not wanted:
        return
    schema = {k: count_tokens(str(json_schema(m))) for k, m in CHECK_SCHEMAS.items()}
    est = estimate(extractor.model, extractor.remote, [Call(k, f"({k})", s, m, schema[k]) for k, s, m in wanted])
    outcome.checks = est
    check(est, policy.threshold_usd, policy.yes, policy.confirm, "Checking entities and links")


def _resolved_rows(
    store: Store,
    cfg: Config,
    outcome: Outcome,
    chunks: list[dict[str, Any]],
    extractor: Extractor | None,
    embedder: Embedder | None,
    retype: bool,
    names: NameVectors | None,
    wanted: list[tuple[str, str, str]] | None = None,
) -> KnowledgeRows:
    """Rows after the rules, judged near-duplicates (names by string and by embedding), the audit of
    single-evidence links and any re-typing; each line with its text and hash."""
    overrides = Overrides.from_yaml(load_overrides(cfg))
    canonical = cfg.canonical_folders
    by_id = {c["id"]: c for c in chunks}
    rows = build_rows(outcome.results, by_id, overrides, canonical)
    cache = cache_for(cfg, graph_vault(store))
    judge = Judge(model_name(cfg), cache, extractor)
    remote = extractor.remote if extractor else True
    entities = rows.entities
    vectors = (lambda: names.of(entities)) if names is not None else None
    merges, outcome.dedupe = judged_merges(
        entities, judge, remote, vectors, embedder.identity if embedder is not None else ""
    )
    if merges:
        rows = build_rows(outcome.results, by_id, overrides, canonical, merges)
    checker = Checker(model_name(cfg), cache, extractor)
    names_of = {e["key"]: e["name"] for e in rows.entities}
    outcome.audit = checker.audit(rows.relationships, names_of, remote)
    outcome.retyped = checker.retype(rows.relationships, names_of, remote, ask=retype)
    if wanted is not None:
        wanted += judge.wanted + checker.wanted
    attach_lines(rows)
    return rows


def rebuild(
    store: Store,
    cfg: Config,
    embedder: Embedder | None = None,
    extractor: Extractor | None = None,
    retype: bool = False,
    policy: Policy | None = None,
) -> KnowledgeReport:
    """The entity layer again from the cache and cached decisions alone (local, free, deterministic); with an
    extractor and `retype`, vague RELATED_TO links are re-typed first (paid, cached)."""
    chunks = KnowledgeStore(store).chunks()
    policy = Policy(ai_chat_folders=policy_for(cfg, False, False, None).ai_chat_folders)
    outcome = KnowledgeRun(model_name(cfg), cache_for(cfg, graph_vault(store)), None, policy).run(chunks)
    write_layer(
        store,
        cfg,
        outcome,
        chunks,
        force=True,
        embedder=embedder,
        extractor=extractor if retype else None,
        retype=retype,
        policy=policy,
    )
    return KnowledgeReport.of(outcome, KnowledgeStore(store).counts(), True)
