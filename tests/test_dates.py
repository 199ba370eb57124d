"""Relative and explicit dates in questions, read against a fixed today (no server)."""

from __future__ import annotations

import datetime as dt

import pytest

from kb.search.dates import resolve

TODAY = dt.date(2026, 12, 1)


def read(text: str, lang: str | None = "en") -> list[str]:
    return [f"{r.phrase}={r.start}..{r.end}" for r in resolve(text, TODAY, lang)]


@pytest.mark.parametrize(
    "text, lang, expected",
    [
        ("How many customers did we have last week?", "en", ["last week=2026-11-23..2026-11-29"]),
        ("What did we charge last quarter?", "en", ["last quarter=2026-07-01..2026-09-30"]),
        ("What did we charge in Q3 last year?", "en", ["Q3 last year=2025-07-01..2025-09-30"]),
        ("Board numbers for Q3 of last year", "en", ["Q3 of last year=2025-07-01..2025-09-30"]),
        ("Q3 letztes Jahr", "de", ["Q3 letztes Jahr=2025-07-01..2025-09-30"]),
        ("Board numbers for Q3 2024", "en", ["Q3 2024=2024-07-01..2024-09-30"]),
        ("What was the price two years ago?", "en", ["two years ago=2024-01-01..2024-12-31"]),
        ("What has changed since March?", "en", ["since March=2026-03-01..2026-12-01"]),
        ("Who did we hire in May 2023?", "en", ["in May 2023=2023-05-01..2023-05-31"]),
        ("What was retention in September 2025, after the switch?", "en", ["in September 2025=2025-09-01..2025-09-30"]),
        ("Wie viele Kunden hatten wir letzte Woche?", "de", ["letzte Woche=2026-11-23..2026-11-29"]),
        ("Was kostete Quillmate vor zwei Jahren?", "de", ["vor zwei Jahren=2024-01-01..2024-12-31"]),
        ("Was hat sich seit März geändert?", "de", ["seit März=2026-03-01..2026-12-01"]),
        ("Combien de clients avions-nous en 2024 ?", "fr", ["en 2024=2024-01-01..2024-12-31"]),
        ("我们去年有多少客户？", "zh", ["去年=2025-01-01..2025-12-31"]),
        ("2024年第三季度的收入是多少？", "zh", ["2024年第三季度=2024-07-01..2024-09-30"]),
        ("How many shops were open in mid-2023?", "en", ["mid-2023=2023-06-01..2023-06-30"]),
        ("Wie viele Filialen gab es Mitte 2023?", "de", ["Mitte 2023=2023-06-01..2023-06-30"]),
        ("What was revenue halfway through 2023?", "en", ["halfway through 2023=2023-06-01..2023-06-30"]),
        ("Shops open in the middle of 2024", "en", ["middle of 2024=2024-06-01..2024-06-30"]),
        ("2024年有多少客户？", "zh", ["2024=2024-01-01..2024-12-31"]),
        ("What was the margin in the final quarter of 2024?", "en", ["final quarter of 2024=2024-10-01..2024-12-31"]),
        ("Churn in the last quarter of 2024", "en", ["last quarter of 2024=2024-10-01..2024-12-31"]),
        ("Sales in the third quarter of last year", "en", ["third quarter of last year=2025-07-01..2025-09-30"]),
        ("Umsatz im vierten Quartal 2024", "de", ["vierten Quartal 2024=2024-10-01..2024-12-31"]),
        ("Umsatz im 2. Quartal 2025", "de", ["2. Quartal 2025=2025-04-01..2025-06-30"]),
        ("Kunden am Ende des ersten Quartals 2026?", "de", ["ersten Quartals 2026=2026-01-01..2026-03-31"]),
        ("Le chiffre du premier trimestre 2025 ?", "fr", ["premier trimestre 2025=2025-01-01..2025-03-31"]),
        ("Ventas del cuarto trimestre de 2023", "es", ["cuarto trimestre de 2023=2023-10-01..2023-12-31"]),
        ("How many shops in H2 2025?", "en", ["H2 2025=2025-07-01..2025-12-31"]),
        ("Hires in the first half of 2024", "en", ["first half of 2024=2024-01-01..2024-06-30"]),
        ("2024年下半年的收入", "zh", ["2024年下半年=2024-07-01..2024-12-31"]),
        ("What was revenue at the end of 2023?", "en", ["end of 2023=2023-12-01..2023-12-31"]),
        ("Our year-end 2024 numbers", "en", ["year-end 2024=2024-12-01..2024-12-31"]),
        ("Wie viele Kunden hatten wir Ende 2024?", "de", ["Ende 2024=2024-12-01..2024-12-31"]),
        ("Combien de clients fin 2024 ?", "fr", ["fin 2024=2024-12-01..2024-12-31"]),
        ("2025年底的收入是多少？", "zh", ["2025年底=2025-12-01..2025-12-31"]),
        ("Who left in early 2025?", "en", ["early 2025=2025-01-01..2025-03-31"]),
        ("Who joined in late 2023?", "en", ["late 2023=2023-10-01..2023-12-31"]),
        ("What did a loaf cost in spring 2024?", "en", ["spring 2024=2024-03-01..2024-05-31"]),
        ("Was kostete ein Brot im Sommer 2023?", "de", ["Sommer 2023=2023-06-01..2023-08-31"]),
        ("Plans for winter 2024", "en", ["winter 2024=2024-12-01..2025-02-28"]),
    ],
)
def test_phrases_read_as_ranges(text: str, lang: str, expected: list[str]) -> None:
    assert read(text, lang) == expected


