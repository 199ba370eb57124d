"""Dates in a question, read as ranges against an injectable `today`: explicit years, quarters and mid-years
by small named rules, relative phrases ("last week", "two years ago", "letztes Jahr", "去年") by dateparser in the
question's language, "since X" as an open range up to today."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from kb.search import dates_zh
from kb.search.spans import (
    half,
    last_season,
    latest_quarter,
    latest_season,
    month_span,
    months_back,
    quarter,
    quarters_back,
    year_part,
)

# the languages dateparser is asked to read; a question in another language keeps only the explicit rules
PARSED_LANGUAGES = ("en", "de", "fr", "es", "zh")
YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
# Q3 2024 / Q3 last year / 2024-Q3 / 2024 Q3; the year may be missing (then the latest past such quarter)
QUARTER = re.compile(r"(?i)(?:(?<!\d)((?:19|20)\d\d)[\s-]*)?\bQ([1-4])\b(?:[\s-]*((?:19|20)\d\d)(?!\d))?")
LAST_QUARTER = re.compile(
    r"(?i)\b(last quarter|previous quarter|letzte[sn]? quartal|vorige[sn]? quartal|"
    r"dernier trimestre|trimestre dernier|último trimestre)\b|上个?季度|上一季度"
)
THIS_QUARTER = re.compile(r"(?i)\b(this quarter|dieses quartal|ce trimestre|este trimestre)\b|本季度|这个季度")
# "mid-2023", "halfway through 2023", "the middle of 2023", "Mitte 2023", "mi-2023", "2023年年中": the middle of
# a year, read as June (the half-year's end)
MID_YEAR = re.compile(
    r"(?i)\b(?:mid-?|(?:half|mid)way through\s+|middle of\s+|mitte\s+|mi-)((?:19|20)\d\d)(?!\d)|"
    r"((?:19|20)\d\d)年年?中"
)
# a year named in words: "last year", "dieses Jahr", "two years ago", "vor zwei Jahren", "il y a deux ans", "the year
# before last"; each phrase with how many years before today's it is (YEARS_AGO: a count)
RELATIVE_YEAR: dict[str, int] = {
    **dict.fromkeys(("last year", "l'année dernière", "l'an dernier", "el año pasado", "del año pasado"), 1),
    **dict.fromkeys(("letztes jahr", "letzten jahr", "letzten jahres", "vergangenen jahres", "vorigen jahres"), 1),
    **dict.fromkeys(("this year", "dieses jahr", "dieses jahres", "cette année", "este año", "de este año"), 0),
    **dict.fromkeys(("next year", "nächstes jahr", "nächsten jahres", "l'année prochaine", "el año que viene"), -1),
    "the year before last": 2,
}
COUNT_WORDS = {
    **{w: n for n, w in enumerate("zero one two three four five six seven eight nine ten".split())},
    **{w: n for n, w in enumerate("null ein zwei drei vier fünf sechs sieben acht neun zehn".split())},
    **{w: n for n, w in enumerate("zéro un deux trois quatre cinq six sept huit neuf dix".split())},
    **{w: n for n, w in enumerate("cero uno dos tres cuatro cinco seis siete ocho nueve diez".split())},
    "a": 1,
    "einem": 1,
}
_COUNT = r"(?:\d{1,2}|" + "|".join(sorted(COUNT_WORDS, key=len, reverse=True)) + r")"
YEARS_AGO = re.compile(
    rf"(?i)(?:({_COUNT})\s+years?\s+ago|vor\s+({_COUNT})\s+jahren|il y a\s+({_COUNT})\s+ans?|hace\s+({_COUNT})\s+años?)"
)
_YEAR_WORDS = (
    "(?:"
    + "|".join(re.escape(p) for p in sorted(RELATIVE_YEAR, key=len, reverse=True))
    + "|"
    + YEARS_AGO.pattern[4:]
    + ")"
)
YEAR_WORDS = re.compile(r"(?i)" + _YEAR_WORDS + r"(?!\w)")


def years_back(phrase: str) -> int | None:
    """How many years before today's a year named in words is ("two years ago": 2); None if it names none."""
    low = " ".join(phrase.lower().split())
    if low in RELATIVE_YEAR:
        return RELATIVE_YEAR[low]
    if low.startswith("vorletzte"):
        return 2  # "vorletztes Jahr", "im vorletzten Jahr", "des vorletzten Jahres"
    m = YEARS_AGO.fullmatch(low)
    if not m:
        return None
    count = next(g for g in m.groups() if g)
    return int(count) if count.isdigit() else COUNT_WORDS[count]


