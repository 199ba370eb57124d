"""Incremental refresh: only new or edited notes are parsed and written; every batch is one transaction."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import multiprocessing
import os
import posixpath
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kb import chunker, cypher, vectorsync
from kb import passages as passage_cut
from kb.chunker import Chunk, chunk_note
from kb.config import Config, overrides_path
from kb.embeddings import EmbedStep
from kb.errors import ConfigError
from kb.facets import folder_facet, tag_facet
from kb.links import LinkIndex, Resolved, alias_table
from kb.markdown import RawLink
from kb.passages import Passage, passages
from kb.progress import Bars
from kb.store import Store
from kb.vault import Note, Scan, Skipped, VaultFile, file_hash, is_private, parse_note, scan_vault

# measured, not used: 500 notes a transaction made a 13,284-note first build slower here (69.9 / 75.2 s against
# 60.9 / 61.6 / 65.3 s at 250, bench/structure.py, same day)
BATCH_NOTES = 250
# Lucene and the vector index keep deleted entries until segments merge, and they still weigh in the
# rankings; once the passages rewritten or deleted since the last build reach this share of the live ones,
# the search indexes are rebuilt so the same vault ranks the same whatever the database held before.
REBUILD_SHARE = 0.25
# A first build of at least this many notes writes into no full-text index and fills both once at its end:
# Lucene took part of every write transaction's commit otherwise (bench/structure.py)
BULK_NOTES = 1000
PENDING_SIG = ""  # a note whose links are not written yet
# Raise when parsing, chunking or passage cutting changes in a way their sizes do not show: a graph built
# under another key has every note parsed again (unchanged chunks and passages keep their ids and vectors).
DERIVE_VERSION = 1


def derive_key() -> str:
    """How notes become chunks and passages; a graph written under another key is re-derived whole."""
    return f"v{DERIVE_VERSION} {chunker.SCHEME} {passage_cut.SCHEME}"


@dataclass
class Summary:
    """What a refresh did; `to_json` is the `--json` form."""

    vault: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    touched: int = 0
    unchanged: int = 0
    chunks_written: int = 0
    relinked: int = 0
    embedded: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    excluded: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    indexes_rebuilt: str | None = None  # why the search indexes were rebuilt in this run, if they were
    vector_file: dict[str, Any] | None = None  # kb.vectorsync.Synced: what the search reads instead of the index
    rederived: str | None = None  # why every note was parsed again, if it was
    seconds: float = 0.0

    @property
    def wrote_nothing(self) -> bool:
        return not (self.added or self.changed or self.removed or self.touched or self.relinked or self.embedded)

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items()}
        out["wrote_nothing"] = self.wrote_nothing
        return out


def _facets(folder: str, tags: tuple[str, ...], date: str | None) -> str:
    """Filter tokens for the full-text index: one opaque word per folder ancestor, tag and day."""
    words = [folder_facet(a) for a in folder_ancestors(folder)] + [tag_facet(t) for t in tags]
    if date:
        words.append("kbd_" + date.replace("-", ""))
    return " ".join(words)


def _h(value: str) -> str:
    return hashlib.sha1(value.encode()).hexdigest()[:16]


def folder_ancestors(folder: str) -> list[str]:
    """'' (the vault), then each folder down to `folder` itself."""
    parts = [p for p in folder.split("/") if p]
    return [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _raw_links_json(links: tuple[RawLink, ...]) -> str:
    return json.dumps([[x.target, x.display, x.heading, x.block, x.embed, x.kind] for x in links])


def _links_from_json(text: str | None) -> list[RawLink]:
    return [RawLink(t, d, h, b, bool(e), k) for t, d, h, b, e, k in json.loads(text or "[]")]


def link_rows(source: str, links: list[RawLink], index: LinkIndex) -> dict[str, list[dict[str, Any]]]:
    """The note's links grouped by target kind, identical links counted once."""
    grouped: dict[tuple[Any, ...], int] = {}
    for link in links:
        res: Resolved = index.resolve(link, source)
        key = (
            res.kind,
            res.target,
            res.missing_kind,
            link.target,
            link.display,
            link.heading,
            link.block,
            link.embed,
            link.kind,
        )
        grouped[key] = grouped.get(key, 0) + 1
    out: dict[str, list[dict[str, Any]]] = {"note": [], "missing": [], "attachment": []}
    for key in sorted(grouped, key=lambda k: json.dumps(k)):
        kind, target, mkind, name, display, heading, block, embed, lkind = key
        out[kind].append(
            {
                "source": source,
                "target": target,
                "missing_kind": mkind,
                "name": name,
                "display": display,
                "heading": heading,
                "block": block,
                "embed": embed,
                "link_kind": lkind,
                "count": grouped[key],
            }
        )
    return out


