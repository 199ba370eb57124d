"""The question parsed once: language, intent, dates, stems (no server)."""

from __future__ import annotations

import datetime as dt

import pytest

from kb.search.question import language, parse
from kb.search.router import route

TODAY = dt.date(2026, 12, 1)


@pytest.mark.parametrize(
    "text, lang",
    [
        ("How many people work here?", "en"),
        ("Wie viele Leute arbeiten bei uns?", "de"),
        ("Combien de clients avons-nous ?", "fr"),
        ("¿Cuántos clientes tenemos?", "es"),
        ("我们现在有多少客户？", "zh"),
        ("Quillmate现在有多少付费客户？", "zh"),
        ("Quillmate Voice", None),
        ("今日の売上は？", None),  # no function word; Japanese is not read
        ("Quantos clientes tem a Lumen Ledger hoje?", None),  # Portuguese: one French "a" is not enough
        ("Warum?", "de"),
        ("Combien coûte l'abonnement maintenant ?", "fr"),
        ("which clients use AutoMatch?", "en"),
        ("Quanti clienti abbiamo a Milano?", None),  # Italian: one "a" that English and French share
        # short questions whose one shared word ("was", "a") was all they had
        ("Was kostet Roggenbrot heute pro Stück?", "de"),
        ("¿Hay pan hoy?", "es"),
        ("Où livre-t-on depuis mars ?", "fr"),
        ("Was the oven ever fixed?", "en"),
    ],
)
def test_language(text: str, lang: str | None) -> None:
    assert language(text) == lang


@pytest.mark.parametrize(
    "text, intent, now",
    [
        ("Which office opened first in the Nordics?", "value", False),
        ("Is there a mobile app for the field crews?", "happened", False),
        ("Did the loyalty programme ever start?", "happened", False),
        ("How did the head count grow over the years?", "change", False),
        ("Why did the Oslo team move to a four-day week?", "why", False),
        ("What is the connection between Ana and the Halden deal?", "path", False),
        ("What does a support seat cost at the moment?", "value", True),
        ("Gibt es eine Filiale in Wien?", "happened", False),
        ("Wie hoch ist der Umsatz derzeit?", "value", True),
        ("Warum haben wir den Preis gesenkt?", "why", False),
        ("Y a-t-il jamais eu un bureau à Lyon ?", "happened", False),
        ("Combien coûte l'abonnement maintenant ?", "value", True),
        ("公司目前有多少员工？", "value", True),
        ("那个产品真的发布了吗？", "happened", False),
        ("为什么客户流失了？", "why", False),
        ("When did the bakery app go live?", "happened", False),
        ("Where does the bakery's margin stand now?", "value", True),
        ("How big was the second loan?", "value", False),
        ("Wann hat die Filiale in Graz eröffnet?", "happened", False),
        ("那家店是什么时候开业的？", "happened", False),
        ("The bakery planned a night shift for 2024. Did it ever start?", "happened", False),  # a second sentence
        ("Die Bäckerei plante eine Nachtschicht. Gibt es sie heute?", "happened", True),
        ("面包店计划开夜班。后来开了吗？", "happened", False),
        ("The bakery did a night shift in 2024", "value", False),  # "did" mid-sentence asks nothing
        ("What fraction of the flour order came from the mill?", "value", False),  # "what <noun> of"
        ("What oven did the bakery buy?", "value", False),
        ("What role have the ovens played in the bakery's success?", "other", False),  # a history, not a value
        ("Quillmate Voice", "other", False),  # no language: nothing is promoted
        # a German or French yes/no question opens with its verb, or inverts its subject
        ("Ein Kunde fragt nach Roggenbrot. Backen wir so etwas?", "happened", False),
        ("Durfte die Filiale in Graz ihre alten Preise behalten?", "happened", False),
        ("Als wir 2024 die Nachtschicht planten, welche Öfen brauchten wir?", "value", False),  # "als": a clause
        ("Proposons-nous une livraison le dimanche ?", "happened", False),
        ("La boulangerie de Lyon, est-ce qu'elle a rouvert ?", "happened", False),  # a topic, then the question
        ("Combien est-ce que coûte la baguette ?", "value", False),  # "est-ce que" after a question word
        ("Le four promis en 2024 a-t-il finalement été livré ?", "happened", False),
        ("¿Ya abrimos la panadería de Sevilla o sigue pendiente?", "happened", False),  # "¿" with no question word
        ("¿Cuántos panaderos tenemos?", "value", False),
        # words of now beyond "now": "inzwischen", "nowadays", "désormais"
        ("Welche Öfen nutzt die Bäckerei inzwischen?", "value", True),
        ("How long do we keep the sourdough starter nowadays?", "value", True),
        ("Quel four utilise-t-on désormais ?", "value", True),
    ],
)
def test_intent_in_several_languages(text: str, intent: str, now: bool) -> None:
    q = parse(text, TODAY)
    assert (q.intent, q.now) == (intent, now), q.rules


