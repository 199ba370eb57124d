"""Graph and auto search on a graph built without the knowledge layer answer with hybrid's notes, never a
traceback (the entity index exists from the first refresh)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.store import Store


def test_graph_mode_on_a_graph_with_no_extraction(
    kb_env: Path, example_vault: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    built = CliRunner().invoke(cli, ["refresh", "--vault", str(example_vault), "--no-extract", "--json"])
    assert built.exit_code == 0, built.output
    question = "How many customers does Lumen Ledger have?"
    hybrid = json.loads(CliRunner().invoke(cli, ["search", question, "--json"]).output)
    for mode in ("graph", "auto"):
        result = CliRunner().invoke(cli, ["search", question, "--mode", mode, "--json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert [r["path"] for r in data["results"]] == [r["path"] for r in hybrid["results"]]
        assert data.get("graph", {}).get("lines", []) == []


def test_the_warm_up_searches_nothing_in_an_empty_graph(store: Store) -> None:
    """`kb db start` on a server that holds no vault yet plans nothing (its full-text indexes may not exist)."""
    from kb.search.warm import warm_searches

    assert not store.holds_chunks()
    assert warm_searches(store) is None