def test_noise_is_not_a_date() -> None:
    assert read("How many customers do we have now?") == []  # "we" is not Wednesday, "now" no range
    assert read("Did the $49 Pro plan ever ship?") == []  # a price, not 1949
    assert read("Revenue of 15M and 2.5k users: which plan?") == []  # amounts, not 15 minutes or months ago
    assert read("The plan expected $1.15M ARR by Q3 2024. Did we get there?") == ["Q3 2024=2024-07-01..2024-09-30"]
    assert read("Did Quillmate Voice ever launch?") == []
    # "mit" alone is a Wednesday to dateparser, "zwölf" made it December
    assert read("Zahlt ein Kunde bei einem Call mit zwölf Teilnehmern zwölfmal?", "de") == []
    # a name with a number word in it: "Three" made it March
    assert read("Do we still run the Three-Beat Tasting?") == []
    assert read("Is the Two-Beat opener still in the script?") == []
    assert read("We ran the three-week sourdough course three months ago") == [
        "three months ago=2026-09-01..2026-09-30"
    ]
    assert read("Did Quillmate raise a Series A in 2025?") == ["in 2025=2025-01-01..2025-12-31"]


def test_a_length_of_time_or_a_rate_is_not_a_date() -> None:
    assert read("The oven took six weeks to install. How long did the repairs take?") == []
    assert read("How much flour do we use a month?") == []
    assert read("The bakers work 3 hours a week on pastry") == []
    assert read("Wie lange hat der Umbau gedauert, zwei Wochen?", "de") == []
    assert read("The bakery opened six weeks ago") == ["six weeks ago=2026-10-19..2026-10-25"]
    assert read("Was haben wir vor drei Monaten bestellt?", "de") == ["vor drei Monaten=2026-09-01..2026-09-30"]


def test_a_two_letter_word_is_not_a_day() -> None:
    assert read("After we moved the ovens, what did bread cost?") == []  # "we" is not Wednesday
    assert read("What did we bake on Monday?") == ["on Monday=2026-11-30..2026-11-30"]


def test_a_month_without_a_year_takes_the_year_the_question_names() -> None:
    # as a quarter does; with no year named it is the latest such month, as before
    assert read("Our 2023 review planned the new oven for August. Did it arrive in August?")[-1] == (
        "in August=2023-08-01..2023-08-31"
    )
    assert read("Im Rückblick 2023 war der Ofen für August geplant. Kam er im August?", "de")[-1] == (
        "im August=2023-08-01..2023-08-31"
    )
    assert read("Did the new oven arrive in August?") == ["in August=2026-08-01..2026-08-31"]
    assert read("In 2023 we planned it for last month.")[-1] == "last month=2026-11-01..2026-11-30"
    # a year named in words counts too: the month is three years back, not this December
    assert read("Three years ago, at the board meeting in December, what was the margin?")[-1] == (
        "in December=2023-12-01..2023-12-31"
    )
    assert read("Three years ago, at the December board meeting, what was the margin?")[-1].endswith(
        "2023-12-01..2023-12-31"
    )
    # and a month right after a year in words, which dateparser does not read as one date
    assert read("Vor drei Jahren im Dezember: wie hoch war die Marge?", "de") == [
        "Vor drei Jahren im Dezember=2023-12-01..2023-12-31"
    ]
    assert read("L'an dernier en mars, combien de clients ?", "fr") == ["L'an dernier en mars=2025-03-01..2025-03-31"]
    assert read("Two years ago in May we launched") == ["Two years ago in May=2024-05-01..2024-05-31"]


