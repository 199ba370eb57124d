"""The time prior as pure functions (no server), on questions about an imagined bakery chain, unlike the dev set's."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from result_helpers import note

from kb.search.question import parse
from kb.search.results import NoteResult
from kb.search.timeprior import TimePrior, by_time, date_keys, latest, time_reading, with_time

TODAY = dt.date(2026, 12, 1)
PRIOR = TimePrior()


def notes(*dated: tuple[str, str | None, str | None]) -> list[NoteResult]:
    return [note(p, n, date=d, updated=u) for n, (p, d, u) in enumerate(dated, start=1)]


def paths(ns: list[NoteResult]) -> list[str]:
    return [n.path for n in ns]


def test_now_lifts_a_newer_note_over_a_close_older_one() -> None:
    ranked = notes(
        ("2023 price list.md", "2023-02-01", None),
        ("2026 price list.md", "2026-03-01", None),
        ("2024 flour costs.md", "2024-05-01", None),
    )
    out = by_time(ranked, parse("What does a rye loaf cost now?", TODAY), None, PRIOR)
    assert paths(out) == ["2026 price list.md", "2023 price list.md", "2024 flour costs.md"]
    assert [n.rank for n in out] == [1, 2, 3]


def test_two_notes_in_opposite_orders_keep_the_ranking() -> None:
    """Equal evidence either way: the ranking's order stands (ties never depend on dates alone)."""
    ranked = notes(("2023 price list.md", "2023-02-01", None), ("2026 price list.md", "2026-03-01", None))
    assert by_time(ranked, parse("What does a rye loaf cost now?", TODAY), None, PRIOR) == ranked


def test_now_reads_a_living_page_by_its_updated_date() -> None:
    page = note("Ovens.md", date="2022-01-01", updated="2026-10-01")
    assert latest(page) == dt.date(2026, 10, 1)
    assert latest(page, as_of="2025-01-01") == dt.date(2022, 1, 1)  # an edit after --as-of is not known then
    ranked = [
        note("Oven memo.md", 1, date="2019-06-01"),
        note("Ovens.md", 2, date="2022-01-01", updated="2026-10-01"),
        note("Oven quotes.md", 3, date="2024-01-01"),
    ]
    out = by_time(ranked, parse("Which oven do we bake with now?", TODAY), None, PRIOR)
    assert paths(out)[0] == "Ovens.md"
    plain = [ranked[0], replace(ranked[1], updated=None), ranked[2]]
    assert paths(by_time(plain, parse("Which oven do we bake with now?", TODAY), None, PRIOR))[0] == "Oven memo.md"


def test_a_period_prefers_notes_written_in_it_or_reporting_on_it_then_after() -> None:
    q = parse("How many shops did we run in Q3 2024?", TODAY)
    ranked = notes(
        ("2024-06 plan.md", "2024-06-20", None),
        ("2025 review.md", "2025-06-01", None),
        ("Q3 board update.md", "2024-10-10", None),
        ("August ops.md", "2024-08-15", None),
        ("Holiday memo.md", "2024-11-30", None),
    )
    keys = date_keys(ranked, q, None, PRIOR)
    assert keys is not None
    assert keys[3] == 0.0  # inside the quarter
    assert keys[2] == 0.0  # ten days after it: a report on the quarter counts as written in it
    assert 0 < keys[4] < keys[0]  # sixty days after beats eleven days before (a note cannot record what came later)
    assert keys[4] < keys[1]
    # the report passes the plan written before the quarter; the note written in it passes the review
    assert paths(by_time(ranked, q, None, PRIOR)) == [
        "Q3 board update.md",
        "2024-06 plan.md",
        "August ops.md",
        "2025 review.md",
        "Holiday memo.md",
    ]
    strict = TimePrior(grace=0)
    strict_keys = date_keys(ranked, q, None, strict)
    assert strict_keys is not None and 0 < strict_keys[2] < strict_keys[4]


def test_the_ranking_still_counts() -> None:
    """A note far down the ranking is not lifted over the first by its date alone."""
    ranked = notes(*((f"n{i}.md", f"2020-01-{i + 1:02d}", None) for i in range(9)), ("new.md", "2026-11-01", None))
    out = by_time(ranked, parse("What does a rye loaf cost now?", TODAY), None, PRIOR)
    assert paths(out)[0] == "n0.md" and paths(out).index("new.md") < 9