def test_the_period_asked_is_the_last_sentence_s() -> None:
    """A sentence of context may name a date; the question after it asks about the one it names itself, or,
    naming none, about the context's."""
    q = parse(
        "Bread sales fell after the March 2024 price rise. How many loaves did we sell in the third quarter?", TODAY
    )
    assert q.period is not None and (q.period.start, q.period.end) == ("2024-07-01", "2024-09-30")
    q = parse("The plan promised a second oven by Q2 2023. Did we buy it on time?", TODAY)
    assert q.period is not None and q.period.start == "2023-04-01"
    span = parse("How many loaves in 2024 and 2025?", TODAY).period  # the stretch both name, not now
    assert span is not None and (span.start, span.end) == ("2024-01-01", "2025-12-31")


def test_now_in_a_sentence_of_context_does_not_hide_the_date_asked() -> None:
    q = parse("Sourdough is our best seller these days. Back in mid-2023, how many loaves did we sell a week?", TODAY)
    assert not q.now and q.period is not None and q.period.start == "2023-06-01"
    assert parse("We sold 40 loaves in 2024. How many do we sell these days?", TODAY).now  # the question's own now
    assert parse("Wann haben wir die zweite Filiale eröffnet?", TODAY).asks_when
    assert not parse("Did we open a second shop?", TODAY).asks_when


def test_period_and_readings() -> None:
    q = parse("How many stores did we run in Q2 last year?", TODAY)
    assert q.period is not None and (q.period.start, q.period.end) == ("2025-04-01", "2025-06-30")
    assert "read 'Q2 last year' as 2025-04-01..2025-06-30" in q.rules
    both = parse("How many stores now, compared with 2024?", TODAY)
    assert both.now and both.period is None  # "now" wins over the year
    assert parse("Who joined us in March 2024?", TODAY).intent == "value"  # a date asks for the value then
    assert {"store", "run"} <= parse("How many stores did we run?", TODAY).stems


def test_an_abbreviated_attribute_is_asked_for_by_its_words_spelt_out() -> None:
    q = parse("What is the bakery's net promoter score these days?", TODAY)
    assert {"nps", "net", "promoter", "score"} <= q.stems
    assert "ltv" not in parse("What is the customer lifetime value?", TODAY).stems  # two words: no initialism
    assert "cac" in parse("What is our customer acquisition cost now?", TODAY).stems
    # a question word breaks the run ("how many paying customers" is no "mpc")
    assert not {"mpc", "hmp"} & parse("How many paying customers do we have?", TODAY).stems
    # English terms another language borrows are read, that language's small words left out of the run
    assert "nps" in parse("Wie hoch ist der Net Promoter Score aktuell?", TODAY).stems
    assert "nrr" in parse("Quelle est la Net Revenue Retention de la boulangerie ?", TODAY).stems
    assert "arr" in parse("面包店现在的 Annual Recurring Revenue 是多少？", TODAY).stems
    assert not {"wvk", "vzk"} & parse("Wie viele zahlende Kunden hat die Bäckerei?", TODAY).stems


def test_router_reads_the_typed_question() -> None:
    assert route(parse("Hat die Filiale in Wien jemals eröffnet?", TODAY)) == (
        "graph",
        "whether something happened (plan versus fact)",
    )
    assert route(parse("公司目前有多少员工？", TODAY))[0] == "graph"
    assert route(parse("Quillmate Voice", TODAY))[0] == "hybrid"  # not understood: hybrid
    assert route(parse("Qui a présenté Ana à l'investisseur ?", TODAY))[0] == "hybrid"  # English rules only
    assert route("Who introduced us to Kestrel?")[0] == "graph"  # the English phrase rules still apply
    assert route(parse("What does Halden do?", TODAY), as_of="2024-01-01") == ("graph", "claims as of a date")
    assert route(parse("What does Halden do?", TODAY), current=True) == ("graph", "current claims only")


def test_small_shared_words_ask_for_no_attribute() -> None:
    """ "price per seat" asks for the price and the seat, not for every *_per_month timeline ("per" pinned
    Crane's meeting_hours_per_month and 20 more lines for a question about its seat price)."""
    from kb.words import attribute_stems

    assert attribute_stems("tickets_per_month") == ["month", "ticket"]
    q = parse("How many seats did the bakery sign for, and at what price per seat?", TODAY)
    assert {"seat", "price", "bakery"} <= q.stems and not {"per", "many"} & q.stems


def test_a_past_event_without_a_date_keeps_hybrid_order() -> None:
    """ "At the tasting, what did we agree?" asks for the record of that event: what is current or outdated since
    does not apply, so the re-ranking is not asked for; a date, "now" or an outcome word asks for a state again."""
    event = parse("At the tasting, what did Ana and I agree on the rye price?", TODAY)
    assert event.intent == "value" and event.past_event and not event.asks_for_state()
    assert "past tense, no date: asks about an event, hybrid order kept" in event.rules
    assert parse("What was the baker's verdict on the new oven?", TODAY).past_event
    for text in (
        "What did we end up charging for rye?",  # the outcome: the state since
        "What was the rye price in 2024?",  # a date: the value then
        "What was the latest rye price?",  # "latest": now
        "What does a rye loaf cost?",  # present tense
        "Did the café ever open?",  # did it happen: re-read in any tense
    ):
        q = parse(text, TODAY)
        assert not q.past_event and q.asks_for_state(), text
    german = parse("Was hat Ana beim Treffen zum Roggenpreis gesagt?", TODAY)
    assert german.lang == "de" and not german.past_event  # English only: other languages read as before


