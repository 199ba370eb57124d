"""MCP limits enforced by kb itself: wall time (server timeout and a client-side deadline), nesting and heap
bombs ended cleanly with the server still answering, responses capped by whole rows, the search echo and
get_note bounded, errors one short line."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from test_mcp import call, server_params, vault, with_client  # noqa: F401  (vault is a fixture)

from kb.mcp_server import ECHO_CHARS, GRACE_S, MAX_ERROR_CHARS, run_with_deadline
from kb.readonly import MAX_NESTING, MAX_QUERY_CHARS, Refused, check_text
from kb.store import Store
from kb.tokens import count_tokens

ALIVE = "MATCH (n:Note) RETURN count(n) AS n"


def test_the_deadline_abandons_a_call_and_terminates_it() -> None:
    """A body that never returns in time: a one-line timeout error after timeout + grace, and the call's tag
    handed to the terminator."""
    terminated: list[str] = []
    started = time.monotonic()
    result = run_with_deadline(lambda: time.sleep(30), 0.5, terminated.append)
    elapsed = time.monotonic() - started
    assert result.is_error and result.content[0].text.startswith("timeout: ")  # type: ignore[union-attr]
    assert "within 0.5 s" in result.content[0].text  # type: ignore[union-attr]
    assert elapsed < 0.5 + GRACE_S + 1.0 and len(terminated) == 1 and terminated[0]
    fine = run_with_deadline(lambda: {"ok": 1}, 0.5, terminated.append)
    assert not fine.is_error and json.loads(fine.content[0].text) == {"ok": 1}  # type: ignore[union-attr]
    assert len(terminated) == 1


def test_nesting_and_length_are_capped_before_the_server_sees_them() -> None:
    for query in (
        "RETURN " + "(" * 3000 + "1" + ")" * 3000,
        "RETURN " + "[" * 400 + "1" + "]" * 400,
        "RETURN " + "{a: " * 100 + "1" + "}" * 100,
    ):
        with pytest.raises(Refused, match="brackets nest"):
            check_text(query)
    check_text("RETURN " + "(" * MAX_NESTING + "1" + ")" * MAX_NESTING)
    check_text("RETURN '" + "(" * 1000 + "' AS s")  # brackets inside a string do not nest
    with pytest.raises(Refused, match=f"at most {MAX_QUERY_CHARS}"):
        check_text("RETURN " + "+".join(["1"] * 20000))


def test_bombs_end_cleanly_and_the_server_answers_the_next_query(
    kb_env: Path,
    vault: Path,  # noqa: F811
    store: Store,
) -> None:
    queries = {
        "slow": "UNWIND range(1, 100000000000) AS x RETURN count(x)",
        "nested": "RETURN " + "(" * 3000 + "1" + ")" * 3000 + " AS n",
        "heap": "RETURN size(reduce(s = 'xxxxxxxx', i IN range(1, 40) | s + s)) AS n",
        "one huge row": "RETURN reduce(s = 'x', i IN range(1, 22) | s + s) AS s, 1 AS n",
        "echoing error": "RETURN toInteger([$v]) AS n",
    }

    async def body(session: ClientSession) -> dict[str, tuple[bool, str, float]]:
        out = {}
        for name, query in queries.items():
            started = time.monotonic()
            params = {"params": {"v": "private? " * 500}} if name == "echoing error" else {}
            is_error, text = await call(session, "cypher", query=query, **params)
            out[name] = (is_error, text, time.monotonic() - started)
            out[name + " then"] = (*await call(session, "cypher", query=ALIVE), 0.0)
        return out

    out = with_client(server_params(kb_env, vault, mcp_timeout_s=2), body)
    notes = store.read("MATCH (n:Note) WHERE NOT n.private RETURN count(n) AS n")[0]["n"]
    for name in queries:
        is_error, text, _ = out[name + " then"]
        assert not is_error and json.loads(text)["rows"] == [{"n": notes}], (name, text)
    # stopped soon after the 2 s timeout (uncapped, the query runs for hours); a loaded machine takes seconds more
    assert out["slow"][0] and out["slow"][1].startswith("timeout: ") and out["slow"][2] < 2 + GRACE_S + 10
    assert out["nested"][0] and out["nested"][1].startswith("refused: brackets nest 3000 deep")
    assert out["heap"][0] and out["heap"][1].startswith("out of memory: "), out["heap"][1]
    huge = json.loads(out["one huge row"][1])
    assert not out["one huge row"][0] and huge["rows"] == [] and huge["rows_cut"] == 1
    is_error, text, _ = out["echoing error"]
    assert is_error and "\n" not in text and len(text) <= MAX_ERROR_CHARS + 1 and text.endswith("…")


def test_search_echo_and_get_note_are_bounded(kb_env: Path, vault: Path) -> None:  # noqa: F811
    question = "licence plate matching " * 50_000  # 1.15 MB
    note_file = vault / "Projects" / "Fuel cards.md"  # grown to 2 MB on disk after the refresh
    note_file.write_text(
        note_file.read_text(encoding="utf-8")
        + "".join(f"Line {i} of a very long note about fuel cards.\n" for i in range(45_000)),
        encoding="utf-8",
    )

    async def body(session: ClientSession) -> dict[str, Any]:
        return {
            "search": await call(session, "search", question=question, mode="hybrid"),
            "note": await call(session, "get_note", path="Projects/Fuel cards.md"),
        }

    out = with_client(server_params(kb_env, vault, mcp_max_tokens=1500), body)
    is_error, text = out["search"]
    payload = json.loads(text)
    assert not is_error and len(payload["query"]) == ECHO_CHARS + 1 and payload["query"].endswith("…")
    assert "its first 2000 were searched" in payload["question_notice"] and count_tokens(text) <= 1500
    assert payload["results"] and payload["results"][0]["path"] == "Projects/Fuel cards.md"
    note = json.loads(out["note"][1])
    assert count_tokens(out["note"][1]) <= 1500 and note["notice"].startswith("the text was cut to ")
    assert "of more than " in note["notice"] and note_file.read_text(encoding="utf-8").startswith(note["text"])
