"""Calendar spans the date rules read phrases as: quarters, runs of months, a year's parts, months and quarters
counted back from today. Pure arithmetic, both ends inclusive."""

from __future__ import annotations

import calendar
import datetime as dt

Span = tuple[dt.date, dt.date]
MIDDLE_WORDS = frozenset(("mid", "middle of", "mitte", "mediados"))
START_WORDS = frozenset(
    ("start", "beginning", "early", "going into", "heading into", "anfang", "début", "principios", "初")
)


def quarter(year: int, q: int) -> Span:
    end_month = q * 3
    return dt.date(year, end_month - 2, 1), dt.date(year, end_month, calendar.monthrange(year, end_month)[1])


def latest_quarter(q: int, today: dt.date) -> int:
    """The year of the latest quarter q that has begun by today."""
    return today.year if quarter(today.year, q)[0] <= today else today.year - 1


def month_span(year: int, first: int, months: int) -> Span:
    """`months` months from `first` of `year` (December's winter runs into the next year)."""
    last_year, last = divmod(year * 12 + first - 1 + months - 1, 12)
    return dt.date(year, first, 1), dt.date(last_year, last + 1, calendar.monthrange(last_year, last + 1)[1])


def half(year: int, n: int) -> Span:
    """The first (1) or second (2) half of `year`."""
    return month_span(year, 1 + 6 * (n - 1), 6)


def months_back(today: dt.date, n: int) -> Span:
    """The calendar month `n` months before today's."""
    y, mo = divmod(today.year * 12 + today.month - 1 - n, 12)
    return month_span(y, mo + 1, 1)


def quarters_back(today: dt.date, n: int) -> Span:
    """The calendar quarter `n` quarters before today's."""
    q = today.year * 4 + (today.month - 1) // 3 - n
    return quarter(q // 4, q % 4 + 1)


def last_season(first: int, today: dt.date) -> Span:
    """The season starting in month `first` the year before this one: "this summer" is this year's, even in
    December, so "last summer" is last year's (and "last winter", in March or in December, the one that began
    last December)."""
    return month_span(today.year - 1, first, 3)


def latest_season(first: int, today: dt.date) -> Span:
    """The latest season starting in month `first` that was over by `today` ("this past summer")."""
    year = today.year
    while month_span(year, first, 3)[1] >= today:
        year -= 1
    return month_span(year, first, 3)


def year_part(year: int, word: str) -> Span:
    """A year's start (its first quarter), its middle (June, as a mid-year), its late part (the fourth) or its end
    (December)."""
    word = word.lower()
    if word in START_WORDS:
        return month_span(year, 1, 3)
    if word in MIDDLE_WORDS:
        return month_span(year, 6, 1)
    return quarter(year, 4) if word == "late" else month_span(year, 12, 1)
