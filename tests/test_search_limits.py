"""Any text is a valid query: huge, hostile, control-character, empty and CJK questions in every mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from conftest import example_graph

from kb.cli import cli
from kb.embed.onnx import OnnxEmbedder
from kb.search.hybrid import MAX_TERMS, lucene_query, query_terms
from kb.search.modes import MODES, run_search
from kb.server import ServerInfo
from kb.store import Connection, Store

EMB = OnnxEmbedder()
WORDS_5000 = " ".join(f"term{i}x" for i in range(5000))
CJK_NOTE = "# 燃料卡会议\n\n我们决定为司机使用燃料卡，每张卡绑定一个车牌。\n"


@pytest.fixture(scope="module")
def built(
    neo4j_server: ServerInfo, connection: Connection, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Store]:
    """Built once, with a Chinese note: every test here only reads the graph."""
    root = tmp_path_factory.mktemp("limits")
    with example_graph(neo4j_server, connection, root, {"Inbox/燃料卡会议.md": CJK_NOTE}) as store:
        yield store


def test_terms_are_bounded_and_deterministic() -> None:
    terms = query_terms("AutoMatch match rate " + WORDS_5000)
    assert len(terms) == MAX_TERMS and terms[:3] == ["automatch", "match", "rate"]
    assert terms == query_terms("AutoMatch match rate " + WORDS_5000)
    assert query_terms("x" * 1_000_000) == ["x" * 100]
    assert query_terms("燃料卡 and ok") == ["燃", "料", "卡", "ok"]
    assert query_terms("the of and") == ["the", "of", "and"]  # only question words: keep them
    assert lucene_query("\x00\x1b\u200b \t\n") is None and lucene_query("") is None


HOSTILE = {
    "5,000 distinct words": "What is the AutoMatch match rate? " + WORDS_5000,
    "1.6 MB": ("AutoMatch match rate " * 80_000)[:1_600_000],
    "1.6 MB of one word": "a" * 1_600_000,
    "Lucene syntax": 'AutoMatch: "rate AND (OR NOT) [x TO *] {y} ~2 ^3 \\ / && || ! ? - + ',
    "control characters": "AutoMatch\x00 match\x1b[31m rate\x07\u200b\ufeff\r\n\t",
    "empty": "",
    "whitespace": " \t\n\r  ",
    "CJK": "燃料卡",
}


@pytest.mark.parametrize("mode", MODES)
def test_any_text_is_a_valid_query(built: Store, mode: str) -> None:
    for name, question in HOSTILE.items():
        result = run_search(built, EMB, question, mode=mode, k=5).to_json()
        assert isinstance(result["results"], list), name
        if name in ("5,000 distinct words", "Lucene syntax", "control characters"):
            assert "wiki/entities/AutoMatch.md" in [r["path"] for r in result["results"]], name
    cjk = run_search(built, EMB, "燃料卡", mode=mode, k=3).to_json()
    assert cjk["results"][0]["path"] == "Inbox/燃料卡会议.md"


def test_cli_takes_a_huge_question(built: Store) -> None:
    result = CliRunner().invoke(cli, ["search", "AutoMatch match rate " + WORDS_5000, "--json"])
    assert result.exit_code == 0, result.output