def test_a_number_word_alone_is_not_a_month() -> None:
    # dateparser reads "one" as January and "zwei" as February
    assert read("Of the ovens we tried, which was the one we kept?") == []
    assert read("What did we sell in two weeks from the launch?") == []  # a length of time, as before
    assert read("What did we bake three weeks ago?") == ["three weeks ago=2026-11-09..2026-11-15"]
    assert read("What did the one shop sell in May 2024?") == ["in May 2024=2024-05-01..2024-05-31"]


def test_the_past_n_units_run_up_to_today() -> None:
    assert read("Which bakers left in the past two weeks?") == ["the past two weeks=2026-11-17..2026-12-01"]
    assert read("Who joined in the last 6 months?") == ["the last 6 months=2026-06-01..2026-12-01"]
    assert read("Was ist in den letzten drei Monaten passiert?", "de") == [
        "letzten drei Monaten=2026-09-01..2026-12-01"
    ]
    assert read("What changed in the past year?") == ["the past year=2025-12-01..2026-12-01"]
    assert read("Was ist im vergangenen Jahr passiert?", "de") == ["vergangenen Jahr=2025-12-01..2026-12-01"]
    assert read("What did we earn last year?") == ["last year=2025-01-01..2025-12-31"]  # the calendar year


def test_the_last_quarter_of_the_year_is_its_fourth() -> None:
    assert read("In 2023, over the last quarter of the year, what did we bake?") == [
        "In 2023=2023-01-01..2023-12-31",
        "last quarter=2023-10-01..2023-12-31",
    ]
    assert read("Four years ago, in the last quarter of that year?")[1] == "last quarter=2022-10-01..2022-12-31"
    assert read("What did we sell in the last quarter?") == ["last quarter=2026-07-01..2026-09-30"]  # before now


def test_a_quarter_without_a_year_takes_the_year_the_question_names() -> None:
    assert read("After the March 2024 oven upgrade, how many loaves did we sell by the third quarter?") == [
        "After the March 2024=2024-03-01..2024-03-31",
        "third quarter=2024-07-01..2024-09-30",
    ]
    assert read("In 2023 we planned a café for Q2. Did it open?") == [
        "In 2023=2023-01-01..2023-12-31",
        "Q2=2023-04-01..2023-06-30",
    ]
    assert read("What did a loaf cost in the second quarter?") == ["second quarter=2026-04-01..2026-06-30"]
    # a year in words counts too (this read the third quarter of this year before)
    assert read("Two years ago in Q3, how much flour went to waste?") == ["Q3=2024-07-01..2024-09-30"]
    assert read("Churn in the last quarter") == ["last quarter=2026-07-01..2026-09-30"]  # the quarter before


def test_a_month_with_a_year_in_words_is_that_month() -> None:
    assert read("How many loaves did we bake at the end of July last year?") == [
        "July last year=2025-07-01..2025-07-31"
    ]
    assert read("When we closed the café in October this year, what was left in stock?") == [
        "October this year=2026-10-01..2026-10-31"
    ]
    assert read("Wie viele Brote haben wir im Mai letzten Jahres verkauft?", "de") == [
        "Mai letzten Jahres=2025-05-01..2025-05-31"
    ]
    assert read("Combien de pains en avril l'année dernière ?", "fr") == [
        "avril l'année dernière=2025-04-01..2025-04-30"
    ]
    assert read("Orders since March this year") == ["March this year=2026-03-01..2026-12-01"]  # to today
    assert read("Bakers may this year want rye") == ["this year=2026-01-01..2026-12-31"]  # "may", the verb


def test_the_year_after_one_named_follows_it_not_today() -> None:
    assert read("We opened the café in 2023. Did it turn a profit the following year?")[-1] == (
        "the following year=2024-01-01..2024-12-31"
    )
    assert read("After the autumn 2022 tasting, what did the school order the next year?")[-1] == (
        "the next year=2023-01-01..2023-12-31"
    )
    assert read("Ouvert en 2023, le café a-t-il gagné de l'argent l'année suivante ?", "fr")[-1] == (
        "l'année suivante=2024-01-01..2024-12-31"
    )
    assert read("What do we plan to bake next year?") == ["next year=2027-01-01..2027-12-31"]  # from today


