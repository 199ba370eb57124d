"""The question parsed once: its language, words, stems, dates resolved to ranges, and what it asks for (intent).
The router, the graph step and the claim-aware re-ranking read this, never the raw text again.

The intent rules are small per-language tables (named below and tested on questions unlike the dev set); a
question whose language is not recognised gets intent "other": hybrid order kept, graph lines still added.

Measured and not used: a bare year that premodifies a noun after a determiner ("the 2022 beta", "at the 2025 pricing
offsite", "our 2024 plan") read as naming an event rather than the period asked, and dropped from the dates. In auto
mode on the dev set and 22 project sets over the shared vault (637 questions), MRR 0.734 -> 0.738 (13 won, 10 lost),
current-first 0.728 -> 0.726. That is too small to carry a new English-only rule. Such questions do lose in auto
mode: of the 236 questions of the other shapes, 52 route to graph mode as "a value at a given time" and score MRR 0.737
there against hybrid's 0.844 (10 won, 17 lost). Mostly the time prior puts a note written in the named year above the
record written later (a retrospective of the 2022 launch). Nor is a dated English value question that asks what
someone said ("what did Tom say", "how long did Jonah reckon", "what statistic did she open with") read as a past event
(hybrid's order): graph mode on the 23 sets, MRR 0.737 -> 0.740 (6 questions won, 3 lost), current-first 0.731 ->
0.728 ("how many months of runway did we reckon we had" asks a value). Nor is the English change rule narrowed to a
change asked about ("how has X changed", "how fast did MRR grow", "over the years"), leaving out a change named in
passing ("if a customer never changes", "what changed his mind", "the topic-change detector", "grew out of"): 8 of
the 23 sets' questions then read as a value or whether something happened, and graph mode's MRR fell 0.740 -> 0.737
(none won, 3 lost), current-first unchanged; hybrid's order, which the change intent keeps, was the better one."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from kb.search.dates import DateRange, resolve
from kb.words import initialisms, stems

INTENTS = ("why", "path", "change", "happened", "value", "other")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # Han characters
KANA = re.compile(r"[\u3040-\u30ff]")
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
WORD = re.compile(rf"[{HAN}]|[^\W{HAN}]+")  # each Han character is a word: Chinese writes no spaces
# a few function words per language: the language with most hits wins, if no other has as many, and it has two
# or the others none; else the language is not understood
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the a an is are was were did does do what how who which when where why whose of in to and "
        "for at by on with from it that this we our us have has there ever any many much s".split()
    ),
    "de": frozenset(
        "der die das ist sind war waren wir unser unsere hat haben wie was wer welche wann warum "
        "und mit für im ein eine gibt jemals viele in den dem des auf zu von nicht auch noch ihre ihr sich bei "
        "wird werden wurde wurden kann können muss soll gab nach über seit pro nur schon kein keine sehr heute jetzt "
        "dann wenn ob dass oder aber zum zur vom beim".split()
    ),
    "fr": frozenset(
        "le la les est sont était nous notre avons a combien quel quelle quels qui quand pourquoi "
        "et de des du une un qu est ce y jamais l d on en au aux dans sur pour par pas ne nos leur il elle ils "
        "ont avait très aussi encore déjà toujours aujourd maintenant depuis avec sans chez entre mais où comment "
        "cette ces sa ses vos".split()
    ),
    "es": frozenset(
        "el la los las es son era fue nosotros nuestro tenemos cuántos cuánto qué quién cuándo por "
        "y de del una un alguna vez en se lo al para con no está están hay eran tiene tienen hoy ahora ya desde "
        "sin pero dónde cómo cuál este esta estos sus nuestros".split()
    ),
}
# Per intent and language, the one pattern that says the question asks for it. Order of INTENTS decides ties.
INTENT_RULES: dict[str, dict[str, str]] = {
    "why": {
        "en": r"\bwhy\b|\bwhat was the reason\b",
        "de": r"\b(warum|wieso|weshalb)\b",
        "fr": r"\bpourquoi\b",
        "es": r"\bpor qué\b",
        "zh": r"为什么|为何|原因",
    },
    "path": {
        "en": r"\b(connection|path|link) (between|from)\b|\bhow (is|are) .+ connected\b",
        "de": r"\bverbindung zwischen\b",
        "fr": r"\blien entre\b",
        "es": r"\bconexión entre\b",
        "zh": r"之间.*(关系|联系)",
    },
    "change": {
        # ... or asks over a span that ends now ("from the first call to where the account stands now")
        "en": r"\b(chang\w*|evolv\w*|over time|over the years|history of|grow\w*|grew|went from|"
        r"trajectory)\b|\bfrom\b[^?.]*\b(to|until|till) (now|today|where\b[^?.]*\bnow)\b",
        "de": r"\b(veränder\w*|entwickel\w*|verlauf|geschichte)\b|\b(von|vom|seit)\b[^?.]*\bbis (heute|jetzt)\b",
        "fr": r"\b(chang\w*|évolu\w*|histori\w*)\b|\bd(e|es|u|epuis)\b[^?.]*\bjusqu'(à|a) (aujourd'hui|maintenant)\b",
        "es": r"\b(cambi\w*|evolucion\w*|historia)\b|\bdesde\b[^?.]*\bhasta (hoy|ahora)\b",
        "zh": r"变化|演变|历史|怎么变|如何变|从.*到(现在|如今|目前|今天)",
    },
    # a yes/no question, or one asking when something happened (which takes for granted that it did)
    "happened": {
        "en": r"^\s*(did|do|does|has|have|is|are|was|were|had|when (did|was|were|has|have))\b|"
        r"\b(ever|actually|really|happen\w*)\b",
        # a German yes/no question opens with its verb: "Bieten wir …?", "Durfte Loop & Co …?"
        "de": r"^\s*(hat|haben|hatte|hatten|ist|sind|war|waren|gibt|gab|wann|wurde|wurden|kann|können|konnte|"
        r"konnten|darf|dürfen|durfte|durften|muss|müssen|musste|mussten)\b|"
        r"^\s*(?!(w\w*|als|wenn|ob|dass|weil|seit\w*|nachdem|bevor|da|und|aber|oder|denn|so|dann|damals|früher)\b)"
        r"\w+\s+(wir|sie|es|man|er|ihr)\b|\b(jemals|je|tatsächlich|wirklich)\b",
        # a French one may invert its subject: "Proposons-nous …?"
        "fr": r"^\s*(est-ce qu|y a-t-il|a-t-on|avons-nous|ont-ils|quand|\w+-(nous|vous|ils|elles|on|il|elle)\b)|"
        r",\s*est-ce qu|\b(jamais|vraiment|réellement|finalement)\b",
        # a Spanish yes/no question opens "¿" with no question word: "¿Ya lanzamos …?"
        "es": r"^\s*(¿\s*)?(hay|hubo|tiene|tenemos|se|cuándo)\b|\b(alguna vez|realmente|finalmente)\b|"
        r"^\s*¿\s*(?!(qué|quién|quiénes|cuál|cuáles|cuánt[oa]s?|cómo|dónde|por qué|para qué)\b)",
        "zh": r"有没有|是否|真的|到底|实际上|什么时候|何时|吗[？?]?\s*$",
    },
    "value": {
        "en": r"\b(how (many|much|big|large|long|high|often)|what (is|are|was|were|does|do|did)|what's|which|"
        r"who (is|are|was)|what \w+ (of|is|are|was|were|does|do|did))\b",
        "de": r"\b(wie (viele|viel|hoch|groß)|was (ist|sind|war|kostet|kosten|verlangt)|welche\w*|wer ist)\b",
        "fr": r"\b(combien|quel\w*|qu'est-ce que|que coûte|qui est)\b",
        "es": r"\b(cuánt\w*|cuál\w*|qué es|qué cobra|quién es)\b",
        "zh": r"多少|几个|什么|哪|谁",
    },
}
SENTENCE_BREAK = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])|\n+")
# words that ask for the state now (a question with them and no date asks for the current value), and the words
# of "still", which ask for now too unless they follow a past verb beside a date (PAST_STILL)
_NOW_WORDS: dict[str, str] = {
    "en": r"current(ly)?|now|nowadays|today|latest|most recent|these days|at the moment",
    "de": r"aktuell\w*|jetzt|heute|heutzutage|derzeit|zurzeit|momentan|inzwischen|mittlerweile|gegenwärtig",
    "fr": r"actuel\w*|maintenant|aujourd'hui|en ce moment|désormais|à présent|de nos jours",
    "es": r"actual\w*|ahora|hoy|hoy en día",
    "zh": r"目前|现在|当前|最新|如今",
}
_STILL_WORDS = {"en": "still|anymore", "de": "noch", "fr": "encore", "es": "todavía", "zh": "还"}
_EN_PAST = r"did|was|were|had"


def _words_rule(lang: str, words: str) -> str:
    return words if lang == "zh" else rf"\b({words})\b"  # Han has no word boundaries


NOW_RULES: dict[str, str] = {
    lang: _words_rule(lang, f"{words}|{_STILL_WORDS[lang]}") for lang, words in _NOW_WORDS.items()
}
STRICT_NOW: dict[str, str] = {lang: _words_rule(lang, words) for lang, words in _NOW_WORDS.items()}

# "were still active when 2022 ended": "still" after a past-tense verb, in a question naming a date, is still at that
# date, not now; the same for "hatten wir Ende 2022 noch", "avait-on encore fin 2022". Chinese marks no tense: with
# a date named, 还 is still at that date unless a word of now (现在, 目前) says otherwise
_DE_PAST = r"war|waren|warst|hatte|hatten|hattest|gab|lag|lagen|blieb|blieben|stand|standen"
_FR_PAST = r"étais|était|étaient|étions|avais|avait|avaient|avions|restait|restaient|restions"
PAST_STILL: dict[str, str] = {
    "en": rf"\b({_EN_PAST})\s+(?:\S+\s+){{0,3}}(still|anymore)\b",
    "de": rf"\b({_DE_PAST})\s+(?:\S+\s+){{0,4}}noch\b",
    "fr": rf"\b({_FR_PAST})(?:-\S+)?\s+(?:\S+\s+){{0,3}}encore\b",
    "zh": r"还",
}

# words that ask when something happened: the record of the event answers, whatever value replaced it later
WHEN_RULES: dict[str, str] = {
    "en": r"\bwhen\b",
    "de": r"\bwann\b",
    "fr": r"\bquand\b",
    "es": r"\bcuándo\b",
    "zh": r"什么时候|何时|哪一年|哪年",
}

# a question in the past tense that names no date, no "now" and no outcome asks what was said or done at an event
# it names ("At the kickoff, what did we agree?", "What was her verdict on the draft?"): the record of that event
# answers, and what is current, outdated or only planned since does not apply. English only: a tense other
# languages mark otherwise reads as before (re-ranked)
PAST_RULES: dict[str, str] = {"en": rf"\b({_EN_PAST})\b"}
# words that ask for how things ended up, which is the state since ("What did we end up doing?")
OUTCOME_RULES: dict[str, str] = {"en": r"\b(end(s|ed)? up|in the end|eventually|so far|by now|ever|still)\b"}

# words by which the asker speaks for the company the vault is about ("our ARR", "wie viel Cash hatten wir")
FIRST_PERSON: dict[str, frozenset[str]] = {
    "en": frozenset("we our ours us".split()),
    "de": frozenset("wir unser unsere unserer unseren unserem unseres uns".split()),
    "fr": frozenset("nous notre nos".split()),
    "es": frozenset("nosotros nosotras nuestro nuestra nuestros nuestras".split()),
}
FIRST_PERSON_ZH = ("我们", "咱们", "我司")


@dataclass(frozen=True)
class Question:
    """One question, read once."""

    text: str
    lang: str | None  # None: not a language the rules read (intent "other", no re-ranking)
    words: tuple[str, ...]  # lower-cased, in order, each once (each Han character a word)
    stems: frozenset[str]  # English stems and initialisms, matched against claim attribute stems built the same way
    ranges: tuple[DateRange, ...]  # every date phrase resolved against `today`
    intent: str  # one of INTENTS
    now: bool  # asks for the state now
    rules: tuple[str, ...] = field(default=())  # the rules that fired, for the output
    first_person: bool = False  # speaks as "we": a question naming no entity asks about the vault's owner
    asked_from: int = 0  # where the last sentence starts: what is asked, after any sentences of context
    asks_when: bool = False  # asks when something happened
    past_event: bool = False  # asks, in the past tense and naming no date, what was said or done then (PAST_RULES)
    today: str = ""  # the day relative dates were read against (ISO)
    asked_stems: frozenset[str] = frozenset()  # the stems of the sentence asked, after any sentences of context

    @property
    def period(self) -> DateRange | None:
        """The one period the question asks about ("in 2024", "last quarter"), unless it also asks for now; after a
        sentence of context ("After the May 2024 upgrade … What share by the third quarter?"), the one its last
        sentence names, if it names any. A value or change between several dates ("what did the autumn 2024
        update say a raise in the first half of 2025 would fund?") is asked for the stretch they span, or for
        the narrowest when it lies inside all the others: read with no period, it was asked for now, and the
        current value was put first."""
        asked = [r for r in self.ranges if r.at >= self.asked_from] or list(self.ranges)  # the question's own
        over = [r for r in asked if self.today and r.end < self.today]
        if self.intent == "value" and len(over) == 1 and len(asked) > 1:
            asked = over  # "the target for the end of this year, and where were we last quarter?": a period not yet
            # over, beside one that is, is what is aimed at; the value on record is the finished period's
        if self.now or not asked:
            return None
        if len(asked) > 1 and self.intent in ("value", "change"):
            inner = min(asked, key=lambda r: (_days(r), r.start))  # the narrowest, if inside all the others
            if all(r.start <= inner.start and inner.end <= r.end for r in asked):
                return inner  # "four years ago, over the last quarter of the year"
            phrase = " / ".join(r.phrase for r in asked)
            return DateRange(phrase, min(r.start for r in asked), max(r.end for r in asked), asked[0].at)
        return asked[0] if len(asked) == 1 else None

    def attribute_stems(self) -> frozenset[str]:
        """The stems that name the attribute asked for: the asked sentence's, after any sentences of context
        ("Harbor Dental doesn't buy seats anymore. How much meeting time do they push through a month?" asks no
        seat count). Measured on the project's 23 sets, graph mode: 3 rankings changed, MRR 1 question won,
        current-first 1 won, none lost. Not used for the timelines graph_context pins (the context's attributes
        then lost their lines: gold notes within 8k 1 won, 5 lost), nor for whether the question speaks of the AI
        ("ChatGPT reckoned six weeks. What did Jonah estimate?" still wants the chat: MRR 1 lost)."""
        return self.asked_stems or self.stems

    def readings(self) -> list[str]:
        return [r.reading() for r in self.ranges]

    def asks_for_state(self) -> bool:
        """A question about a state: a value (not one of a past event), a change, whether something happened. Graph
        search re-ranks all but a change, whose timeline in the lines is its answer (a change only with --as-of)."""
        return self.intent in ("change", "happened") or (self.intent == "value" and not self.past_event)


def language(text: str) -> str | None:
    """ "zh" for Chinese script, else the language of FUNCTION_WORDS with most hits; None when too few hit."""
    if KANA.search(text):
        return None
    if CJK.search(text):
        return "zh"
    words = re.findall(r"\w+", text.lower())
    hits = {lang: sum(w in vocab for w in words) for lang, vocab in FUNCTION_WORDS.items()}
    ranked = sorted(sorted(hits), key=lambda lang: -hits[lang])
    best, second = hits[ranked[0]], hits[ranked[1]]
    return ranked[0] if best > second and (best >= 2 or second == 0) else None


# a question opening with a clause of context ("When we went from $19 to $29, did any old customers keep the old
# price?") asks what its main clause asks: the clause's words ("went from", "when") set no intent
OPENING_CLAUSE: dict[str, str] = {  # English only: other languages read the whole question, as before
    "en": r"^\s*(when|after|before|since|once|now that|back when|while)\b"
    r"(?!\s+(did|do|does|was|were|is|are|has|have|had|will|would|can|could|should)\b)[^,?]*,\s*(?=\S)",
}


def main_clause(text: str, lang: str | None) -> str:
    """The question without an opening clause of context, if it has one."""
    rule = OPENING_CLAUSE.get(lang or "")
    return re.sub(rule, "", text, count=1, flags=re.IGNORECASE) if rule else text


def _intent(main: str, lang: str | None) -> tuple[str, list[str]]:
    """The intent of the question's main clause (main_clause)."""
    if lang is None:
        return "other", ["language not recognised: hybrid order kept"]
    low = main.lower()
    # a rule that reads the question's first word reads every sentence's: "The chat warned against X. Did we
    # follow it?" asks whether something happened as "Did we follow it?" alone does
    parts = [low] + [p for p in SENTENCE_BREAK.split(low)[1:] if p.strip()]
    for intent in INTENTS[:-1]:
        pattern = INTENT_RULES[intent].get(lang)
        if pattern and any(re.search(pattern, part) for part in parts):
            return intent, [f"intent {intent} ({lang} rule)"]
    return "other", []


def _words(text: str) -> tuple[str, ...]:
    """The text's words, lower-cased, in order, each once (each Han character a word)."""
    return tuple(dict.fromkeys(w.lower() for w in WORD.findall(text)))


def parse(text: str, today: dt.date | None = None) -> Question:
    """Read a question once; `today` (default: the local date) anchors relative dates."""
    lang = language(text)
    main = main_clause(text, lang).lower()
    intent, rules = _intent(main, lang)
    words = _words(text)
    day = today or dt.date.today()
    ranges = tuple(resolve(text, day, lang))
    asked_from = max((m.end() for m in SENTENCE_BREAK.finditer(text) if text[m.end() :].strip()), default=0)
    # a sentence of context may say "these days"; a question that names its own date asks about that date
    own_date = any(r.at >= asked_from for r in ranges)
    judged = (text[asked_from:] if own_date else text).lower()
    now = bool(lang and re.search(NOW_RULES[lang], judged))
    if now and ranges and lang in PAST_STILL and re.search(PAST_STILL[lang], judged):
        now = bool(re.search(STRICT_NOW[lang], judged))  # "still" at the date the question names
    if intent == "other" and ranges and lang is not None:
        intent, rules = "value", rules + ["a date asks for the value then"]
    if intent == "other" and now:
        intent, rules = "value", rules + ["'now' asks for the current value"]
    if now:
        rules.append("asks for the state now")
    rules += [r.reading() for r in ranges]
    # abbreviations are English ones, spelt out in English words, which other languages borrow ("die Net Revenue
    # Retention", "的 Annual Recurring Revenue"): only runs of ASCII words count, the language's own small words
    # left out
    abbrev = initialisms(words, FUNCTION_WORDS["en"] | FUNCTION_WORDS.get(lang, frozenset())) if lang else set()
    we = (
        any(p in text for p in FIRST_PERSON_ZH)
        if lang == "zh"
        else bool(set(words) & FIRST_PERSON.get(lang or "", set()))
    )
    when = bool(lang and re.search(WHEN_RULES[lang], main))
    past = intent == "value" and _past_event(text[asked_from:].lower(), text.lower(), lang, bool(ranges or now))
    if past:
        rules.append("past tense, no date: asks about an event, hybrid order kept")
    return Question(
        text,
        lang,
        words,
        frozenset(stems(words) | abbrev),
        ranges,
        intent,
        now,
        tuple(rules),
        we,
        asked_from,
        when,
        past,
        day.isoformat(),
        frozenset(stems(_words(text[asked_from:])) | abbrev) if asked_from else frozenset(),
    )


def _days(r: DateRange) -> int:
    return (dt.date.fromisoformat(r.end) - dt.date.fromisoformat(r.start)).days


def _past_event(asked: str, whole: str, lang: str | None, dated: bool) -> bool:
    """Whether the asked sentence is in the past tense (PAST_RULES) with no date, no "now" and no outcome word."""
    rule, outcome = PAST_RULES.get(lang or ""), OUTCOME_RULES.get(lang or "")
    if dated or rule is None or not re.search(rule, asked):
        return False
    return not (outcome and re.search(outcome, whole))