def link_sig(rows: dict[str, list[dict[str, Any]]]) -> str:
    return hashlib.sha1(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def link_count(rows: dict[str, list[dict[str, Any]]]) -> int:
    """How many LINKS_TO and ATTACHES relationships the note must have once its links are written."""
    return sum(len(items) for items in rows.values())


def _note_props(note: Note, sig: str) -> dict[str, Any]:
    return {
        "path": note.path,
        "title": note.title,
        "folder": note.folder,
        "hash": note.hash,
        "size": note.size,
        "mtime": note.mtime,
        "date": note.date,
        "date_source": note.date_source,
        "updated": note.updated,
        "aliases": list(note.aliases),
        "tags": list(note.tags),
        "private": note.private,
        "frontmatter": json.dumps(note.frontmatter, sort_keys=True),
        "links_raw": _raw_links_json(note.links),
        "link_sig": sig,
        "warnings": note.warnings,
        "words": len(note.body.split()),
        "real_path": note.real_path or None,
    }


def _chunk_row(chunk: Chunk, note: Note, parts: list[Passage]) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "note_path": chunk.note_path,
        "hash": chunk.hash,
        "props": {
            "ord": chunk.ord,
            "text": chunk.text,
            "breadcrumb": chunk.breadcrumb,
            "date": chunk.date,
            "tokens": chunk.tokens,
            "note_path": chunk.note_path,
            "title": note.title,
            "folder": note.folder,
            "folder_key": note.folder + "/",
            "tags": list(note.tags),
            "private": note.private,
            "facets": _facets(note.folder, note.tags, chunk.date),
            "privacy": cypher.PRIVATE_WORD if note.private else "",
        },
        "passages": [{"id": p.id, "ord": p.ord, "text": p.text, "hash": p.hash} for p in parts],
    }


PARSE_SECONDS = 30  # one note taking longer than this is skipped, never a hung run


Parsed = tuple[Note, list[Chunk], list[list[Passage]]]  # a note, its chunks, each chunk's passages


