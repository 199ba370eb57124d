"""Reading a vault: which files are notes, and each note's front matter, dates, links and tags."""

from __future__ import annotations

import datetime as dt
import errno
import fnmatch
import hashlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from kb.frontmatter_yaml import load_front_matter
from kb.markdown import RawLink, Structure, expand_tags, parse_structure

FILENAME_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
CLOCK = re.compile(r"\d{4}-\d{2}-\d{2}[ T](\d{1,2}):(\d{2})(?::(\d{2}))?")


@dataclass(frozen=True)
class VaultFile:
    """A Markdown file found in the vault."""

    path: str  # vault-relative, POSIX separators
    abspath: Path
    size: int
    mtime: float
    real: str = ""  # the vault-relative path of a symlink's target ("" or `path` for a plain file)


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
    excluded: list[str] = field(default_factory=list)  # notes matched by Obsidian's "Excluded files"
    filters: tuple[str, ...] = ()  # those filters, as written in .obsidian/app.json


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
    real_path: str = ""  # for a symlink: the vault path of the note it points at


@lru_cache(maxsize=32)
def _glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled regex for a tuple of globs (`**/` also matches at the top level)."""
    if not patterns:
        return None
    parts = [fnmatch.translate(p) for p in patterns] + [fnmatch.translate(p.removeprefix("**/")) for p in patterns]
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)  # Note.MD is a note too


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    rx = _glob_regex(patterns)
    return bool(rx and rx.match(path))


def obsidian_filters(root: Path) -> tuple[tuple[str, ...], str | None]:
    """The vault's "Excluded files" (`userIgnoreFilters` in .obsidian/app.json), and a warning if unreadable."""
    path = root / ".obsidian" / "app.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        filters = data.get("userIgnoreFilters") or [] if isinstance(data, dict) else []
        return tuple(str(f) for f in filters if isinstance(f, str) and f.strip()), None
    except (OSError, ValueError) as exc:
        return (), (
            f".obsidian/app.json: unreadable ({str(exc)[:80]}); Obsidian's excluded files not applied: fix the file"
        )


def _ignored_by(filters: tuple[str, ...]) -> Callable[[str], bool]:
    """Obsidian's matching: `/regex/` is a regular expression, anything else a path prefix."""
    prefixes = tuple(f for f in filters if not (len(f) > 2 and f.startswith("/") and f.endswith("/")))
    patterns: list[re.Pattern[str]] = []
    for f in filters:
        if f not in prefixes:
            try:
                patterns.append(re.compile(f[1:-1]))
            except re.error:
                continue

    def ignored(path: str) -> bool:
        return path.startswith(prefixes) or any(rx.search(path) for rx in patterns)

    return ignored


def scan_vault(
    root: Path,
    include: tuple[str, ...] = ("**/*.md",),
    exclude: tuple[str, ...] = (),
    max_bytes: int = 5_000_000,
    obsidian_excluded: bool = True,
) -> Scan:
    """Walk the vault in a stable order; dot folders (.obsidian, .trash, .git) are not part of it, nor (unless
    `obsidian_excluded` is False) the notes Obsidian's "Excluded files" setting hides."""
    scan = Scan()
    root = root.resolve()
    if obsidian_excluded:
        scan.filters, problem = obsidian_filters(root)
        if problem:
            scan.skipped.append(Skipped(".obsidian/app.json", problem))
    ignored = _ignored_by(scan.filters)

    def unreadable(exc: OSError) -> None:
        rel = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "?"
        why = (
            "vanished during the scan (renamed or deleted): run kb refresh again"
            if isinstance(exc, FileNotFoundError)
            else f"unreadable folder ({exc.strerror}): check its permissions"
        )
        scan.skipped.append(Skipped(rel, why))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        here = Path(dirpath)
        kept = []
        for d in sorted(dirnames):
            if d.startswith("."):
                continue
            if (here / d).is_symlink():  # a folder link is never followed: see _folder_link
                scan.skipped.append(Skipped((here / d).relative_to(root).as_posix(), _folder_link(root, here / d)))
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            _classify(root, here / name, include, exclude, max_bytes, scan)
    if scan.filters:
        scan.excluded = [f.path for f in scan.notes if ignored(f.path)]
        scan.notes = [f for f in scan.notes if not ignored(f.path)]
    scan.notes.sort(key=lambda f: f.path)
    scan.excluded.sort()
    scan.attachments.sort()
    scan.skipped.sort(key=lambda s: s.path)
    return scan