def test_only_the_first_notes_move() -> None:
    ranked = notes(*((f"n{i}.md", f"2020-01-{i + 1:02d}", None) for i in range(12)))
    out = by_time(ranked, parse("What does a rye loaf cost now?", TODAY), None, TimePrior(depth=4))
    assert paths(out)[4:] == paths(ranked)[4:]
    assert sorted(paths(out)[:4]) == paths(ranked)[:4] and paths(out)[:4] != paths(ranked)[:4]


def test_a_question_asking_no_time_keeps_its_order() -> None:
    ranked = notes(("old.md", "2021-01-01", None), ("new.md", "2026-01-01", None))
    q = parse("Why did we close the harbour shop?", TODAY)
    assert time_reading(q, None) is None
    assert by_time(ranked, q, None, PRIOR) == ranked


def test_undated_notes_go_last_in_time_and_the_reading_says_what_was_done() -> None:
    ranked = notes(("undated.md", None, None), ("older.md", "2020-01-01", None), ("dated.md", "2024-01-01", None))
    q = parse("Is the harbour shop still open?", TODAY)
    keys = date_keys(ranked, q, None, PRIOR)
    assert keys is not None and keys[0] == float("inf") and keys[2] < keys[1]
    assert paths(by_time(ranked, q, None, PRIOR)) == ["undated.md", "dated.md", "older.md"]
    assert time_reading(q, None) == "time: newer notes first"
    assert time_reading(q, "2025-01-01") == "time: newer notes first (up to 2025-01-01)"
    period = parse("Wie viele Filialen hatten wir im dritten Quartal 2024?", TODAY)
    assert time_reading(period, None) == "time: notes written in 2024-07-01..2024-09-30, then just after it, first"


def test_without_happened_only_a_question_naming_its_time_moves() -> None:
    """TimePrior(happened=False), hybrid mode's: whether something happened, asked with no period and not about
    now, keeps the ranking; about now or a period the notes still move."""
    ranked = notes(("2021 plan.md", "2021-01-01", None), ("2026 review.md", "2026-01-01", None), ("x.md", None, None))
    quiet = TimePrior(happened=False)
    happened = parse("Did the harbour shop ever open on Sundays?", TODAY)
    assert happened.intent == "happened" and not happened.now and happened.period is None
    assert date_keys(ranked, happened, None, quiet) is None and time_reading(happened, None, quiet) is None
    assert by_time(ranked, happened, None, quiet) == ranked
    assert time_reading(happened, None) == "time: newer notes first"  # the graph's default prior reads it
    now = parse("Is the harbour shop open on Sundays now?", TODAY)
    keys = date_keys(ranked, now, None, quiet)
    assert keys is not None and keys == date_keys(ranked, now, None, PRIOR) and keys[1] < keys[0]
    assert time_reading(now, None, quiet) == "time: newer notes first"
    assert time_reading(happened, "2025-01-01", quiet) == "time: newer notes first (up to 2025-01-01)"


def test_a_period_no_ranked_note_reaches_keeps_the_order_and_says_so() -> None:
    """Notes all written before the period asked about cannot record it: their dates say nothing (a vault that
    ends before it, or "in January" read as this year's in an older vault), so the ranking stands."""
    ranked = notes(("2025-01 journal.md", "2025-01-31", None), ("2025-03 standups.md", "2025-03-31", None))
    q = parse("What went wrong with the ovens in January?", TODAY)
    assert q.period is not None and q.period.start == "2026-01-01"
    assert date_keys(ranked, q, None, PRIOR) is None
    out, said = with_time(ranked, q, None, PRIOR)
    assert out == ranked and said == "time: no note written in 2026-01-01..2026-01-31 or after it, order kept"
    later = [*ranked, note("2026-02 journal.md", 3, date="2026-02-28")]
    out, said = with_time(later, q, None, PRIOR)
    assert said is not None and said.startswith("time: notes written in 2026-01-01") and paths(out) != paths(later)
    assert with_time(ranked, parse("Why did the ovens fail?", TODAY), None, PRIOR) == (ranked, None)