def parse_and_chunk(vf: VaultFile, private_folders: tuple[str, ...]) -> Parsed | Skipped:
    """One note parsed, chunked and cut into passages (in the worker, which has the spare core), or the reason
    it could not be: one bad file never stops a run."""
    try:
        with time_limit(PARSE_SECONDS):
            note = parse_note(vf, private_folders)
            chunks = chunk_note(note)
            return note, chunks, [passages(c.id, c.note_path, c.breadcrumb, c.text) for c in chunks]
    except FileNotFoundError:
        return Skipped(vf.path, "vanished during the run (renamed or deleted): run kb refresh again")
    except OSError as exc:
        return Skipped(vf.path, f"unreadable ({exc.strerror}): check the file's permissions")
    except TimeoutError:
        return Skipped(vf.path, f"took over {PARSE_SECONDS} s to parse: split the note, or report it as a kb bug")
    except (RecursionError, MemoryError):
        return Skipped(vf.path, "nested too deeply to parse: simplify its lists or quotes")
    except Exception as exc:
        return Skipped(vf.path, f"could not be parsed ({type(exc).__name__}: {str(exc)[:120]}): report it as a kb bug")


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in this (main) thread after `seconds`; elsewhere, no limit."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(_sig: int, _frame: Any) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def die_with_parent(parent: int) -> None:
    """Worker start-up: exit as soon as the process that started this one is gone (kill -9 included)."""
    try:  # Linux: the kernel sends SIGKILL when the parent dies
        import ctypes

        armed = ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL) == 0  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    """Elsewhere (macOS): poll, since the kernel will not tell."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def parsed_batches(
    todo: list[VaultFile], private_folders: tuple[str, ...], workers: int
) -> Iterator[list[Parsed | Skipped]]:
    """Parsed and chunked notes in batches; worker processes parse while this one writes."""
    if workers <= 1 or len(todo) < 4 * BATCH_NOTES:
        for start in range(0, len(todo), BATCH_NOTES):
            yield [parse_and_chunk(vf, private_folders) for vf in todo[start : start + BATCH_NOTES]]
        return
    # Spawned, not forked: a forked worker would inherit the Bolt socket, keeping a killed run's open write
    # transaction alive and blocking the next refresh. Workers also end when this process dies.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        batch: list[Parsed | Skipped] = []
        for item in pool.map(parse_and_chunk, todo, itertools.repeat(private_folders), chunksize=32):
            batch.append(item)
            if len(batch) == BATCH_NOTES:
                yield batch
                batch = []
        if batch:
            yield batch


def write_batch(
    store: Store, parsed: list[Parsed], embedder_id: str, existing: set[str] | dict[str, Any], fresh: bool = False
) -> int:
    """Write notes with their chunks, tags and folders in one transaction (links come after, in `relink`).
    `fresh`: the graph held no note, chunk or passage when the run began, so those are created, not merged."""
    note_rows: list[dict[str, Any]] = []
    chunk_rows: list[dict[str, Any]] = []
    clear_rows: list[dict[str, Any]] = []
    pairs: list[list[str]] = []
    folders: dict[str, str | None] = {}
    tag_pairs: set[tuple[str, str]] = set()
    for note, chunks, parts in parsed:
        # Links are written by `relink` once every note of the run exists: a target in a later batch would
        # otherwise be missed. An empty signature marks the note's links as still to be written.
        note_rows.append(
            {
                "path": note.path,
                "folder": note.folder,
                "folder_name": _folder_name(note.folder),
                "tags": list(note.tags),
                "props": _note_props(note, PENDING_SIG),
            }
        )
        if note.path in existing:  # a new note has nothing to clear
            clear_rows.append({"path": note.path, "keep": [c.id for c in chunks]})
        chunk_rows.extend(_chunk_row(c, note, p) for c, p in zip(chunks, parts))
        pairs.extend([a.id, b.id] for a, b in zip(chunks, chunks[1:]))
        for anc in folder_ancestors(note.folder):
            folders[anc] = None if anc == "" else posixpath.dirname(anc)
        tag_pairs.update((t, t.rsplit("/", 1)[0]) for t in note.tags if "/" in t)
    folder_rows = [{"path": p, "name": _folder_name(p), "parent": folders[p]} for p in sorted(folders)]
    tag_rows = [{"child": c, "parent": p} for c, p in sorted(tag_pairs)]
    statements: list[tuple[str, dict[str, Any]]] = [
        (cypher.clear_note_edges(), {"rows": clear_rows}),
        (cypher.upsert_folders(), {"rows": folder_rows}),
        (cypher.upsert_notes(fresh), {"rows": note_rows}),
        (cypher.link_tags(), {"rows": tag_rows}),
        (cypher.upsert_chunks(fresh), {"rows": chunk_rows, "embedder": embedder_id}),
        (cypher.upsert_passages(fresh), {"rows": chunk_rows, "embedder": embedder_id}),
        (cypher.link_next_chunks(), {"pairs": pairs}),
    ]
    store.run_batch(statements)
    return len(chunk_rows)


def _folder_name(folder: str) -> str:
    return posixpath.basename(folder) if folder else "/"


def relink(store: Store, index: LinkIndex, bars: Bars, everything: bool = True) -> int:
    """Re-resolve note links against the vault as it is now; rewrite only those that moved or are not all
    in the graph. With `everything` False (no path in the vault changed) only the notes whose links are
    pending or whose relationship count differs from what was written are looked at."""
    todo = []
    for row in store.raw_links() if everything else store.raw_links_suspect():
        rows = link_rows(row["path"], _links_from_json(row["links"]), index)
        sig = link_sig(rows)
        if sig != row["sig"] or link_count(rows) != row["edges"]:
            todo.append((row["path"], rows, sig))
    with bars.step("relinking", len(todo)) as advance:
        for start in range(0, len(todo), BATCH_NOTES):
            batch = todo[start : start + BATCH_NOTES]
            paths = [p for p, _, _ in batch]
            flat = {k: [r for _, rows, _ in batch for r in rows[k]] for k in ("note", "missing", "attachment")}
            store.run_batch(
                [
                    (cypher.clear_links(), {"paths": paths}),
                    (cypher.link_notes(), {"rows": flat["note"]}),
                    (cypher.link_missing(), {"rows": flat["missing"]}),
                    (cypher.link_attachments(), {"rows": flat["attachment"]}),
                    (
                        cypher.set_link_sig(),
                        {"rows": [{"path": p, "sig": s, "n": link_count(rows)} for p, rows, s in batch]},
                    ),
                ]
            )
            advance(len(batch))
    return len(todo)


def _classify(scan: Scan, states: dict[str, dict[str, Any]]) -> tuple[list[VaultFile], list[dict[str, Any]]]:
    """Files to parse again (new or different bytes), and files only touched (same bytes, new mtime)."""
    todo: list[VaultFile] = []
    touched: list[dict[str, Any]] = []
    for vf in scan.notes:
        state = states.get(vf.path)
        if state and state["size"] == vf.size and state["mtime"] == vf.mtime:
            continue
        if state and state["size"] == vf.size and _hash_or_none(vf) == state["hash"]:
            touched.append({"path": vf.path, "mtime": vf.mtime})
            continue
        todo.append(vf)
    return todo, touched


def _hash_or_none(vf: VaultFile) -> str | None:
    """The file's hash; None when it cannot be read now (parsing it will say why)."""
    try:
        return file_hash(vf.abspath.read_bytes())
    except OSError:
        return None