def _classify(
    root: Path, full: Path, include: tuple[str, ...], exclude: tuple[str, ...], max_bytes: int, scan: Scan
) -> None:
    rel = full.relative_to(root).as_posix()
    name = full.name
    if name.endswith(".icloud"):
        scan.skipped.append(
            Skipped(
                rel,
                "online-only iCloud placeholder: download it in Finder/Files (Download Now), then run kb refresh again",
            )
        )
        return
    if name.startswith("."):
        return
    if full.is_symlink() and not full.exists():
        scan.skipped.append(Skipped(rel, _stat_failure(full, _stat_error(full))))
        return
    if not name.lower().endswith(".md"):
        if not name.lower().endswith(".canvas"):
            scan.attachments.append(rel)
        return
    if not _matches(rel, include) or _matches(rel, exclude):
        return
    try:
        st = full.stat()
    except OSError as exc:
        scan.skipped.append(Skipped(rel, _stat_failure(full, exc)))
        return
    real = rel
    if full.is_symlink():
        if not _inside(root, full):
            scan.skipped.append(Skipped(rel, "symlink to a file outside the vault: copy the file into the vault"))
            return
        real = Path(os.path.realpath(full)).relative_to(root).as_posix()
    if not stat.S_ISREG(st.st_mode):
        scan.skipped.append(
            Skipped(
                rel,
                "not a regular file (a FIFO, socket or device named like a note): remove it or rename it without .md",
            )
        )
        return
    if st.st_size > max_bytes:
        scan.skipped.append(
            Skipped(
                rel,
                f"{st.st_size:,} bytes is over max_file_bytes ({max_bytes:,}): "
                "raise max_file_bytes in the kb config to include it",
            )
        )
        return
    if not os.access(full, os.R_OK):
        scan.skipped.append(Skipped(rel, "unreadable (permission denied): check the file's permissions"))
        return
    scan.notes.append(VaultFile(rel, full, st.st_size, st.st_mtime, real))


def _folder_link(root: Path, link: Path) -> str:
    """Why a symlinked folder is not read: outside the vault it is not part of it; inside, its notes would
    get a second path (and lose the privacy of their real folder); a loop never ends."""
    target = Path(os.path.realpath(link))
    parent = Path(os.path.realpath(link.parent))
    if parent.is_relative_to(target):
        return "symlink loop (the folder links to a folder above it): remove the link"
    if not target.is_relative_to(root):
        return "symlink to a folder outside the vault: move the folder into the vault"
    return (
        f"symlink to {target.relative_to(root).as_posix() or 'the vault'}/ inside the vault, whose notes are "
        "read there: remove the link"
    )


def _stat_error(full: Path) -> OSError:
    try:
        full.stat()
    except OSError as exc:
        return exc
    return FileNotFoundError(errno.ENOENT, "No such file or directory")


def _stat_failure(full: Path, exc: OSError) -> str:
    if full.is_symlink():
        if exc.errno == errno.ELOOP:
            return "symlink loop (the link points back at itself): remove the link"
        return "broken symlink (its target does not exist): remove the link or restore its target"
    if isinstance(exc, FileNotFoundError):
        return "vanished during the scan (renamed or deleted): run kb refresh again"
    return f"unreadable ({exc.strerror}): check the file's permissions"


