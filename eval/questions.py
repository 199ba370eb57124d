"""Load, validate and filter graded eval question sets (schema: shared/eval/VAULT.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

CATEGORIES: tuple[str, ...] = (
    "single_fact",
    "multi_hop",
    "entity_rollup",
    "temporal",
    "modality_trap",
    "broad_theme",
    "paraphrase_alias",
    "disambiguation",
    "unanswerable",
)
SPLITS: tuple[str, ...] = ("dev", "test")
GRADES: tuple[int, ...] = (1, 2)
_REQUIRED: tuple[str, ...] = (
    "id",
    "category",
    "split",
    "question",
    "gold_notes",
    "distractors",
    "key_facts",
    "answer",
)
_OPTIONAL: tuple[str, ...] = ("current_path",)


class QuestionSetError(ValueError):
    """A question file is structurally invalid; the message is a single line."""


@dataclass(frozen=True)
class GoldNote:
    """A note that answers a question; grade 2 = essential, 1 = supporting."""

    path: str
    grade: int


@dataclass(frozen=True)
class KeyFact:
    """A quote that must occur verbatim in the note at path."""

    quote: str
    path: str


@dataclass(frozen=True)
class Question:
    """One graded eval question."""

    id: str
    category: str
    split: str
    question: str
    gold_notes: tuple[GoldNote, ...]
    distractors: tuple[str, ...]
    key_facts: tuple[KeyFact, ...]
    current_path: str | None
    answer: str

    def gold(self) -> dict[str, int]:
        """Return the gold notes as a path -> grade mapping."""
        return {g.path: g.grade for g in self.gold_notes}

    def quotes(self) -> list[str]:
        """Return the key-fact quotes in order."""
        return [f.quote for f in self.key_facts]


@dataclass(frozen=True)
class _Where:
    """Location of the question being parsed, for error messages."""

    file: str
    qid: str

    def error(self, field: str, problem: str) -> QuestionSetError:
        """Build a one-line error naming file, question id and field."""
        return QuestionSetError(_one_line(f"{self.file}: {self.qid} {field}: {problem}"))


def _one_line(text: str) -> str:
    """Collapse all whitespace (including newlines) to single spaces."""
    return " ".join(text.split())


def load_questions(path: Path) -> list[Question]:
    """Parse a question YAML file; raise QuestionSetError on any structural fault."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise QuestionSetError(_one_line(f"{path}: cannot read question set: {exc}")) from exc
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise QuestionSetError(f"{path}: top level must be a mapping with a 'questions' list")
    return [_parse_question(item, str(path), i) for i, item in enumerate(items)]


def _parse_question(item: Any, file: str, index: int) -> Question:
    """Validate one raw YAML question mapping and build a Question."""
    where = _Where(file, f"questions[{index}]")
    if not isinstance(item, dict):
        raise where.error("(entry)", f"must be a mapping, got {type(item).__name__}")
    where = _Where(file, _str_field(item, "id", where))
    for key in _REQUIRED:
        if key not in item:
            raise where.error(key, "missing field")
    unknown = sorted(str(k) for k in item if k not in _REQUIRED + _OPTIONAL)
    if unknown:
        raise where.error(unknown[0], "unknown field")
    return Question(
        id=where.qid,
        category=_choice(item, "category", CATEGORIES, where),
        split=_choice(item, "split", SPLITS, where),
        question=_str_field(item, "question", where),
        gold_notes=_gold_notes(_list_field(item, "gold_notes", where), where),
        distractors=_distractors(_list_field(item, "distractors", where), where),
        key_facts=_key_facts(_list_field(item, "key_facts", where), where),
        current_path=_optional_str(item, "current_path", where),
        answer=_str_field(item, "answer", where),
    )


def _str_field(item: dict[Any, Any], key: str, where: _Where) -> str:
    """Return a required non-empty string field."""
    if key not in item:
        raise where.error(key, "missing field")
    return _str_value(item[key], key, where)


def _str_value(value: Any, field: str, where: _Where) -> str:
    """Check that a value is a non-empty string and return it."""
    if not isinstance(value, str):
        raise where.error(field, f"must be a string, got {type(value).__name__} {value!r}")
    if not value.strip():
        raise where.error(field, "must not be empty")
    return value


def _optional_str(item: dict[Any, Any], key: str, where: _Where) -> str | None:
    """Return an optional string field, None when absent or null."""
    if item.get(key) is None:
        return None
    return _str_field(item, key, where)


def _choice(item: dict[Any, Any], key: str, allowed: Sequence[str], where: _Where) -> str:
    """Return a string field that must be one of the allowed values."""
    value = _str_field(item, key, where)
    if value not in allowed:
        raise where.error(key, f"{value!r} is not one of {', '.join(allowed)}")
    return value


