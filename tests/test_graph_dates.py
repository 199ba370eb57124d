"""Graph lines obey --since/--until like the chunks do."""

from kb.search.graph import in_date_range
from kb.search.hybrid import Filters
from kb.search.lines import Line


def line(date: str | None) -> Line:
    return Line("claim", f"x [{date}]", "n.md", date)


def test_lines_outside_the_date_range_are_left_out() -> None:
    lines = [line("2023-05-01"), line("2024-02-01"), line("2025-01-01"), line(None)]
    assert in_date_range(lines, None) == lines
    assert in_date_range(lines, Filters(folder="x")) == lines
    kept = in_date_range(lines, Filters(since="2024-01-01", until="2024-12-31"))
    assert [ln.date for ln in kept] == ["2024-02-01"]
    assert [ln.date for ln in in_date_range(lines, Filters(since="2024-01-01"))] == ["2024-02-01", "2025-01-01"]