# a month with a year named in words: "in August last year", "the end of June this year", "im Mai letzten Jahres",
# "en avril l'année dernière", "in March two years ago" (dateparser reads the month and the year as two ranges)
MONTHS: dict[str, int] = {
    name: n
    for names in (
        "january february march april may june july august september october november december",
        "januar februar märz april mai juni juli august september oktober november dezember",
        "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
        "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    )
    for n, name in enumerate(names.split(), start=1)
}
MAY_MONTH = re.compile(r"(?i)\b(in|of|by|since|until|early|late|mid)\s+$")  # "in May", not "reps may"
MONTH_OF_YEAR = re.compile(
    r"(?i)(?<![\w-])("
    + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r")\s+(?:of\s+|de\s+|del\s+)?("
    + _YEAR_WORDS
    + r")(?!\w)"
)
# the year in words first: "three years ago in December", "vor drei Jahren im Dezember", "l'an dernier en mars"
# (dateparser reads no month, or the month of this year)
YEAR_THEN_MONTH = re.compile(
    r"(?i)(?<![\w-])("
    + _YEAR_WORDS
    + r"),?\s+(?:in\s+|im\s+|en\s+|at the\s+|in the\s+)?(?P<month>"
    + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r")(?!\w)"
)
# the year after one the text names: "signed in 2023 … the following year", "autumn 2022 … the next year", "l'année
# suivante", "im Jahr darauf" (dateparser reads "the next year" from today)
YEAR_AFTER = re.compile(
    r"(?i)\bthe (?:next|following) year\b|\bthe year after\b(?! \d)|\bl'année (?:suivante|d'après)\b|"
    r"\bim (?:folgenden|nächsten) jahr\b|\bim jahr darauf\b|\bel año siguiente\b"
)
# "the fourth quarter of 2024", "Q4" spelt out: ordinal + quarter word + a year (or "last year"/"this year")
_YEAR_REF = r"((?:19|20)\d\d|" + _YEAR_WORDS + ")"
ORDINAL_QUARTER = re.compile(
    r"(?i)\b(first|1st|second|2nd|third|3rd|fourth|4th|final|last|erste[sn]?|zweite[sn]?|dritte[sn]?|vierte[sn]?|"
    r"letzte[sn]?|premier|deuxième|second|troisième|quatrième|dernier|primer|segundo|tercer|cuarto|último|"
    r"[1-4]\.)\s+(?:quarter|quartals?|trimestre)(?:\s+(?:of\s+|in\s+|de\s+|del\s+)?" + _YEAR_REF + ")?"
)
OF_THE_YEAR = re.compile(r"(?i)\s+of\s+(?:the|that)\s+year\b")
LAST_WORDS = frozenset("final last letzte letzten letztes dernier último".split())  # "the last quarter": LAST_QUARTER
ORDINALS = {
    **dict.fromkeys(("first", "1st", "erste", "erstes", "ersten", "premier", "primer", "1."), 1),
    **dict.fromkeys(("second", "2nd", "zweite", "zweites", "zweiten", "deuxième", "segundo", "2."), 2),
    **dict.fromkeys(("third", "3rd", "dritte", "drittes", "dritten", "troisième", "tercer", "3."), 3),
    **dict.fromkeys(
        ("fourth", "4th", "final", "last", "vierte", "viertes", "vierten", "letzte", "letztes", "letzten"), 4
    ),
    **dict.fromkeys(("quatrième", "dernier", "cuarto", "último", "4."), 4),
}
# halves: "H1 2024", "the first half of 2024", "erste Hälfte 2024", "2. Halbjahr 2024", "2024年上半年"
HALF = re.compile(
    r"(?i)\bH([12])\s*((?:19|20)\d\d)\b|\b(first|second|erste[sn]?|zweite[sn]?|1\.|2\.|premier|second)\s+"
    r"(?:half|hälfte|halbjahr|semestre)\s+(?:of\s+|de\s+)?((?:19|20)\d\d)(?!\d)|((?:19|20)\d\d)年([上下])半年"
)
# a year's end or start: "end of 2024", "year-end 2024", "Ende 2024", "fin 2024", "2024年底" (December);
# "early 2024", "Anfang 2024", "début 2024", "2024年初" (January to March); "late 2024" (October to December)
YEAR_PART = re.compile(
    r"(?i)\b(?:(end|close) of|year-end|(start|beginning) of|(early|late|going into|heading into)|"
    r"(ende|anfang|jahresende)|(fin|début|finales|principios)(?: de)?)\s+((?:19|20)\d\d)(?!\d)|"
    r"\b((?:19|20)\d\d)\s+year-end\b|"
    r"((?:19|20)\d\d)年(底|末|初)|\b(?:when|as|before)\s+((?:19|20)\d\d)\s+(?:ended|closed|drew to a close)\b"
)
# the same with the year in words: "the end of last year", "the close of the year four years ago", "Ende letzten
# Jahres", "early this year"; and a year in words alone that dateparser does not read ("the year before last")
YEAR_PART_WORDS = re.compile(
    r"(?i)\b(?:(end|close) of|(start|beginning) of|(early|late|mid|middle of|year-end)|"
    r"(ende|anfang|mitte|jahresende|zum jahresende)|(fin|début|finales|principios|mediados)(?: del?)?)\s+"
    r"(?:the year\s+|des jahres\s+)?(" + _YEAR_WORDS + r")(?!\w)"
)
YEAR_ALONE = re.compile(r"(?i)\b(the year before last|vorletzte[sn]? jahr(?:es)?)\b")
# seasons, read as the northern hemisphere's: "spring 2024", "Sommer 2023", "l'hiver 2024" (December to February)
SEASON = re.compile(
    r"(?i)\b(spring|summer|autumn|fall|winter|frühling|frühjahr|sommer|herbst|printemps|été|automne|hiver|"
    r"primavera|verano|otoño|invierno)\s+(?:of\s+|de\s+)?((?:19|20)\d\d)(?!\d)"
)
_SEASONS = (
    "spring|summer|autumn|fall|winter|frühling|frühjahr|sommer|herbst|printemps|été|automne|hiver|primavera|verano|"
    "otoño|invierno"
)
# a season in words: "last summer", "letzten Sommer", "l'été dernier", "el verano pasado" (last year's); "this
# summer", "diesen Sommer", "cet été", "este verano" (this year's); "the summer of last year", "im Sommer vor zwei
# Jahren", "l'été de l'année dernière", "el verano del año pasado" (that year's)
SEASON_LAST = re.compile(
    rf"(?i)\b(?:last|past|letzten|vergangenen)\s+({_SEASONS})\b|(?:\bl'|\ble\s+)(été|automne|hiver|printemps)\s+"
    rf"dernier\b|\b(?:el|la)\s+(verano|otoño|invierno|primavera)\s+pasad[oa]\b"
)
# a year's end or start with no year in the phrase: "at the end of the year", "Anfang des Jahres", "en fin d'année",
# "a principios de año", "年底": of the last year the question names before it, else this one
YEAR_PART_BARE = re.compile(
    r"(?i)\b(?:(end|close|start|beginning) of the year|(ende|anfang) des jahres|(zum jahresende)|"
    r"(fin|début) de l'année|en (fin|début) d'année|(finales|principios) del? año)\b|"
    r"(?<![年\d去今前明])(年底|年末|年初)"
)
BARE_START = frozenset(("start", "beginning", "anfang", "début", "principios", "年初"))
SEASON_THIS = re.compile(
    rf"(?i)\b(?:this|diesen|dieses|diesem)\s+({_SEASONS})\b|\bcet?\s+(été|automne|hiver|printemps)\b|"
    rf"\best[ea]\s+(verano|otoño|invierno|primavera)\b"
)
SEASON_OF = re.compile(rf"(?i)\b({_SEASONS})\s+(?:of\s+(?:the\s+)?|de\s+)?(" + _YEAR_WORDS + r")(?!\w)")
SEASON_START = {
    **dict.fromkeys(("spring", "frühling", "frühjahr", "printemps", "primavera"), 3),
    **dict.fromkeys(("summer", "sommer", "été", "verano"), 6),
    **dict.fromkeys(("autumn", "fall", "herbst", "automne", "otoño"), 9),
    **dict.fromkeys(("winter", "hiver", "invierno"), 12),
}
# a length of time or a rate ("six weeks", "a month", "3 hours a week", "zwei Wochen", "每月") is not a date:
# a relative date says which way it counts ("six weeks ago", "last month", "vor zwei Wochen", "两周前")
TIME_UNIT = re.compile(
    r"(?i)\b(minutes?|hours?|days?|weeks?|months?|years?|quarters?|stunden?|tage?n?|wochen?|monate?n?|jahre?n?|"
    r"heures?|jours?|semaines?|mois|ans?|années?|horas?|días?|semanas?|mes(es)?|años?)\b|小时|天|周|星期|月|年"
)
DIRECTION = re.compile(
    r"(?i)\b(ago|last|past|previous|next|this|coming|since|vor|letzte\w*|vorige\w*|nächste\w*|seit|dies\w*|"
    r"il y a|derni\w*|pass\w*|prochain\w*|ce|cette|depuis|hace|pasad\w*|últim\w*|próxim\w*|este|esta|desde)\b|"
    r"[前上下去本这今明昨后]"
)
# "the past two weeks", "in the last 3 months", "in den letzten zwei Jahren": from that long before today to today
NUMBER_WORDS = {
    **{w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())},
    **{w: n for n, w in enumerate("null ein zwei drei vier fünf sechs sieben acht neun zehn elf zwölf".split())},
    "a": 1,
    "an": 1,
    "einen": 1,
    "einem": 1,
    "eine": 1,
    "few": 3,
}
LAST_N = re.compile(
    r"(?i)\b(?:the\s+)?(?:past|last|letzten|vergangenen)\s+(?:(\d{1,3}|[a-zäöüß]+)\s+)?"
    r"(days?|weeks?|months?|years?|tag(?:e|en)?|wochen?|monat(?:e|en)?|jahr(?:e|en)?)\b"
)
# months or quarters counted back in words, which dateparser does not find: "three months ago", "hace tres meses",
# "三个月前", "半年前" (six months), "two quarters ago", "vor zwei Quartalen"; and a month or quarter named by its
# place: "the month before last", "le mois dernier", "el mes pasado", "el trimestre pasado", "这个月" (the count)
_N_WORD = r"(\d{1,2}|[a-zäöüßéèñ]+|[一二两三四五六七八九十]{1,3})"
UNITS_AGO = re.compile(
    rf"(?i)\b{_N_WORD}\s+(months?|quarters?)\s+ago\b|\bvor\s+{_N_WORD}\s+(monaten|quartalen)\b|"
    rf"\bhace\s+{_N_WORD}\s+(meses|trimestres)\b|\bil y a\s+{_N_WORD}\s+(trimestres)\b|"
    r"([一二两三四五六七八九十\d]{1,3})个(月|季度)前|(半)年前"
)
UNIT_BACK: dict[str, tuple[str, int]] = {
    **dict.fromkeys(("the month before last", "vorletzten monat", "上上个月"), ("month", 2)),
    **dict.fromkeys(("le mois dernier", "le mois passé", "el mes pasado", "el mes anterior"), ("month", 1)),
    **dict.fromkeys(("这个月", "本月", "ce mois-ci", "este mes"), ("month", 0)),
    **dict.fromkeys(("el trimestre pasado", "el trimestre anterior", "le trimestre passé"), ("quarter", 1)),
}
UNIT_NAMED = re.compile(
    r"(?i)(?<![a-zà-ÿ])(" + "|".join(re.escape(k) for k in sorted(UNIT_BACK, key=len, reverse=True)) + r")(?![a-zà-ÿ])"
)
# halves of a year in words: "the first half of last year", "H2 last year", "die erste Hälfte letzten Jahres",
# "去年下半年"
HALF_WORDS = re.compile(
    r"(?i)\b(?:H([12])|(first|second|erste[sn]?|zweite[sn]?)\s+(?:half|hälfte)(?:\s+of)?)\s+"
    r"(?:the year\s+|des jahres\s+)?(" + _YEAR_WORDS + r")(?!\w)"
)
POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_SINCE_WORDS = r"\bsince|\bseit|\bdepuis|\bdesde"
SINCE = re.compile(r"(?i)(" + _SINCE_WORDS + r"|自从?|从)\s*$")
# a clause opened by "since" that a date ends: "Since we shelved it in 2023, has anyone …?", "Seit wir 2023 …",
# "Depuis qu'on l'a arrêté en 2023": from then to today, not only that year (no punctuation in between)
SINCE_CLAUSE = re.compile(r"(?i)(" + _SINCE_WORDS + r")\b[^,.;:?!。，？]{0,80}$")
# "since then" after a date: that date to today ("seither", "depuis lors", "desde entonces", "从那以后")
SINCE_THEN = re.compile(
    r"(?i)\b(?:(?:ever )?since then|ever since|seitdem|seither|depuis lors|depuis ce moment|desde entonces)\b|"
    r"[从自]那(?:以后|之后|时起)"
)