def test_a_year_counted_back_in_words() -> None:
    assert read("How many loaves did we sell in Q2 two years ago?") == ["Q2 two years ago=2024-04-01..2024-06-30"]
    assert read("Brotumsatz im dritten Quartal vor zwei Jahren?", "de") == [
        "dritten Quartal vor zwei Jahren=2024-07-01..2024-09-30"
    ]
    assert read("Rye sales in March three years ago") == ["March three years ago=2023-03-01..2023-03-31"]
    assert read("Who baked for us in the second quarter the year before last?") == [
        "second quarter the year before last=2024-04-01..2024-06-30"
    ]
    assert read("Brot im vorletzten Jahr", "de") == ["vorletzten Jahr=2024-01-01..2024-12-31"]
    assert read("去年第三季度卖了多少面包？", "zh") == ["去年第三季度=2025-07-01..2025-09-30"]


def test_a_year_end_or_start_in_words() -> None:
    assert read("How many bakers did we have at the close of the year four years ago?") == [
        "close of the year four years ago=2022-12-01..2022-12-31"
    ]
    assert read("Wie viel Mehl hatten wir Ende letzten Jahres?", "de") == ["Ende letzten Jahres=2025-12-01..2025-12-31"]
    assert read("How many cafés were still open when 2022 ended?") == ["when 2022 ended=2022-12-01..2022-12-31"]
    assert read("Our biggest wholesale customer going into 2024") == ["going into 2024=2024-01-01..2024-03-31"]


def test_a_possessive_year_is_read() -> None:
    assert [r.split("=")[1] for r in read("What share of last year's bread sales came from cafés?")] == [
        "2025-01-01..2025-12-31"
    ]


def test_a_language_not_read_keeps_explicit_years_only() -> None:
    assert read("Quantos clientes em 2024 e no ano passado?", None) == ["2024=2024-01-01..2024-12-31"]
    assert read("How many customers in 2024 and 2025?") == [
        "2024=2024-01-01..2024-12-31",
        "2025=2025-01-01..2025-12-31",
    ]


def test_today_anchors_relative_dates() -> None:
    other = [r.reading() for r in resolve("What did we charge last quarter?", dt.date(2025, 2, 10), "en")]
    assert other == ["read 'last quarter' as 2024-10-01..2024-12-31"]


def test_a_date_read_only_from_short_words_is_noise() -> None:
    # dateparser reads "sat in on a" as January ("a") and "in 60 seconds" as today; neither names a date
    assert read("Did everyone who sat in on a recorded meeting need a paid seat?") == []
    assert read("Did we run the 'action items in 60 seconds' headline?") == []
    assert read("On finit l'année à 2,5 M$ d'ARR ?", "fr") == []
    assert read("Who did we hire on 5 May 2023?") == ["on 5 May 2023=2023-05-05..2023-05-05"]


def test_the_year_written_wins_over_dateparsers_reading() -> None:
    # "seven months in 2022" was read as seven months after today (July 2027)
    assert read("What did we pay him for his first seven months in 2022?") == [
        "seven months in 2022=2022-01-01..2022-12-31"
    ]


def test_a_since_clause_that_a_date_ends_runs_to_today() -> None:
    # the date dates the event the clause names; what is asked is whatever came after it
    assert read("Since we closed the second oven in 2023, has anyone asked to reopen it?") == [
        "Since we closed the second oven in 2023=2023-01-01..2026-12-01"
    ]
    assert read("Seit wir 2023 den zweiten Ofen stillgelegt haben, wollte ihn jemand zurück?", "de") == [
        "Seit wir 2023=2023-01-01..2026-12-01"
    ]
    assert read("Depuis qu'on a fermé le four en mars, quelqu'un l'a redemandé ?", "fr") == [
        "Depuis qu'on a fermé le four en mars=2026-03-01..2026-12-01"
    ]
    # a clause the since does not open keeps its date
    assert read("We closed the oven in 2023, since rent rose. Did anyone ask?") == ["in 2023=2023-01-01..2023-12-31"]


