"""Chinese date phrases dateparser does not read, as the English rules read their counterparts: a year counted back
with its month, part, half or season ("两年前的九月", "三年前的年底", "去年下半年", "去年夏天"), the month of a
written year ("2024年10月"), a quarter of a year ("去年第三季度"), and the last N units up to today ("最近两周")."""

from __future__ import annotations

import datetime as dt
import re

from kb.search.spans import Span, half, latest_quarter, month_span, quarter, year_part

_N = r"[一二两三四五六七八九十\d]{1,3}"
QUARTER = re.compile(r"(?:((?:19|20)\d\d)年|(去年|今年|前年))?第([一二三四1-4])季度")
YEARS_BACK = {"去年": 1, "今年": 0, "前年": 2, "明年": -1}
NUMERALS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
# a year with the month or the part of it asked: "两年前的九月", "三年前的年底", "去年年初", "2024年10月", "前年" (the
# year before last); a year alone written in digits is the explicit-year rule's
PERIOD = re.compile(
    rf"(?:((?:19|20)\d\d)年|(去年|今年|前年|明年)|({_N})年前的?)"
    rf"(?:(年底|年末|底|末)|(年初|初)|({_N})月(?:份)?)?(?!第)"  # "去年第三季度" is QUARTER's
)
HALF = re.compile(rf"(去年|今年|前年|明年|{_N}年前的?)([上下])半年")
SEASON = re.compile(rf"(?:((?:19|20)\d\d)年|(去年|今年|前年|明年)|({_N})年前的?)([春夏秋冬])[天季]")
SEASON_START = {"春": 3, "夏": 6, "秋": 9, "冬": 12}
# "最近两周", "过去三个月": the last N units up to today, as LAST_N reads "the past two weeks"
LAST_N = re.compile(rf"(?:最近|过去)的?({_N})(天|周|个星期|个月|年)")
LAST_N_UNITS = {"天": "d", "周": "w", "个星期": "w", "个月": "m", "年": "y"}


def number(text: str) -> int | None:
    """A number of one to three Chinese numerals or digits ("三", "两", "十二", "12"); None if it is none."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        if (tens and tens not in NUMERALS) or (ones and ones not in NUMERALS):
            return None
        return (NUMERALS[tens] if tens else 1) * 10 + (NUMERALS[ones] if ones else 0)
    return NUMERALS.get(text)


def year_of(ref: str, today: dt.date) -> int | None:
    """The year a word names: "去年", "今年", "前年", "明年", or "三年前" / "三年前的"."""
    if ref in YEARS_BACK:
        return today.year - YEARS_BACK[ref]
    n = number(ref.removesuffix("的").removesuffix("年前"))
    return None if n is None else today.year - n


def periods(text: str, today: dt.date) -> list[tuple[re.Match[str], Span]]:
    """Halves, seasons, then months and parts of a year, each with the span it names, in that order (the first
    reading of a stretch of text wins)."""
    out: list[tuple[re.Match[str], Span]] = []
    for m in HALF.finditer(text):
        year = year_of(m.group(1), today)
        if year is not None:
            out.append((m, half(year, 1 if m.group(2) == "上" else 2)))
    for m in SEASON.finditer(text):
        year = int(m.group(1)) if m.group(1) else year_of(m.group(2) or m.group(3) + "年前", today)
        if year is not None:
            out.append((m, month_span(year, SEASON_START[m.group(4)], 3)))
    for m in PERIOD.finditer(text):
        span = _period(m, today)
        if span is not None:
            out.append((m, span))
    return out


def _period(m: re.Match[str], today: dt.date) -> Span | None:
    """The span a PERIOD match names, or None (a bare "2024年" is the explicit year's; a month outside 1-12)."""
    digits, word, back, end, start, month = m.groups()
    if digits and not (end or start or month):
        return None
    year = int(digits) if digits else year_of(word or back + "年前", today)
    if year is None:
        return None
    if month:
        n = number(month)
        return month_span(year, n, 1) if n and 1 <= n <= 12 else None
    if end or start:
        return year_part(year, "start" if start else "end")
    return month_span(year, 1, 12)


def quarters(text: str, today: dt.date) -> list[tuple[re.Match[str], Span]]:
    """ "2024年第三季度", "去年第三季度", "第三季度" (the latest such quarter begun by today)."""
    out = []
    for m in QUARTER.finditer(text):
        q = "一二三四".index(m.group(3)) + 1 if not m.group(3).isdigit() else int(m.group(3))
        if m.group(1):
            year = int(m.group(1))
        else:
            year = today.year - YEARS_BACK[m.group(2)] if m.group(2) else latest_quarter(q, today)
        out.append((m, quarter(year, q)))
    return out


def last_n(text: str) -> list[tuple[re.Match[str], int | None, str]]:
    """Each "最近N天/周/个月/年" with its count and unit (d, w, m or y)."""
    return [(m, number(m.group(1)), LAST_N_UNITS[m.group(2)]) for m in LAST_N.finditer(text)]