@dataclass(frozen=True)
class DateRange:
    """A phrase of the question and the dates it was read as (both ends inclusive, ISO)."""

    phrase: str
    start: str
    end: str
    at: int = field(default=-1, compare=False)  # where the phrase starts in the question

    def reading(self) -> str:
        return f"read '{self.phrase}' as {self.start}..{self.end}"


def _span(when: dt.date, period: str) -> tuple[dt.date, dt.date]:
    if period == "year":
        return dt.date(when.year, 1, 1), dt.date(when.year, 12, 31)
    if period == "month":
        return when.replace(day=1), when.replace(day=calendar.monthrange(when.year, when.month)[1])
    if period == "week":
        start = when - dt.timedelta(days=when.weekday())
        return start, start + dt.timedelta(days=6)
    return when, when


def _year_of(ref: str, today: dt.date) -> int:
    """A year written as digits, or in words ("last year", "two years ago") in one of the languages read."""
    if ref.isdigit():
        return int(ref)
    return today.year - (years_back(ref) or 0)


def _year_before(text: str, at: int, today: dt.date | None = None) -> int | None:
    """The last year the text names before position `at` ("after the May 2024 upgrade … by the third quarter"),
    with `today` also in words ("three years ago, at the December board")."""
    named = [(m.start(), int(m.group(1))) for m in YEAR.finditer(text, 0, at)]
    if today is not None:
        named += [(m.start(), _year_of(m.group(0), today)) for m in YEAR_WORDS.finditer(text, 0, at)]
    return max(named)[1] if named else None