def test_since_then_after_a_date_runs_from_it_to_today() -> None:
    assert read("We closed the second oven in 2023. Since then, has anyone asked to reopen it?") == [
        "in 2023 … Since then=2023-01-01..2026-12-01"
    ]
    assert read("Im März 2024 haben wir die Preise erhöht. Ist seitdem ein Café abgesprungen?", "de") == [
        "Im März 2024 … seitdem=2024-03-01..2026-12-01"
    ]
    assert read("2023年我们关掉了第二个烤炉。从那以后有人再提过吗？", "zh") == [
        "2023 … 从那以后=2023-01-01..2026-12-01"
    ]
    assert read("Since then, what changed?") == []  # no date before it


def test_a_chinese_year_with_its_month_or_part() -> None:
    """As the English rules read "in September two years ago" or "the end of last year" (bakery wording)."""
    assert read("三年前我们有几个面包师？", "zh") == ["三年前=2023-01-01..2023-12-31"]
    assert read("三年前的年底，店里一共有多少人？", "zh") == ["三年前的年底=2023-12-01..2023-12-31"]
    assert read("两年前的九月卖了多少个羊角面包？", "zh") == ["两年前的九月=2024-09-01..2024-09-30"]
    assert read("去年年初面粉多少钱？", "zh") == ["去年年初=2025-01-01..2025-03-31"]
    assert read("去年年底有几家分店？", "zh") == ["去年年底=2025-12-01..2025-12-31"]
    assert read("前年的租金是多少？", "zh") == ["前年=2024-01-01..2024-12-31"]
    assert read("十二年前开的第一家店", "zh") == ["十二年前=2014-01-01..2014-12-31"]


def test_a_chinese_month_of_a_written_year_and_a_span_of_months() -> None:
    assert read("2024年10月的订单有多少？", "zh") == ["2024年10月=2024-10-01..2024-10-31"]
    assert read("那一波退订（2024年10月到2025年2月）里走了几家？", "zh") == [
        "2024年10月=2024-10-01..2024-10-31",
        "2025年2月=2025-02-01..2025-02-28",
    ]
    assert read("2024年十二月份的销量", "zh") == ["2024年十二月份=2024-12-01..2024-12-31"]
    assert read("2024年13月", "zh") == ["2024=2024-01-01..2024-12-31"]  # no such month: the year alone


def test_a_chinese_year_before_a_quarter_is_the_quarters() -> None:
    assert read("今年第一季度卖了多少？", "zh") == ["今年第一季度=2026-01-01..2026-03-31"]
    assert read("前年第二季度的收入", "zh") == ["前年第二季度=2024-04-01..2024-06-30"]


def test_a_year_part_in_words_in_every_language_read() -> None:
    assert read("Wie viel Mehl hatten wir zum Jahresende vor zwei Jahren?", "de") == [
        "zum Jahresende vor zwei Jahren=2024-12-01..2024-12-31"
    ]
    assert read("Umsatz Ende des Jahres vor drei Jahren", "de") == [
        "Ende des Jahres vor drei Jahren=2023-12-01..2023-12-31"
    ]
    assert read("Jahresende 2024", "de") == ["Jahresende 2024=2024-12-01..2024-12-31"]
    assert read("Was kostete Mehl Mitte letzten Jahres?", "de") == ["Mitte letzten Jahres=2025-06-01..2025-06-30"]
    assert read("What did flour cost mid last year?") == ["mid last year=2025-06-01..2025-06-30"]
    assert read("¿Cuántas tiendas teníamos a finales del año pasado?", "es") == [
        "finales del año pasado=2025-12-01..2025-12-31"
    ]
    assert read("a principios del año pasado", "es") == ["principios del año pasado=2025-01-01..2025-03-31"]


def test_a_season_in_words_is_that_years() -> None:
    """'This summer' is this year's even in December, so 'last summer' is last year's."""
    assert read("How many loaves did we sell last summer?") == ["last summer=2025-06-01..2025-08-31"]
    assert read("Wie viele Brote letzten Sommer?", "de") == ["letzten Sommer=2025-06-01..2025-08-31"]
    assert read("Combien de pains l'été dernier ?", "fr") == ["l'été dernier=2025-06-01..2025-08-31"]
    assert read("¿Cuántos panes el verano pasado?", "es") == ["el verano pasado=2025-06-01..2025-08-31"]
    assert read("Did the night shift run last winter?") == ["last winter=2025-12-01..2026-02-28"]
    assert read("What did we bake this summer?") == ["this summer=2026-06-01..2026-08-31"]
    assert read("Who baked in the summer of last year?") == ["summer of last year=2025-06-01..2025-08-31"]
    assert read("Wer backte im Sommer vor zwei Jahren?", "de") == ["Sommer vor zwei Jahren=2024-06-01..2024-08-31"]
    assert read("Qui cuisait l'été de l'année dernière ?", "fr") == ["été de l'année dernière=2025-06-01..2025-08-31"]


