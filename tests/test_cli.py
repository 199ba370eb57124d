"""The CLI end to end with CliRunner: exit codes, JSON contracts and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.cypher import SCHEMA_VERSION


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_refresh_json_then_nothing_to_do(kb_env: Path, example_vault: Path, store: object) -> None:
    code, out = invoke("refresh", "--vault", str(example_vault), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert len(data["added"]) == 26 and data["counts"]["pending"] == 0
    assert data["embedded"] == data["counts"]["passages"]
    assert data["skipped"][0]["path"] == "Archive/.Investor letter draft.md.icloud"
    code, out = invoke("refresh", "--vault", str(example_vault))
    assert code == 0 and out.startswith(f"No change in {example_vault.resolve()}")
    assert (
        "wrote nothing" in out
        and "Ledgerly (note, 1 from Archive/Retrospective - year one.md; matches an alias"
        " of wiki/entities/Lumen Books.md)"
        in out
    )
    code, out = invoke("status", "--json")
    status = json.loads(out)
    assert code == 0 and status["counts"]["notes"] == 26 and status["embedder"].startswith("onnx:")
    vectors = status["vector_file"]  # the public passages' vectors, with the int8 codes; too few for the shortlist
    assert vectors["state"] == "current" and vectors["codes"] and not vectors["shortlist"]
    assert 0 < vectors["passages"] < data["counts"]["passages"] and vectors["bytes"] > 0  # private ones stay out
    code, out = invoke("status")
    assert f"Vector file: {vectors['passages']:,} passages" in out and "(an exact scan)" in out


def test_search_json_contract(kb_env: Path, example_vault: Path, store: object) -> None:
    invoke("refresh", "--vault", str(example_vault), "--json")
    code, out = invoke("search", "who led the seed round?", "--k", "5", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["mode"] == "hybrid" and len(data["results"]) == 5
    first = data["results"][0]
    assert set(first) >= {"rank", "path", "date", "score", "keyword_rank", "vector_rank", "chunks"}
    assert set(first["chunks"][0]) >= {"id", "breadcrumb", "date", "text", "score"}
    code, out = invoke("search", "pricing", "--folder", "Company/Decisions", "--json")
    assert code == 0 and {r["path"].split("/")[1] for r in json.loads(out)["results"]} == {"Decisions"}


def test_errors_are_one_line_with_the_fix(kb_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = invoke("refresh", "--vault", str(tmp_path / "nope"))
    assert code == 1 and out.strip() == f"Error: vault {tmp_path / 'nope'} is not a folder: check --vault / KB_VAULT"
    code, out = invoke("search", "x", "--since", "2024-02-30")
    assert code == 1 and out.strip() == "Error: --since '2024-02-30' is not a date: use YYYY-MM-DD"
    monkeypatch.setenv("NEO4J_PASSWORD", "wrong-password")
    code, out = invoke("status")
    assert code == 1 and "refused the login for user 'neo4j'" in out and "NEO4J_PASSWORD" in out
    assert len(out.strip().splitlines()) == 1
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    code, out = invoke("status")
    assert code == 1 and out.startswith("Error: cannot reach Neo4j at bolt://127.0.0.1:1")
    assert "kb db start" in out and len(out.strip().splitlines()) == 1


def test_unknown_embedder_is_named(kb_env: Path, example_vault: Path) -> None:
    code, out = invoke("refresh", "--vault", str(example_vault), "--embedder", "word2vec")
    assert code == 1 and "embedder = 'word2vec' is unknown" in out


def test_db_init_is_idempotent(kb_env: Path, store: object) -> None:
    for _ in range(2):
        code, out = invoke("db", "init", "--json")
        assert code == 0, out
    data = json.loads(out)
    assert data["schema_version"] == SCHEMA_VERSION
    assert "chunk_text" in data["indexes"] and "note_path" in data["indexes"]


def test_eval_run_on_several_sets_reports_each_as_alone_and_a_summary(
    kb_env: Path, example_vault: Path, store: object, tmp_path: Path
) -> None:
    import yaml

    invoke("refresh", "--vault", str(example_vault), "--json")
    source = Path(__file__).resolve().parents[1] / "examples" / "questions.yaml"
    items = yaml.safe_load(source.read_text(encoding="utf-8"))["questions"]
    a, b = tmp_path / "first.yaml", tmp_path / "second.yaml"
    a.write_text(yaml.safe_dump({"questions": items[:3]}, allow_unicode=True), encoding="utf-8")
    b.write_text(yaml.safe_dump({"questions": items[3:6]}, allow_unicode=True), encoding="utf-8")
    common = ["--vault", str(example_vault), "--modes", "hybrid,naive", "--today", "2026-12-01", "--json"]
    code, out = invoke("eval", "run", str(a), str(b), "--out", str(tmp_path / "both"), *common)
    assert code == 0, out
    both = json.loads(out)
    assert [Path(s["out"]).name for s in both["sets"]] == ["first", "second"]
    summary = Path(both["summary"]).read_text(encoding="utf-8")
    assert (
        "| first | hybrid | 3 |" in summary
        and "| second | naive | 3 |" in summary
        and "| all | hybrid | 6 |" in summary
    )
    assert (tmp_path / "both" / "second" / "report.md").is_file()
    code, out = invoke("eval", "run", str(a), "--out", str(tmp_path / "alone"), *common)
    alone = json.loads(out)
    assert "sets" not in alone and Path(alone["report"]).parent == tmp_path / "alone"

    def scores(rows: list[dict[str, object]]) -> list[tuple[object, object, object]]:
        return [(r["qid"], r["mode"], r["metrics"]) for r in rows]

    assert scores(both["sets"][0]["rows"]) == scores(alone["rows"])  # a set scores the same beside another
    twin = tmp_path / "other" / "first.yaml"
    twin.parent.mkdir()
    twin.write_text(a.read_text(encoding="utf-8"), encoding="utf-8")
    code, out = invoke("eval", "run", str(a), str(twin), *common)
    assert code == 1 and "another question set is named 'first' too" in out
