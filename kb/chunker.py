"""Heading-aware chunks: whole notes up to 1,500 tokens, else sections of 100..1,000 tokens."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from kb.tokens import count_tokens, count_tokens_above
from kb.vault import FILENAME_DATE, Note

WHOLE_NOTE_MAX = 1500
SECTION_MAX = 1000
SECTION_MIN = 100
OVERLAP_CHARS = 200
SCHEME = f"chunks {WHOLE_NOTE_MAX}/{SECTION_MAX}/{SECTION_MIN}/{OVERLAP_CHARS}"  # part of refresh's derive key
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class Chunk:
    """A passage of a note, with what a citation needs."""

    id: str
    note_path: str
    ord: int
    text: str
    breadcrumb: str
    date: str | None
    tokens: int
    hash: str


@dataclass
class _Section:
    crumbs: tuple[str, ...]
    text: str
    tokens: int


def _sections(note: Note) -> list[_Section]:
    """The body cut at every heading; each section keeps its heading path."""
    lines = note.body.split("\n")
    cuts = [(h.line, h.level, h.text) for h in note.structure.headings]
    out: list[_Section] = []
    stack: list[tuple[int, str]] = []
    starts = [0] + [c[0] for c in cuts]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(lines)
        if i > 0:
            _, level, text = cuts[i - 1]
            stack = [s for s in stack if s[0] < level] + [(level, text)]
        text = "\n".join(lines[start:end]).strip()
        if text:
            out.append(_Section(tuple(s[1] for s in stack), text, count_tokens(text)))
    return out


def _merge_small(sections: list[_Section]) -> list[_Section]:
    """Sections under SECTION_MIN tokens join the next one (the last joins the previous)."""
    out: list[_Section] = []
    carry: _Section | None = None
    for sec in sections:
        if carry is not None:  # the merged section is named after its larger part
            crumbs = carry.crumbs if carry.tokens > sec.tokens else sec.crumbs
            sec = _Section(crumbs, carry.text + "\n\n" + sec.text, carry.tokens + sec.tokens)
            carry = None
        if sec.tokens < SECTION_MIN:
            carry = sec
        else:
            out.append(sec)
    if carry is not None:
        if out and out[-1].tokens + carry.tokens <= SECTION_MAX:
            last = out[-1]
            out[-1] = _Section(last.crumbs, last.text + "\n\n" + carry.text, last.tokens + carry.tokens)
        else:
            out.append(carry)
    return out


def _pieces(text: str, limit: int, tokens: int | None = None) -> list[tuple[str, int]]:
    """Split text at paragraphs, then sentences, then words, into pieces of at most `limit` tokens."""
    tokens = count_tokens(text) if tokens is None else tokens
    if tokens <= limit:
        return [(text, tokens)]
    for splitter in (re.compile(r"\n\s*\n"), SENTENCE_END, re.compile(r"(?<=\s)")):
        parts = [p for p in splitter.split(text) if p.strip()]
        if len(parts) > 1:
            break
    else:
        return _hard_split(text, limit)
    glue = "\n\n" if "\n\n" in text else " "
    out: list[tuple[str, int]] = []
    current: list[str] = []
    size = 0
    for part in parts:
        part_tokens = count_tokens(part)
        if part_tokens > limit:
            out.extend(_flush(current, glue, size))
            current, size = [], 0
            out.extend(_pieces(part, limit, part_tokens))
            continue
        if size + part_tokens > limit and current:
            out.extend(_flush(current, glue, size))
            current, size = [], 0
        current.append(part.strip())
        size += part_tokens + 1
    out.extend(_flush(current, glue, size))
    return out


def _flush(parts: list[str], glue: str, size: int) -> list[tuple[str, int]]:
    """Join packed parts; the exact count replaces the running estimate."""
    if not parts:
        return []
    text = glue.join(parts)
    return [(text, count_tokens(text))]


def _hard_split(text: str, limit: int) -> list[tuple[str, int]]:
    from kb.tokens import encoding

    toks = encoding().encode(text, disallowed_special=())
    return [(encoding().decode(toks[i : i + limit]), len(toks[i : i + limit])) for i in range(0, len(toks), limit)]


def _overlap(previous: str) -> str:
    """The last ~200 characters of the previous chunk, starting at a word boundary."""
    tail = previous[-OVERLAP_CHARS:]
    cut = tail.find(" ")
    return tail[cut + 1 :] if 0 <= cut < len(tail) - 1 and len(previous) > OVERLAP_CHARS else tail


def chunk_id(path: str, breadcrumb: str, n: int) -> str:
    """Stable across edits elsewhere: the note path, the heading path and the repeat count."""
    return hashlib.sha1(f"{path}\x00{breadcrumb}\x00{n}".encode()).hexdigest()[:24]


def chunk_note(note: Note) -> list[Chunk]:
    """The chunks of one note, in reading order."""
    body = note.body.strip()
    if not body:
        return []
    total = count_tokens_above(body, WHOLE_NOTE_MAX)  # exact for a note kept whole
    raw: list[tuple[tuple[str, ...], str, int]]
    if total <= WHOLE_NOTE_MAX:
        raw = [((), body, total)]
    else:
        raw = [
            (sec.crumbs, piece, size)
            for sec in _merge_small(_sections(note))
            for piece, size in _pieces(sec.text, SECTION_MAX - 60, sec.tokens)
        ]
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    previous = ""
    for ord_, (crumbs, text, size) in enumerate(raw):
        if previous and total > WHOLE_NOTE_MAX:
            lap = _overlap(previous)
            text = lap + "\n" + text
            size += count_tokens(lap) + 1
        previous = text
        if crumbs and _same_title(crumbs[0], note.title):
            crumbs = crumbs[1:]  # an H1 that repeats the file name
        breadcrumb = " > ".join((note.title, *crumbs))
        n = seen.get(breadcrumb, 0)
        seen[breadcrumb] = n + 1
        digest = hashlib.sha256(f"{breadcrumb}\n{text}".encode()).hexdigest()
        chunks.append(
            Chunk(
                chunk_id(note.path, breadcrumb, n),
                note.path,
                ord_,
                text,
                breadcrumb,
                _crumb_date(crumbs) or note.date,
                size,
                digest,
            )
        )
    return chunks


def _same_title(heading: str, title: str) -> bool:
    def norm(text: str) -> str:
        return " ".join(re.sub(r"[\u2012-\u2015\-]", "-", text).lower().split())

    return norm(heading) == norm(title)


def _crumb_date(crumbs: tuple[str, ...]) -> str | None:
    """A date written in the deepest dated heading (`## 2024-03-01 call`) dates its chunk."""
    for crumb in reversed(crumbs):
        m = FILENAME_DATE.search(crumb)
        if m:
            return f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    return None