def test_months_and_quarters_counted_back_in_words() -> None:
    """dateparser finds none of these: each is the calendar month or quarter that many before today's."""
    assert read("What did flour cost three months ago?") == ["three months ago=2026-09-01..2026-09-30"]
    assert read("¿Cuánto costaba la harina hace tres meses?", "es") == ["hace tres meses=2026-09-01..2026-09-30"]
    assert read("三个月前面粉多少钱？", "zh") == ["三个月前=2026-09-01..2026-09-30"]
    assert read("半年前我们有几个面包师？", "zh") == ["半年前=2026-06-01..2026-06-30"]
    assert read("How many loaves two quarters ago?") == ["two quarters ago=2026-04-01..2026-06-30"]
    assert read("Wie viele Brote vor zwei Quartalen?", "de") == ["vor zwei Quartalen=2026-04-01..2026-06-30"]
    assert read("Who baked the month before last?") == ["the month before last=2026-10-01..2026-10-31"]
    assert read("Combien de pains le mois dernier ?", "fr") == ["le mois dernier=2026-11-01..2026-11-30"]
    assert read("¿Cuántos panes el mes pasado?", "es") == ["el mes pasado=2026-11-01..2026-11-30"]
    assert read("¿Cuántos panes el trimestre pasado?", "es") == ["el trimestre pasado=2026-07-01..2026-09-30"]
    assert read("这个月卖了多少？", "zh") == ["这个月=2026-12-01..2026-12-31"]
    assert read("We opened a few months ago.") == []  # "a few" names no one month


def test_halves_and_seasons_of_a_year_in_words() -> None:
    assert read("Sales in the first half of last year?") == ["first half of last year=2025-01-01..2025-06-30"]
    assert read("Sales in H2 last year?") == ["H2 last year=2025-07-01..2025-12-31"]
    assert read("Umsatz in der ersten Hälfte letzten Jahres", "de") == [
        "ersten Hälfte letzten Jahres=2025-01-01..2025-06-30"
    ]
    assert read("去年下半年卖了多少？", "zh") == ["去年下半年=2025-07-01..2025-12-31"]
    assert read("今年上半年卖了多少？", "zh") == ["今年上半年=2026-01-01..2026-06-30"]
    assert read("去年夏天谁在烤面包？", "zh") == ["去年夏天=2025-06-01..2025-08-31"]
    assert read("2024年春天开了几家店？", "zh") == ["2024年春天=2024-03-01..2024-05-31"]


def test_the_last_n_units_in_chinese_run_up_to_today() -> None:
    assert read("最近两周卖了多少？", "zh") == ["最近两周=2026-11-17..2026-12-01"]
    assert read("过去三个月的销量", "zh") == ["过去三个月=2026-09-01..2026-12-01"]


def test_this_past_season_is_the_latest_one_over() -> None:
    assert read("What did we bake this past summer?") == ["past summer=2026-06-01..2026-08-31"]
    assert read("What did we bake last summer?") == ["last summer=2025-06-01..2025-08-31"]


def test_a_year_end_or_start_without_a_year_is_of_the_year_named_before_else_this_one() -> None:
    assert read("How many loaves do we aim for by the end of the year?") == ["end of the year=2026-12-01..2026-12-31"]
    assert read("In 2023 we had two ovens. How many at the end of the year?") == [
        "In 2023=2023-01-01..2023-12-31",
        "end of the year=2023-12-01..2023-12-31",
    ]
    assert read("Wie viele Brote Anfang des Jahres?", "de") == ["Anfang des Jahres=2026-01-01..2026-03-31"]
    assert read("Combien de pains à la fin de l'année ?", "fr") == ["fin de l'année=2026-12-01..2026-12-31"]
    assert read("¿Cuántos panes a principios de año?", "es") == ["principios de año=2026-01-01..2026-03-31"]
    assert read("年底有几家分店？", "zh") == ["年底=2026-12-01..2026-12-31"]
    assert read("去年年底有几家分店？", "zh") == ["去年年底=2025-12-01..2025-12-31"]