def test_still_after_a_past_verb_is_still_at_the_date_named() -> None:
    """ "were still open when 2022 ended" asks about the end of 2022; "do we still …" asks about now, also after
    a sentence of context naming a year."""
    then = parse("How many cafés were still open when 2022 ended?", TODAY)
    assert not then.now and then.period is not None and then.period.start == "2022-12-01"
    assert parse("Do we still bake rye, as we did in 2023?", TODAY).now
    assert parse("In 2023 we stopped baking rye. Do we still sell it at all?", TODAY).now
    assert parse("Was the café still open in 2024, and is it open now?", TODAY).now  # "now" says so


def test_still_at_a_date_named_in_german_french_and_chinese() -> None:
    """ "noch", "encore" after a past verb and 还 beside a date are still at that date; with a present verb, or a
    word of now, they ask about now as before."""
    for text, start in (
        ("Wie viel vom Startkapital hatten wir Ende 2022 noch übrig?", "2022-12-01"),
        ("Combien de cafés avait-on encore fin 2023 ?", "2023-12-01"),
        ("2023年底我们还有多少家咖啡店？", "2023-12-01"),
    ):
        q = parse(text, TODAY)
        assert not q.now and q.period is not None and q.period.start == start, text
    for text in (
        "Backen wir 2024 noch Roggenbrot?",  # a present verb: now
        "Est-ce qu'on vend encore du pain de seigle en 2024 ?",
        "2023年开的店现在还在吗？",  # 现在: now
        "Hatten wir 2023 Roggenbrot, und backen wir es heute noch?",  # "heute": now
    ):
        assert parse(text, TODAY).now, text


def test_a_period_not_yet_over_beside_one_that_is_is_the_target() -> None:
    q = parse("How many cafés are we aiming for by the end of this year, and how many did we have last quarter?", TODAY)
    assert q.period is not None and (q.period.start, q.period.end) == ("2026-07-01", "2026-09-30")
    both_over = parse("How many loaves did we sell in 2024 and in 2025?", TODAY).period
    assert both_over is not None and (both_over.start, both_over.end) == ("2024-01-01", "2025-12-31")


def test_a_value_between_several_dates_is_asked_for_their_span_not_for_now() -> None:
    """Read with no period, such a question was asked for now: the current value went first."""
    q = parse("In the autumn 2024 letter, what did Ana say a loan in the first half of 2025 would pay for?", TODAY)
    assert q.intent == "value" and not q.now
    assert q.period is not None and (q.period.start, q.period.end) == ("2024-09-01", "2025-06-30")
    inner = parse("Four years ago, over the last quarter of the year, how fast did bread sales grow?", TODAY).period
    assert inner is not None and (inner.start, inner.end) == ("2022-10-01", "2022-12-31")  # inside the other
    assert parse("Did the oven we planned in 2024 arrive by March 2025?", TODAY).period is None  # not a value
    assert parse("How many loaves now, and how many in 2023 and 2024?", TODAY).period is None  # now wins


def test_a_question_over_a_span_that_ends_now_asks_how_something_changed() -> None:
    """ "From the first order to where the account stands now" asks for the story over the span, in each language
    the rules read; a span that ends before now, or "now" alone, does not."""
    for text in (
        "What's the story with the Mill Street café so far, from the first order to where the account stands now?",
        "Was ist mit dem Café vom ersten Auftrag bis heute passiert?",
        "Qu'est-ce qui s'est passé avec le café depuis la première commande jusqu'à aujourd'hui ?",
        "¿Qué pasó con el café desde el primer pedido hasta hoy?",
        "这家咖啡馆从第一笔订单到现在发生了什么？",
    ):
        assert parse(text, TODAY).intent == "change", text
    assert parse("How many loaves did we sell from March to May?", TODAY).intent == "value"
    assert parse("How many cafés buy from us now?", TODAY).intent == "value"


def test_an_opening_clause_of_context_sets_no_intent() -> None:
    """ "When we went from $3 to $4 a loaf, did any café keep the old price?" asks whether something happened:
    the clause's "went from" asks for no change, and its "when" asks no date; a question opening with
    "When did …" is still a when-question."""
    q = parse("When we went from $3 to $4 a loaf, did any café keep the old price?", TODAY)
    assert q.intent == "happened" and not q.asks_when
    assert parse("When did the café open?", TODAY).asks_when
    assert parse("When did bread prices change, and how?", TODAY).intent == "change"
    assert parse("After the move, how has rye demand changed?", TODAY).intent == "change"