def _inside(root: Path, path: Path | str) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(root)


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_private(path: str, private_folders: tuple[str, ...]) -> bool:
    """Inside a private folder, compared case-insensitively and in one Unicode form: renaming Journal to
    journal, or a file system that stores names decomposed, must not make a private note public."""
    key = _fold(path)
    return any(key == f or key.startswith(f + "/") for f in (_fold(p).strip("/") for p in private_folders) if f)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def parse_note(vf: VaultFile, private_folders: tuple[str, ...] = ()) -> Note:
    """Parse one file; problems become warnings on the note, never exceptions."""
    data = vf.abspath.read_bytes()
    warnings: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warnings.append(
            f"{vf.path}: not valid UTF-8 (byte {exc.start}); decoded with replacement "
            "characters: re-save the file as UTF-8"
        )
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not data:
        warnings.append(f"{vf.path}: empty file (0 bytes): kept as a note with no text")
    meta, body = _split_front_matter(vf.path, text, warnings)
    structure = parse_structure(body)
    pure = PurePosixPath(vf.path)
    folder = "" if str(pure.parent) == "." else str(pure.parent)
    date, source = _note_date(meta, pure.stem, vf.mtime)
    warnings.extend(_date_warnings(vf.path, meta, source))
    fm_tags = _as_list(meta.get("tags")) + _as_list(meta.get("tag"))
    return Note(
        path=vf.path,
        title=pure.stem,
        folder=folder,
        body=body,
        hash=file_hash(data),
        size=vf.size,
        mtime=vf.mtime,
        frontmatter=_json_safe(meta),
        aliases=tuple(_as_list(meta.get("aliases")) + _as_list(meta.get("alias"))),
        tags=expand_tags([t.lstrip("#") for t in fm_tags] + list(structure.tags)),
        links=structure.links,
        structure=structure,
        date=date,
        date_source=source,
        updated=_date_str(meta.get("updated")),
        private=is_private(vf.path, private_folders) or is_private(vf.real or vf.path, private_folders),
        warnings=warnings,
        real_path=vf.real if vf.real != vf.path else "",
    )


def _split_front_matter(path: str, text: str, warnings: list[str]) -> tuple[dict[str, Any], str]:
    handler = YAMLHandler()
    if not handler.detect(text):
        return {}, text
    try:
        fm, body = handler.split(text)
    except ValueError:
        return {}, text
    try:
        meta = load_front_matter(fm) or {}
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        first = " ".join(str(exc).split())[:160]
        meta = _salvage_lines(fm)
        kept = f"kept {', '.join(sorted(meta))}" if meta else "ignored"
        warnings.append(
            f"{path}: malformed YAML front matter ({first}); body parsed, front matter {kept}: "
            "fix the YAML between the --- lines"
        )
        return meta, body
    if not isinstance(meta, dict):
        warnings.append(f"{path}: front matter is not a mapping; ignored: use key: value lines")
        return {}, body
    return meta, body


def _salvage_lines(fm: str) -> dict[str, Any]:
    """The one-line `key: value` entries of a broken front matter that parse on their own."""
    meta: dict[str, Any] = {}
    for line in fm.split("\n"):
        if not re.match(r"^[A-Za-z_][\w-]*:\s*\S", line):
            continue
        try:
            parsed = load_front_matter(line)
        except (yaml.YAMLError, ValueError, TypeError, RecursionError):
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
    return dt.datetime.fromtimestamp(mtime, tz=dt.UTC).date().isoformat(), "file mtime"


def _date_warnings(path: str, meta: dict[str, Any], used: str) -> list[str]:
    """One line per front-matter date that is not a real calendar date (2024-02-30, 0000-01-01)."""
    out = []
    for key in ("date", "created", "updated"):
        value = meta.get(key)
        if value is None or isinstance(value, bool):
            continue
        shown = str(value)[:40]
        if _date_str(value) is None:
            fallback = f"; the note's date comes from its {used}" if key != "updated" else ""
            out.append(f"{path}: front matter {key} {shown!r} is not a valid date{fallback}: write it as YYYY-MM-DD")
        elif isinstance(value, str) and (m := CLOCK.search(value)) and not _valid_clock(m):
            out.append(
                f"{path}: front matter {key} {shown!r} has an impossible time of day; only its date is "
                "used: write it as YYYY-MM-DD HH:MM"
            )
    return out


def _valid_clock(m: re.Match[str]) -> bool:
    return int(m.group(1)) < 24 and int(m.group(2)) < 60 and int(m.group(3) or 0) < 61


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
