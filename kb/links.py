"""Link resolution as Obsidian does it: vault path, then file name (shortest path wins), case-insensitive."""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from kb.markdown import RawLink


@dataclass(frozen=True)
class Resolved:
    """Where a link points: a note, an attachment, or nothing (`missing`)."""

    kind: str  # "note" | "attachment" | "missing"
    target: str  # note path, attachment path, or the normalised missing name
    missing_kind: str = "note"  # for missing links: "note" or "attachment"


def _low(text: str) -> str:
    """Lower case in one Unicode form: a link typed as NFC finds a file name stored as NFD (macOS)."""
    return unicodedata.normalize("NFC", text).lower()


def _path_key(path: str) -> str:
    return _low(path).removesuffix(".md")


def _rank(path: str) -> tuple[int, int, str]:
    return (path.count("/"), len(path), path)


def missing_key(target: str) -> str:
    return _low(target.strip().strip("/")).removesuffix(".md")


class LinkIndex:
    """Lookup tables over every note and attachment path in the vault."""

    def __init__(self, note_paths: Iterable[str], attachment_paths: Iterable[str]) -> None:
        self.by_path: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        self.att_by_path: dict[str, str] = {}
        self.att_by_name: dict[str, str] = {}
        for path in sorted(note_paths, key=_rank):
            self.by_path.setdefault(_path_key(path), path)
            self.by_name.setdefault(_path_key(posixpath.basename(path)), path)
        for path in sorted(attachment_paths, key=_rank):
            self.att_by_path.setdefault(_low(path), path)
            self.att_by_name.setdefault(_low(posixpath.basename(path)), path)
        self._suffix_cache: dict[str, str | None] = {}

    def resolve(self, link: RawLink, source_path: str) -> Resolved:
        target = link.target.strip().replace("\\", "/")
        if not target:  # [[#Heading]]: a link inside the same note
            return Resolved("note", source_path)
        lower = _low(target)
        ext = posixpath.splitext(lower)[1]
        if ext and ext != ".md" and not self._note_lookup(lower, source_path, link.kind):
            return self._attachment(target, source_path)
        found = self._note_lookup(lower, source_path, link.kind)
        if found:
            return Resolved("note", found)
        return Resolved("missing", missing_key(target), "note")

    def _note_lookup(self, lower: str, source_path: str, kind: str) -> str | None:
        key = lower.strip("/").removesuffix(".md")
        if kind == "md" and not lower.startswith("/"):
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(_low(source_path)), key))
            if rel in self.by_path:
                return self.by_path[rel]
        if key in self.by_path:
            return self.by_path[key]
        if "/" in key:
            return self._by_suffix(key)
        return self.by_name.get(key)

    def _by_suffix(self, key: str) -> str | None:
        if key not in self._suffix_cache:
            hits = sorted((p for k, p in self.by_path.items() if k.endswith("/" + key)), key=_rank)
            self._suffix_cache[key] = hits[0] if hits else None
        return self._suffix_cache[key]

    def _attachment(self, target: str, source_path: str) -> Resolved:
        lower = _low(target).strip("/")
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(_low(source_path)), lower))
        for key, table in (
            (lower, self.att_by_path),
            (rel, self.att_by_path),
            (posixpath.basename(lower), self.att_by_name),
        ):
            if key in table:
                return Resolved("attachment", table[key])
        return Resolved("missing", lower, "attachment")


def alias_table(aliases: Iterable[tuple[str, Iterable[str]]]) -> dict[str, list[str]]:
    """Lower-cased alias -> the note paths that list it (sorted)."""
    table: dict[str, set[str]] = {}
    for path, names in aliases:
        for name in names:
            table.setdefault(name.strip().lower(), set()).add(path)
    return {k: sorted(v) for k, v in table.items()}
