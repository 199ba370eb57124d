"""Statement parameters reach Neo4j whole, while the driver's debug line for each RUN shows only their sizes."""

from __future__ import annotations

import logging

import pytest

from kb.store import Store, unlogged

SECRET = "private-text-7f3a"


def test_unlogged_keeps_values_and_shows_sizes() -> None:
    params = {"rows": [{"text": SECRET}], "p": {"id": SECRET, "ids": [1, 2]}, "limit": 3, "q": "word"}
    sent = unlogged(params)
    assert sent == params  # the same values on the wire
    assert repr(sent["rows"]) == "<1 items>"
    assert repr(sent["p"]) == "<map of id, ids>"
    assert SECRET not in repr(sent) and sent["limit"] == 3 and sent["q"] == "word"


@pytest.mark.parametrize("how", ["run", "run_batch", "run_autocommit", "read"])
def test_every_path_sends_rows_whole_and_logs_no_text(store: Store, caplog: pytest.LogCaptureFixture, how: str) -> None:
    rows = [{"id": f"n{i}", "text": f"{SECRET} {i}", "vec": [0.5] * 8} for i in range(300)]
    write = "UNWIND $rows AS r CREATE (:Probe {id: r.id, text: r.text, vec: r.vec})"
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        if how == "run":
            store.run(write, rows=rows)
        elif how == "run_batch":
            store.run_batch([(write, {"rows": rows})])
        elif how == "run_autocommit":
            store.run_autocommit(write, rows=rows)
        else:
            store.run(write, rows=rows)
            asked = [f"{SECRET} 1", f"{SECRET} 2"]  # the read's own parameters hold the text too
            got = store.read("MATCH (p:Probe) WHERE p.text IN $texts RETURN p.text AS t ORDER BY t", texts=asked)
            assert [r["t"] for r in got] == [f"{SECRET} 1", f"{SECRET} 2"]
    runs = [r.getMessage() for r in caplog.records if "C: RUN" in r.getMessage()]
    assert runs, "the driver logged no RUN line at DEBUG: the check below would prove nothing"
    assert not any(SECRET in m for m in runs)
    back = store.run("MATCH (p:Probe) RETURN count(p) AS n, sum(size(p.vec)) AS v, min(p.text) AS t")
    assert back == [{"n": 300, "v": 2400, "t": f"{SECRET} 0"}]
