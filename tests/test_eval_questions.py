"""Tests for eval.questions on tiny YAML sets and vaults, plus the shared dev set."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kb.eval.questions import (
    CATEGORIES,
    GoldNote,
    KeyFact,
    QuestionSetError,
    check_questions,
    filter_split,
    load_questions,
)

SHARED = Path(__file__).parents[2] / "shared"

BASE: dict[str, Any] = {
    "questions": [
        {
            "id": "q01",
            "category": "temporal",
            "split": "dev",
            "question": "How many customers now?",
            "gold_notes": [{"path": "Metrics/Now.md", "grade": 2}, {"path": "Clients/X.md", "grade": 1}],
            "distractors": ["Metrics/Old.md"],
            "key_facts": [
                {"quote": "130 paying customers", "path": "Metrics/Now.md"},
                {"quote": "line one\nline two", "path": "Clients/X.md"},
            ],
            "current_path": "Metrics/Now.md",
            "answer": "130.",
        },
        {
            "id": "q02",
            "category": "unanswerable",
            "split": "test",
            "question": "Who was counsel?",
            "gold_notes": [],
            "distractors": [],
            "key_facts": [],
            "answer": "not in the vault",
        },
    ]
}


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    """A three-note vault; Clients/X.md has CRLF line endings."""
    root = tmp_path / "vault"
    (root / "Metrics").mkdir(parents=True)
    (root / "Clients").mkdir()
    (root / "Metrics/Now.md").write_text("We have 130 paying customers.\n", encoding="utf-8")
    (root / "Metrics/Old.md").write_text("We had 12 customers.\n", encoding="utf-8")
    (root / "Clients/X.md").write_bytes(b"# X\r\nline one\r\nline two\r\n")
    return root


def write_set(tmp_path: Path, data: dict[str, Any]) -> Path:
    """Write a question set to YAML and return its path."""
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def with_change(field: str, value: Any, index: int = 0) -> dict[str, Any]:
    """Copy BASE with one field of one question replaced (or removed when value is ...)."""
    data = copy.deepcopy(BASE)
    if value is ...:
        del data["questions"][index][field]
    else:
        data["questions"][index][field] = value
    return data


def test_valid_set_loads_and_checks(tmp_path: Path, vault: Path) -> None:
    """A valid set parses into typed objects and reports no problems (CRLF quote accepted)."""
    questions = load_questions(write_set(tmp_path, BASE))
    assert [q.id for q in questions] == ["q01", "q02"]
    q1 = questions[0]
    assert q1.gold_notes == (GoldNote("Metrics/Now.md", 2), GoldNote("Clients/X.md", 1))
    assert q1.key_facts[0] == KeyFact("130 paying customers", "Metrics/Now.md")
    assert q1.gold() == {"Metrics/Now.md": 2, "Clients/X.md": 1}
    assert q1.current_path == "Metrics/Now.md" and questions[1].current_path is None
    assert check_questions(questions, vault) == []


def test_filter_split(tmp_path: Path) -> None:
    """filter_split selects by split; None keeps everything."""
    questions = load_questions(write_set(tmp_path, BASE))
    assert [q.id for q in filter_split(questions, "dev")] == ["q01"]
    assert [q.id for q in filter_split(questions, "test")] == ["q02"]
    assert len(filter_split(questions, None)) == 2
    with pytest.raises(ValueError):
        filter_split(questions, "train")


def test_missing_path_reported(tmp_path: Path, vault: Path) -> None:
    """A gold path absent from the vault is named with its field."""
    data = with_change("distractors", ["Metrics/Gone.md"])
    problems = check_questions(load_questions(write_set(tmp_path, data)), vault)
    assert problems == ["q01 distractors[0]: not in vault: Metrics/Gone.md"]


def test_path_outside_vault_reported(tmp_path: Path, vault: Path) -> None:
    """A path escaping the vault is not accepted even if the file exists."""
    (vault.parent / "outside.md").write_text("x", encoding="utf-8")
    data = with_change("current_path", "../outside.md")
    problems = check_questions(load_questions(write_set(tmp_path, data)), vault)
    assert problems == ["q01 current_path: not in vault: ../outside.md"]


def test_non_verbatim_quote_reported(tmp_path: Path, vault: Path) -> None:
    """A quote that differs from the note text is reported."""
    facts = [{"quote": "130 paying  customers", "path": "Metrics/Now.md"}]
    problems = check_questions(load_questions(write_set(tmp_path, with_change("key_facts", facts))), vault)
    assert problems == ["q01 key_facts[0].quote: not found verbatim in Metrics/Now.md"]


def test_duplicate_id_reported(tmp_path: Path, vault: Path) -> None:
    """A repeated id is reported once per repeat."""
    data = with_change("id", "q01", index=1)
    problems = check_questions(load_questions(write_set(tmp_path, data)), vault)
    assert problems == ["q01 id: duplicate id"]


def test_bad_category_raises(tmp_path: Path) -> None:
    """An unknown category names the file, the id and the field."""
    path = write_set(tmp_path, with_change("category", "trivia"))
    with pytest.raises(QuestionSetError) as info:
        load_questions(path)
    message = str(info.value)
    assert str(path) in message and "q01 category" in message and "trivia" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("answer", ..., "q01 answer: missing field"),
        ("split", "train", "q01 split:"),
        ("gold_notes", [{"path": "Metrics/Now.md", "grade": 3}], "q01 gold_notes[0].grade: must be 1 or 2"),
        ("gold_notes", [{"path": "Metrics/Now.md", "grade": True}], "q01 gold_notes[0].grade: must be 1 or 2"),
        ("gold_notes", [{"path": "Metrics/Now.md"}], "q01 gold_notes[0].grade: missing field"),
        ("key_facts", [{"quote": 130, "path": "Now.md"}], "q01 key_facts[0].quote: must be a string"),
        ("distractors", "Metrics/Old.md", "q01 distractors: must be a list"),
        ("current_paht", "x.md", "q01 current_paht: unknown field"),
        ("id", ..., "questions[0] id: missing field"),
    ],
)
def test_structural_errors(tmp_path: Path, field: str, value: Any, expected: str) -> None:
    """Structural faults raise QuestionSetError with a one-line, located message."""
    path = write_set(tmp_path, with_change(field, value))
    with pytest.raises(QuestionSetError) as info:
        load_questions(path)
    assert expected in str(info.value) and str(path) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_bad_top_level_and_yaml(tmp_path: Path) -> None:
    """A missing questions list or broken YAML is a QuestionSetError."""
    path = tmp_path / "bad.yaml"
    path.write_text("items: []\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match="questions"):
        load_questions(path)
    path.write_text("questions: [\n", encoding="utf-8")
    with pytest.raises(QuestionSetError):
        load_questions(path)


def test_categories() -> None:
    """The nine categories of the schema are known."""
    assert len(CATEGORIES) == 9 and "modality_trap" in CATEGORIES


def test_shared_dev_set_is_valid() -> None:
    """The shared dev set loads and every path and quote checks out against the shared vault."""
    dev = SHARED / "eval" / "dev.yaml"
    if not dev.is_file() or not (SHARED / "vault").is_dir():
        pytest.skip("shared/eval/dev.yaml or shared/vault not available")
    questions = load_questions(dev)
    assert questions and all(q.split == "dev" for q in questions)
    assert check_questions(questions, SHARED / "vault") == []


EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize(
    ("questions", "vault", "count"),
    [
        ("questions.yaml", "vault", None),
        ("longnotes-questions.yaml", "longnotes", None),
        ("conversations-questions.yaml", "conversations", 50),
        ("wikishort-questions.yaml", "wikishort", 50),
    ],
)
def test_project_question_sets_match_their_vaults(questions: str, vault: str, count: int | None) -> None:
    """Every gold note, distractor and current note exists and every key fact is quoted verbatim."""
    loaded = load_questions(EXAMPLES / questions)
    assert count is None or len(loaded) == count
    assert check_questions(loaded, EXAMPLES / vault) == []