def refresh(
    store: Store,
    cfg: Config,
    bars: Bars,
    embed_step: EmbedStep | None = None,
    unmark_private: bool = False,
    rebuild_indexes: bool = False,
) -> Summary:
    """Bring the graph in line with the vault on disk; safe to kill and run again."""
    started = time.monotonic()
    vault = cfg.require_vault()
    store.init_schema()
    vouched = vectorsync.hold(store)
    held = store.get_meta("vault").get("path")
    if held != str(vault.resolve()):
        if held is not None:  # another vault: kept until the indexes are rebuilt
            store.set_meta("indexes", {"switched": True})
        store.set_meta("vault", {"path": str(vault.resolve())})
    scan = scan_vault(
        vault, cfg.include, cfg.exclude, cfg.max_file_bytes, obsidian_excluded=not cfg.index_obsidian_excluded
    )
    guard_privacy(store, cfg, {vf.path for vf in scan.notes}, unmark_private)
    states = store.note_states()
    summary = Summary(vault=str(vault), skipped=[{"path": s.path, "reason": s.reason} for s in scan.skipped])
    if scan.excluded:
        summary.excluded = {
            "notes": len(scan.excluded),
            "filters": list(scan.filters),
            "reason": "Obsidian's Excluded files (.obsidian/app.json userIgnoreFilters); set "
            "index_obsidian_excluded = true in the kb config to index them",
        }
    todo, touched = _classify(scan, states)
    held_cut, cut = store.get_meta("derive").get("cut"), derive_key()
    if states and held_cut != cut:
        summary.rederived = f"notes were cut by {held_cut or 'an older kb'}, this kb cuts by {cut}"
        todo, touched = list(scan.notes), []
    on_disk = {vf.path for vf in scan.notes}
    removed = sorted(set(states) - on_disk)
    index = LinkIndex(sorted(on_disk), scan.attachments)
    embedder_id = embed_step.identity if embed_step is not None else ""
    # a first build into an empty graph creates its chunks and passages (a killed one leaves notes: not fresh again)
    fresh = not states and not store.holds_chunks()
    bulk = fresh and len(todo) >= BULK_NOTES
    if bulk:  # a run killed before the end leaves them out: the next run's init_schema creates and fills them
        store.set_bulk_indexes(False)
    with bars.step("parsing notes", len(todo)) as advance:
        for items in parsed_batches(todo, cfg.private_folders, workers=min(2, os.cpu_count() or 1)):
            batch = [item for item in items if not isinstance(item, Skipped)]
            summary.skipped.extend({"path": s.path, "reason": s.reason} for s in items if isinstance(s, Skipped))
            summary.chunks_written += write_batch(store, batch, embedder_id, states, fresh)
            _add_churn(store, sum(len(p) for note, _, parts in batch if note.path in states for p in parts))
            for note, _, _ in batch:
                (summary.changed if note.path in states else summary.added).append(note.path)
                summary.warnings.extend(note.warnings)
            advance(len(items))
    if bulk:  # measured, not used: filled while the links are written (relink 5.9 -> 11-13 s, no faster in all)
        with bars.step("filling the search indexes", 1) as advance:
            store.set_bulk_indexes(True)
            advance(1)
    if held_cut != cut:  # only once every note is cut the new way: a killed run redoes it
        store.set_meta("derive", {"cut": cut})
    if touched:
        store.run(cypher.touch_notes(), rows=touched)
    summary.touched = len(touched)
    for start in range(0, len(removed), BATCH_NOTES):
        rows = store.run(cypher.delete_notes(), paths=removed[start : start + BATCH_NOTES])
        _add_churn(store, int(rows[0]["passages"]) if rows else 0)
    summary.removed = removed
    # Every run checks every note's links against what the graph holds (signature and edge count), so links
    # a killed or concurrent run left half-written are repaired, and notes written above get their links now.
    paths_key = _h(json.dumps([sorted(on_disk), scan.attachments]))
    moved = bool(todo or removed) or store.get_meta("links").get("paths") != paths_key
    summary.relinked = relink(store, index, bars, everything=moved)
    if moved:
        store.set_meta("links", {"paths": paths_key})
    if todo or removed or summary.relinked:
        store.run_autocommit(cypher.prune_orphans())
    remarked = _apply_private(store, cfg)
    if embed_step is not None:
        summary.embedded = embed_step(store, bars)
    _sync_vectors(store, bars, embed_step, vouched, not summary.wrote_nothing or remarked, summary)
    summary.counts = store.counts()  # a rebuild changes no count
    summary.indexes_rebuilt = _rebuild_reason(store, rebuild_indexes, summary.counts["passages"])
    if summary.indexes_rebuilt:
        with bars.step(f"rebuilding search indexes ({summary.indexes_rebuilt})", 1) as advance:
            store.rebuild_search_indexes()
            store.set_meta("indexes", {"churn": 0, "switched": False})
            advance(1)
    summary.unchanged = len(scan.notes) - len(todo) - len(touched)
    summary.missing = missing_with_aliases(store)
    summary.seconds = round(time.monotonic() - started, 3)
    return summary