def _year_named_before(text: str, at: int, today: dt.date) -> int:
    """The last year the text names before position `at`, in digits or words ("four years ago"), else this one."""
    year = _year_before(text, at, today)
    return today.year if year is None else year


def _context_year(text: str, at: int, q: int, today: dt.date) -> int:
    """The year of a quarter written without one: the last year the text names before it, in digits or words
    ("two years ago in Q3"), else the latest quarter q begun by today."""
    year = _year_before(text, at, today)
    return year if year is not None else latest_quarter(q, today)


def _units_ago(m: re.Match[str], today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The month or quarter a UNITS_AGO match counts back to; None for a count it cannot read."""
    groups = [g for g in m.groups() if g]
    if groups[0] == "半":
        return months_back(today, 6)
    word, unit = groups[0].lower(), groups[1].lower()
    n = int(word) if word.isdigit() else NUMBER_WORDS.get(word) or COUNT_WORDS.get(word) or dates_zh.number(word)
    if not n or word == "few":  # "a few months ago" names no one month
        return None
    return quarters_back(today, n) if unit.startswith(("q", "t", "季")) else months_back(today, n)


def _named_periods(text: str, today: dt.date) -> list[tuple[int, int, DateRange]]:
    """Quarters, halves, a year's end or start and seasons written in words, with their character spans."""
    out: list[tuple[int, int, DateRange]] = []

    def add(m: re.Match[str], span: tuple[dt.date, dt.date]) -> None:
        if any(a < m.end() and m.start() < b for a, b, _ in out):
            return  # inside a phrase read before: "the second quarter the year before last" is one period
        out.append((m.start(), m.end(), DateRange(m.group(0).strip(), span[0].isoformat(), span[1].isoformat())))

    for m in ORDINAL_QUARTER.finditer(text):
        q = ORDINALS[m.group(1).lower()]
        if m.group(2):
            add(m, quarter(_year_of(m.group(2).lower(), today), q))
        elif m.group(1).lower() not in LAST_WORDS:
            add(m, quarter(_context_year(text, m.start(), q, today), q))  # "by the third quarter"
        elif OF_THE_YEAR.match(text, m.end()):  # "the last quarter of the year": the fourth, not the one before now
            add(m, quarter(_year_named_before(text, m.start(), today), q))
    for m in HALF.finditer(text):
        if m.group(1):
            n, year = int(m.group(1)), int(m.group(2))
        elif m.group(3):
            n, year = 1 if ORDINALS.get(m.group(3).lower()) == 1 else 2, int(m.group(4))
        else:
            n, year = 1 if m.group(6) == "上" else 2, int(m.group(5))
        add(m, half(year, n))
    for m in YEAR_PART.finditer(text):
        year = int(m.group(6) or m.group(7) or m.group(8) or m.group(10))
        add(m, year_part(year, next((g for g in (m.group(i) for i in (1, 2, 3, 4, 5, 9)) if g), "end")))
    for m in YEAR_PART_WORDS.finditer(text):
        year = _year_of(m.group(6), today)
        add(m, year_part(year, next((g for g in m.groups()[:5] if g), "end")))
    for m in YEAR_ALONE.finditer(text):
        year = _year_of(m.group(1), today)
        add(m, month_span(year, 1, 12))
    for m in SEASON.finditer(text):
        add(m, month_span(int(m.group(2)), SEASON_START[m.group(1).lower()], 3))
    for m in SEASON_OF.finditer(text):
        add(m, month_span(_year_of(m.group(2), today), SEASON_START[m.group(1).lower()], 3))
    for m in SEASON_LAST.finditer(text):
        first = SEASON_START[next(g for g in m.groups() if g).lower()]
        past = m.group(0).lower().startswith("past")  # "this past summer": the latest one over, not last year's
        add(m, latest_season(first, today) if past else last_season(first, today))
    for m in SEASON_THIS.finditer(text):
        add(m, month_span(today.year, SEASON_START[next(g for g in m.groups() if g).lower()], 3))
    for m in HALF_WORDS.finditer(text):
        n = 1 if (m.group(1) == "1" or (m.group(2) and ORDINALS.get(m.group(2).lower()) == 1)) else 2
        add(m, half(_year_of(m.group(3), today), n))
    for m in UNITS_AGO.finditer(text):
        span = _units_ago(m, today)
        if span is not None:
            add(m, span)
    for m in UNIT_NAMED.finditer(text):
        unit, back = UNIT_BACK[m.group(1).lower()]
        add(m, months_back(today, back) if unit == "month" else quarters_back(today, back))
    for m, span in dates_zh.periods(text, today):
        add(m, span)
    for m in MONTH_OF_YEAR.finditer(text):
        if m.group(1).lower() == "may" and not MAY_MONTH.search(text[: m.start()]):
            continue  # "reps may this year …": the verb, not the month
        year = _year_of(m.group(2), today)
        span = month_span(year, MONTHS[m.group(1).lower()], 1)
        if _since(text[: m.start()]):
            span = (span[0], today)  # "since March this year" reads to today
        add(m, span)
    for m in YEAR_AFTER.finditer(text):
        named = _year_before(text, m.start(), today)
        if named is not None:
            add(m, month_span(named + 1, 1, 12))
    for m in YEAR_THEN_MONTH.finditer(text):
        if m.group("month").lower() == "may" and not MAY_MONTH.search(text[: m.start("month")]):
            continue  # "this year, may we …"
        add(m, month_span(_year_of(m.group(1), today), MONTHS[m.group("month").lower()], 1))
    for m in YEAR_PART_BARE.finditer(text):  # last: a phrase naming its year was read above
        word = next(g for g in m.groups() if g).lower()
        add(m, year_part(_year_named_before(text, m.start(), today), "start" if word in BARE_START else "end"))
    return out


def _last_n(text: str, today: dt.date) -> list[tuple[int, int, DateRange]]:
    """ "the past two weeks", "最近两周": the range from that long before today up to today ("last week" alone,
    without a count, is the calendar week before: dateparser reads it)."""
    found: list[tuple[re.Match[str], int | None, str]] = []
    for m in LAST_N.finditer(text):
        count, unit = m.group(1), m.group(2).lower()
        if count is None and not {"past", "vergangenen"} & set(m.group(0).lower().split()):
            continue  # "last year" is the calendar year before; "the past year" the twelve months to today
        n = 1 if count is None else int(count) if count.isdigit() else NUMBER_WORDS.get(count.lower())
        kind = "d" if unit.startswith(("d", "t")) else "w" if unit.startswith("w") else "m" if unit[:2] == "mo" else "y"
        found.append((m, n, kind))
    found += dates_zh.last_n(text)
    out = []
    for m, n, kind in found:
        if n is None or n <= 0:
            continue
        if kind == "d":
            start = today - dt.timedelta(days=n)
        elif kind == "w":
            start = today - dt.timedelta(weeks=n)
        else:
            months = n if kind == "m" else 12 * n
            y, mo = divmod(today.year * 12 + today.month - 1 - months, 12)
            start = dt.date(y, mo + 1, min(today.day, calendar.monthrange(y, mo + 1)[1]))
        out.append((m.start(), m.end(), DateRange(m.group(0), start.isoformat(), today.isoformat())))
    return out


def _quarters(text: str, today: dt.date) -> list[tuple[int, int, DateRange]]:
    """Quarter phrases with their character spans; a phrase of a named period wins over what it contains."""
    out = _named_periods(text, today)
    taken = [(a, b) for a, b, _ in out]
    rest = []
    for m in QUARTER.finditer(text):
        q = int(m.group(2))
        year_s = m.group(1) or m.group(3)
        last = None if year_s else re.compile(r"\s*(?:of\s+)?").match(text, m.end())
        named = YEAR_WORDS.match(text, last.end()) if last else None
        end_at = named.end() if named else m.end()
        if year_s:
            year = int(year_s)
        elif named:
            year = _year_of(named.group(0), today)  # "Q3 last year", "Q2 two years ago"
        else:
            year = _context_year(text, m.start(), q, today)
        start, end = quarter(year, q)
        rest.append(
            (m.start(), end_at, DateRange(text[m.start() : end_at].strip(), start.isoformat(), end.isoformat()))
        )
    for m, (start, end) in dates_zh.quarters(text, today):
        rest.append((m.start(), m.end(), DateRange(m.group(0), start.isoformat(), end.isoformat())))
    for m in MID_YEAR.finditer(text):
        year = int(m.group(1) or m.group(2))
        rest.append((m.start(), m.end(), DateRange(m.group(0), f"{year}-06-01", f"{year}-06-30")))
    rest += _last_n(text, today)
    for pattern, back in ((LAST_QUARTER, 1), (THIS_QUARTER, 0)):
        for m in pattern.finditer(text):
            start, end = quarters_back(today, back)
            rest.append((m.start(), m.end(), DateRange(m.group(0), start.isoformat(), end.isoformat())))
    return out + [r for r in rest if not any(a < r[1] and r[0] < b for a, b in taken)]


@lru_cache(maxsize=8)
def _parser(lang: str, today: dt.date) -> Any:
    from dateparser.date import DateDataParser

    return DateDataParser(languages=[lang], settings=_settings(today))


def _settings(today: dt.date) -> dict[str, Any]:
    return {
        "RELATIVE_BASE": dt.datetime(today.year, today.month, today.day),
        "PREFER_DATES_FROM": "past",
        "RETURN_TIME_AS_PERIOD": True,
    }


def _tightest(phrase: str, lang: str, today: dt.date) -> tuple[str, str]:
    """A phrase with a year ends at the year and loses a leading one-letter word ("in September 2025, after
    the" is "in September 2025"; "A in 2025" is "in 2025"), then is read again for its period."""
    years = list(YEAR.finditer(phrase))
    if years:
        phrase = phrase[: years[-1].end()]
        words = phrase.split()
        while len(words) > 1 and len(words[0]) == 1:
            words = words[1:]
        phrase = " ".join(words)
    return phrase, _parser(lang, today).get_date_data(phrase).period or "day"


# a number with a magnitude ("15M", "2.5k", "3bn"), and text ending in a number's integer part and its decimal mark
AMOUNT = re.compile(r"\d(?:k|m|b|bn|mm)\b", re.IGNORECASE)
IN_NUMBER = re.compile(r"\d[.,]$")


def _with_neighbours(text: str, at: int, phrase: str) -> str:
    """The phrase with the two words before it and the word after it in `text`."""
    if at < 0:
        return phrase
    before = re.search(r"(?:\S+\s+){0,2}$", text[:at])
    after = re.match(r"\s*\S*", text[at + len(phrase) :])
    return (before.group(0) if before else "") + phrase + (after.group(0) if after else "")


def _without_short_words(phrase: str, lang: str, today: dt.date) -> tuple[bool, dt.datetime | None, str | None]:
    """Whether the phrase has words of two letters or less (digits are kept), and the date and period it reads as
    without them (None when nothing else is left or it reads as no date)."""
    words = phrase.split()
    kept = [w for w in words if len(w.strip(".,")) > 2 or re.search(r"\d", w)]
    if len(kept) == len(words):
        return False, None, None
    alone = _parser(lang, today).get_date_data(" ".join(kept)) if kept else None
    return True, alone.date_obj if alone else None, alone.period if alone else None


def _only_short_day(phrase: str, lang: str, today: dt.date) -> bool:
    """Whether a day phrase names its day only by a word of two letters or less ("we", "mo"): no question names a
    day so; without such words it no longer reads as a date."""
    if lang == "zh":
        return False
    short, alone, _ = _without_short_words(phrase, lang, today)
    return short and alone is None


def _read_from_short_words(phrase: str, when: dt.datetime, period: str, lang: str, today: dt.date) -> bool:
    """Whether a phrase's date comes from its short words: without its words of two letters or less (digits
    kept), it reads as another date or none ("sat in on a": "a" read as January, "sat" as Saturday). A length
    of time counts with them ("a week ago") and is left to the length rule; a written year to the year rule."""
    if lang == "zh" or TIME_UNIT.search(phrase) or YEAR.search(phrase):
        return False
    short, alone, alone_period = _without_short_words(phrase, lang, today)
    return short and (alone is None or alone_period != period or alone.date() != when.date())


@lru_cache(maxsize=8)
def _number_words(lang: str) -> frozenset[str]:
    """The words dateparser reads as numbers in `lang` ("one", "zwei", "une"), from its own language data."""
    from dateparser.languages.loader import default_loader

    simplifications = default_loader.get_locale(lang).info.get("simplifications", [])
    return frozenset(k for d in simplifications for k, v in d.items() if k.isalpha() and v.isdigit())


def _only_numbers(phrase: str, lang: str, today: dt.date, when: dt.date) -> bool:
    """Whether a phrase without digits is a date only by a number word ("the one we" read as January): without
    its number words and its words of two letters, it no longer reads as a date, or as another one than `when`,
    the phrase's ("mit zwölf": "mit" alone is a Wednesday, "zwölf" made it December; "the Three-Beat Call": a name
    made March)."""
    if lang == "zh" or re.search(r"\d", phrase) or TIME_UNIT.search(phrase):
        return False  # "three years ago": the number counts a unit
    numbers = _number_words(lang)
    words = [(w, w.lower().strip(".,")) for w in re.split(r"[\s\-\u2010-\u2013]+", phrase) if w]  # "Three-Beat"
    if not any(bare in numbers for _, bare in words):
        return False
    kept = [w for w, bare in words if len(bare) > 2 and bare not in numbers]
    alone = _parser(lang, today).get_date_data(" ".join(kept)).date_obj if kept else None
    return alone is None or alone.date() != when


def _dateparser_hits(text: str, lang: str, today: dt.date) -> list[tuple[str, dt.date, str]]:
    """(phrase, date, period) for each date phrase dateparser finds; a lone short word read as a day ("we"
    as Wednesday) is noise and left out."""
    from dateparser.search import search_dates

    found = search_dates(text, languages=[lang], settings=_settings(today)) or []
    out = []
    for phrase, when in found:
        if re.search(r"[$€£¥%]", phrase) or AMOUNT.search(phrase):
            continue  # "$49" is a price, not 1949; "15M" an amount, not 15 minutes ago
        phrase, period = _tightest(phrase, lang, today)
        if not 1990 <= when.year <= today.year + 5:
            continue
        at = text.lower().find(phrase.lower())
        if at > 0 and IN_NUMBER.search(text[:at]):
            continue  # the digits after a decimal point ("$1.15M" read as "15M"): part of a number
        around = _with_neighbours(text, at, phrase)  # "il y a" before "deux semaines", "ago" after
        if TIME_UNIT.search(phrase) and not DIRECTION.search(around) and not YEAR.search(phrase):
            continue  # "six weeks", "a month": a length of time, not when
        single = len(phrase.split()) == 1 and not re.search(r"\d", phrase)
        if period in ("day", "time") and (single or not re.search(r"\d|\s", phrase.strip())):
            continue
        if period in ("day", "time") and not re.search(r"\d", phrase) and _only_short_day(phrase, lang, today):
            continue  # "After we": "we" read as Wednesday
        if _only_numbers(phrase, lang, today, when.date()):
            continue  # "the one we picked": "one" read as January
        if _read_from_short_words(phrase, when, period, lang, today):
            continue  # "who sat in on a call": "a" read as January
        if lang != "zh" and single and len(phrase) <= 3:
            continue
        out.append((phrase, when.date(), period))
    return out


def _since(before: str) -> re.Match[str] | None:
    """The "since" that opens the range ending today, when the text before a date phrase ends in one, or in a clause
    it opens."""
    return SINCE.search(before) or SINCE_CLAUSE.search(before)


def resolve(text: str, today: dt.date, lang: str | None) -> list[DateRange]:
    """Every date phrase of `text` as a range, in the order they occur; explicit years always, relative
    phrases only in a language dateparser is asked to read."""
    if lang == "en":
        text = POSSESSIVE.sub("  ", text)  # "last year's ARR" is "last year" ARR; two spaces keep the offsets
    spans = _quarters(text, today)
    taken = [(a, b) for a, b, _ in spans]
    if lang in PARSED_LANGUAGES:
        pos = 0
        for phrase, when, period in _dateparser_hits(text, lang, today):
            at = text.find(phrase, pos)
            at = at if at >= 0 else text.find(phrase)
            pos = max(pos, at + len(phrase))
            if any(a <= at < b or at <= a < at + len(phrase) for a, b in taken):
                continue
            years = YEAR.findall(phrase)
            if years and str(when.year) != years[0]:
                # the year written wins: "2024年" (dateparser reads year 2), "seven months in 2022" (read as seven
                # months after today)
                when, period = dt.date(int(years[0]), 1, 1), "year"
            named = _year_before(text, at, today) if period == "month" and not years else None
            if named is not None and not DIRECTION.search(phrase):
                when = when.replace(year=named)  # "2023 … planned for August": August 2023, as a quarter
            start, end = _span(when, period)
            since = _since(text[:at])
            if since:
                end, phrase = today, text[since.start(1) : at] + phrase  # "since March" reads to today
                at = since.start(1)
            spans.append((at, at + len(phrase), DateRange(phrase.strip(), start.isoformat(), end.isoformat())))
            taken.append((at, at + len(phrase)))
    for m in YEAR.finditer(text):  # a year no other reading covered
        if not any(a <= m.start() < b for a, b in taken):
            y = int(m.group(1))
            end = today if _since(text[: m.start()]) else dt.date(y, 12, 31)
            spans.append((m.start(), m.end(), DateRange(m.group(1), f"{y}-01-01", end.isoformat())))
    ordered = sorted(spans, key=lambda s: (s[0], s[1]))
    then = SINCE_THEN.search(text)
    before = [n for n, (_, b, _) in enumerate(ordered) if then and b <= then.start()]
    if then and before:  # "We shelved it in 2023. Since then, has anyone …?": from 2023 to today
        a, b, r = ordered[before[-1]]
        ordered[before[-1]] = (a, b, replace(r, phrase=f"{r.phrase} … {then.group()}", end=today.isoformat()))
    return [replace(r, at=a) for a, _, r in ordered]
