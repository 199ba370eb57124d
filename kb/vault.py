"""Reading a vault: which files are notes, and each note's front matter, dates, links and tags."""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

import frontmatter
import yaml

from kb.markdown import RawLink, Structure, expand_tags, parse_structure

FILENAME_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


@dataclass(frozen=True)
class VaultFile:
    """A Markdown file found in the vault."""

    path: str  # vault-relative, POSIX separators
    abspath: Path
    size: int
    mtime: float


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass
class Scan:
    """What a walk of the vault found."""

    notes: list[VaultFile] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class Note:
    """One parsed note, ready for the store."""

    path: str
    title: str
    folder: str
    body: str
    hash: str
    size: int
    mtime: float
    frontmatter: dict[str, Any]
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    links: tuple[RawLink, ...]
    structure: Structure
    date: str | None
    date_source: str
    updated: str | None
    private: bool
    warnings: list[str] = field(default_factory=list)


@lru_cache(maxsize=32)
def _glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled regex for a tuple of globs (`**/` also matches at the top level)."""
    if not patterns:
        return None
    parts = [fnmatch.translate(p) for p in patterns] + [fnmatch.translate(p.removeprefix("**/")) for p in patterns]
    return re.compile("|".join(f"(?:{p})" for p in parts))


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    rx = _glob_regex(patterns)
    return bool(rx and rx.match(path))


def scan_vault(root: Path, include: tuple[str, ...] = ("**/*.md",), exclude: tuple[str, ...] = (),
               max_bytes: int = 5_000_000) -> Scan:
    """Walk the vault in a stable order; dot folders (.obsidian, .trash, .git) are not part of it."""
    scan = Scan()
    seen_dirs: set[tuple[int, int]] = set()
    root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        if not _inside(root, dirpath):
            rel = Path(dirpath).relative_to(root).as_posix()
            scan.skipped.append(Skipped(rel, "symlink to a folder outside the vault: move the folder into the vault"))
            dirnames[:] = []
            continue
        st = os.stat(dirpath)
        if (st.st_dev, st.st_ino) in seen_dirs:
            rel = Path(dirpath).relative_to(root).as_posix()
            scan.skipped.append(Skipped(rel, "symlink loop: this folder was already read; remove the link"))
            dirnames[:] = []
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            _classify(root, Path(dirpath) / name, include, exclude, max_bytes, scan)
    scan.notes.sort(key=lambda f: f.path)
    scan.attachments.sort()
    scan.skipped.sort(key=lambda s: s.path)
    return scan


def _classify(root: Path, full: Path, include: tuple[str, ...], exclude: tuple[str, ...],
              max_bytes: int, scan: Scan) -> None:
    rel = full.relative_to(root).as_posix()
    name = full.name
    if name.endswith(".icloud"):
        scan.skipped.append(Skipped(rel, "online-only iCloud placeholder: download it in Finder/Files "
                                         "(Download Now), then run kb refresh again"))
        return
    if name.startswith("."):
        return
    if not name.lower().endswith(".md"):
        if not name.lower().endswith(".canvas"):
            scan.attachments.append(rel)
        return
    if not _matches(rel, include) or _matches(rel, exclude):
        return
    if full.is_symlink() and not _inside(root, full):
        scan.skipped.append(Skipped(rel, "symlink to a file outside the vault: copy the file into the vault"))
        return
    try:
        st = full.stat()
    except OSError as exc:
        scan.skipped.append(Skipped(rel, f"unreadable ({exc.strerror}): check the file's permissions"))
        return
    if st.st_size > max_bytes:
        scan.skipped.append(Skipped(rel, f"{st.st_size:,} bytes is over max_file_bytes ({max_bytes:,}): "
                                         "raise max_file_bytes in the kb config to include it"))
        return
    if not os.access(full, os.R_OK):
        scan.skipped.append(Skipped(rel, "unreadable (permission denied): check the file's permissions"))
        return
    scan.notes.append(VaultFile(rel, full, st.st_size, st.st_mtime))


def _inside(root: Path, path: Path | str) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(root)


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_private(path: str, private_folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in private_folders if f)


def parse_note(vf: VaultFile, private_folders: tuple[str, ...] = ()) -> Note:
    """Parse one file; problems become warnings on the note, never exceptions."""
    data = vf.abspath.read_bytes()
    warnings: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warnings.append(f"{vf.path}: not valid UTF-8 (byte {exc.start}); decoded with replacement "
                        "characters: re-save the file as UTF-8")
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not data:
        warnings.append(f"{vf.path}: empty file (0 bytes): kept as a note with no text")
    meta, body = _split_front_matter(vf.path, text, warnings)
    structure = parse_structure(body)
    pure = PurePosixPath(vf.path)
    folder = "" if str(pure.parent) == "." else str(pure.parent)
    date, source = _note_date(meta, pure.stem, vf.mtime)
    fm_tags = _as_list(meta.get("tags")) + _as_list(meta.get("tag"))
    return Note(
        path=vf.path, title=pure.stem, folder=folder, body=body, hash=file_hash(data), size=vf.size,
        mtime=vf.mtime, frontmatter=_json_safe(meta), aliases=tuple(_as_list(meta.get("aliases"))
                                                                    + _as_list(meta.get("alias"))),
        tags=expand_tags([t.lstrip("#") for t in fm_tags] + list(structure.tags)), links=structure.links,
        structure=structure, date=date, date_source=source, updated=_date_str(meta.get("updated")),
        private=is_private(vf.path, private_folders), warnings=warnings)


def _split_front_matter(path: str, text: str, warnings: list[str]) -> tuple[dict[str, Any], str]:
    handler = frontmatter.YAMLHandler()
    if not handler.detect(text):
        return {}, text
    try:
        fm, body = handler.split(text)
    except ValueError:
        return {}, text
    try:
        meta = handler.load(fm) or {}
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())[:160]
        meta = _salvage_lines(fm, handler)
        kept = f"kept {', '.join(sorted(meta))}" if meta else "ignored"
        warnings.append(f"{path}: malformed YAML front matter ({first}); body parsed, front matter {kept}: "
                        "fix the YAML between the --- lines")
        return meta, body
    if not isinstance(meta, dict):
        warnings.append(f"{path}: front matter is not a mapping; ignored: use key: value lines")
        return {}, body
    return meta, body


def _salvage_lines(fm: str, handler: frontmatter.YAMLHandler) -> dict[str, Any]:
    """The one-line `key: value` entries of a broken front matter that parse on their own."""
    meta: dict[str, Any] = {}
    for line in fm.split("\n"):
        if not re.match(r"^[A-Za-z_][\w-]*:\s*\S", line):
            continue
        try:
            parsed = handler.load(line)
        except yaml.YAMLError:
            continue
        if isinstance(parsed, dict):
            meta.update(parsed)
    return meta


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in re.split(r"[,\s]+", value) if v.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _date_str(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        m = FILENAME_DATE.search(value)
        if m:
            return _valid_date(m)
    return None


def _valid_date(m: re.Match[str]) -> str | None:
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None


def _note_date(meta: dict[str, Any], stem: str, mtime: float) -> tuple[str, str]:
    for key in ("date", "created"):
        value = _date_str(meta.get(key))
        if value:
            return value, f"front matter {key}"
    m = FILENAME_DATE.search(stem)
    if m and (value := _valid_date(m)):
        return value, "file name"
    return dt.datetime.fromtimestamp(mtime, tz=dt.timezone.utc).date().isoformat(), "file mtime"


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