def _add_churn(store: Store, passages: int) -> None:
    """Count passages whose index entries were just rewritten or deleted (kept across killed runs)."""
    if passages:
        store.set_meta("indexes", {"churn": int(store.get_meta("indexes").get("churn", 0)) + passages})


def _rebuild_reason(store: Store, asked: bool, live: int) -> str | None:
    """Why the search indexes must be rebuilt now (`live` passages in the graph), or None."""
    if asked:
        return "asked for"
    meta = store.get_meta("indexes")
    churn = int(meta.get("churn", 0))
    if not churn:
        return None
    if meta.get("switched"):
        return "another vault was in the database"
    if churn >= REBUILD_SHARE * live:
        return f"{churn} passages rewritten or deleted since the last build, {live} live"
    return None


def guard_privacy(store: Store, cfg: Config, on_disk: set[str], unmark_private: bool) -> None:
    """Refuse to make private notes public by accident (another overrides file, a removed folder, a typo).

    Only notes that stay in the vault count: a note that is gone (or a vault switch) makes nothing public.
    """
    if unmark_private:
        return
    flips = sorted(
        p
        for p, real in store.note_real_paths(private_only=True)
        if p in on_disk and not (is_private(p, cfg.private_folders) or is_private(real, cfg.private_folders))
    )
    if not flips:
        return
    folders = sorted({posixpath.dirname(p) or p for p in flips})
    raise ConfigError(
        f"this refresh would make {len(flips)} private notes public (in {', '.join(folders[:3])}"
        f"{', ...' if len(folders) > 3 else ''}): they are no longer under private_folders "
        f"(overrides file: {overrides_path(cfg) or 'none found in the vault'}); restore the setting "
        "(the vault's overrides.yaml, KB_OVERRIDES or private_folders in the kb config), or run "
        "kb refresh --unmark-private if they should be public"
    )


def _apply_private(store: Store, cfg: Config) -> bool:
    """Re-mark private notes and chunks when the list of private folders changed; whether it did."""
    folders = sorted(cfg.private_folders)
    if store.get_meta("privacy").get("folders") == folders:
        return False
    private = [
        p
        for p, real in store.note_real_paths()
        if is_private(p, cfg.private_folders) or is_private(real, cfg.private_folders)
    ]
    store.run(cypher.mark_private(), private_paths=private)
    store.set_meta("privacy", {"folders": folders})
    return True


def _sync_vectors(
    store: Store, bars: Bars, step: EmbedStep | None, vouched: str | None, changed: bool, summary: Summary
) -> None:
    """Bring the vector file in step with the graph; a file that cannot be written leaves search on Neo4j's index
    (slower, same answers) and says why, it never fails the refresh."""
    try:
        summary.vector_file = vectorsync.sync(
            store, bars, step.fresh if step is not None else None, vouched, changed
        ).to_json()
    except OSError as exc:
        summary.warnings.append(
            f"vector file not written ({exc}): search reads Neo4j's vector index instead; free space in "
            f"{store.vector_dir} and run `kb refresh` again"
        )


def missing_with_aliases(store: Store) -> list[dict[str, Any]]:
    """Broken links, each saying which note lists the target as an alias (Obsidian won't follow those)."""
    aliases = alias_table(store.note_aliases())
    out = []
    for row in store.missing_report():
        row = dict(row)
        row["alias_of"] = aliases.get(row["key"], [])
        out.append(row)
    return out
