"""Search results built by hand for the re-ranking tests."""

from __future__ import annotations

from kb.search.results import ChunkResult, NoteResult


def chunk(id: str = "c1", text: str | None = "", date: str | None = None, breadcrumb: str | None = "A") -> ChunkResult:
    return ChunkResult(id, breadcrumb, date, text, 10, 0.0, None, None)


def note(path: str, rank: int = 1, **kw: object) -> NoteResult:
    """A ranked note with one chunk; keyword arguments override any field."""
    fields: dict[str, object] = {"title": None, "date": None, "score": 0.0, "keyword_rank": None}
    fields |= {"vector_rank": None, "chunks": (chunk(),)} | kw
    return NoteResult(rank, path, **fields)  # type: ignore[arg-type]


def ranked(*paths: str) -> list[NoteResult]:
    return [note(p, n) for n, p in enumerate(paths, start=1)]