def _list_field(item: dict[Any, Any], key: str, where: _Where) -> list[Any]:
    """Return a required list field (null is read as an empty list)."""
    value = item[key]
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(key, f"must be a list, got {type(value).__name__}")
    return value


def _mapping(entry: Any, field: str, keys: Iterable[str], where: _Where) -> dict[Any, Any]:
    """Check a list entry is a mapping with exactly the given keys."""
    if not isinstance(entry, dict):
        raise where.error(field, f"must be a mapping, got {type(entry).__name__}")
    wanted = set(keys)
    for key in sorted(wanted - set(entry)):
        raise where.error(f"{field}.{key}", "missing field")
    for key in sorted(str(k) for k in set(entry) - wanted):
        raise where.error(f"{field}.{key}", "unknown field")
    return entry


def _gold_notes(entries: list[Any], where: _Where) -> tuple[GoldNote, ...]:
    """Parse gold_notes entries ({path, grade} with grade 1 or 2)."""
    notes: list[GoldNote] = []
    for i, entry in enumerate(entries):
        field = f"gold_notes[{i}]"
        raw = _mapping(entry, field, ("path", "grade"), where)
        path = _str_value(raw["path"], f"{field}.path", where).strip()
        grade = raw["grade"]
        if isinstance(grade, bool) or grade not in GRADES:
            raise where.error(f"{field}.grade", f"must be 1 or 2, got {grade!r}")
        notes.append(GoldNote(path=path, grade=int(grade)))
    return tuple(notes)


def _distractors(entries: list[Any], where: _Where) -> tuple[str, ...]:
    """Parse the distractor path list."""
    paths: list[str] = []
    for i, entry in enumerate(entries):
        paths.append(_str_value(entry, f"distractors[{i}]", where).strip())
    return tuple(paths)


def _key_facts(entries: list[Any], where: _Where) -> tuple[KeyFact, ...]:
    """Parse key_facts entries ({quote, path})."""
    facts: list[KeyFact] = []
    for i, entry in enumerate(entries):
        field = f"key_facts[{i}]"
        raw = _mapping(entry, field, ("quote", "path"), where)
        quote = _str_value(raw["quote"], f"{field}.quote", where)
        path = _str_value(raw["path"], f"{field}.path", where).strip()
        facts.append(KeyFact(quote=quote, path=path))
    return tuple(facts)


def filter_split(questions: Sequence[Question], split: str | None) -> list[Question]:
    """Return the questions of one split (dev/test), or all of them when split is None."""
    if split is None:
        return list(questions)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    return [q for q in questions if q.split == split]


def check_questions(questions: Sequence[Question], vault: Path) -> list[str]:
    """Check ids are unique, paths exist in the vault and quotes occur verbatim; [] = valid."""
    problems: list[str] = []
    seen: set[str] = set()
    cache: dict[str, str | None] = {}
    for q in questions:
        if q.id in seen:
            problems.append(f"{q.id} id: duplicate id")
        seen.add(q.id)
        for field, rel in _paths(q):
            if _note_text(Path(vault), rel, cache) is None:
                problems.append(f"{q.id} {field}: not in vault: {rel}")
        for i, fact in enumerate(q.key_facts):
            text = _note_text(Path(vault), fact.path, cache)
            if text is not None and not _quote_in(fact.quote, text):
                problems.append(f"{q.id} key_facts[{i}].quote: not found verbatim in {fact.path}")
    return problems


def _paths(q: Question) -> list[tuple[str, str]]:
    """List (field, path) for every vault path a question refers to."""
    out = [(f"gold_notes[{i}].path", g.path) for i, g in enumerate(q.gold_notes)]
    out += [(f"distractors[{i}]", d) for i, d in enumerate(q.distractors)]
    out += [(f"key_facts[{i}].path", f.path) for i, f in enumerate(q.key_facts)]
    if q.current_path is not None:
        out.append(("current_path", q.current_path))
    return out


def _note_text(vault: Path, rel: str, cache: dict[str, str | None]) -> str | None:
    """Read a vault-relative note as UTF-8 (errors replaced); None if absent or outside the vault."""
    if rel not in cache:
        parts = PurePosixPath(rel).parts
        target = vault.joinpath(*parts)
        ok = bool(parts) and not PurePosixPath(rel).is_absolute() and ".." not in parts
        cache[rel] = target.read_text(encoding="utf-8", errors="replace") if ok and target.is_file() else None
    return cache[rel]


def _quote_in(quote: str, text: str) -> bool:
    """Return whether quote occurs verbatim in text, also after CRLF -> LF normalisation."""
    return quote in text or quote in text.replace("\r\n", "\n")
