#!/usr/bin/env python3
"""Generate a deterministic synthetic Obsidian vault for benchmarking kb.

    python bench/gen_vault.py OUT_DIR [--notes 13284] [--words 14000000] [--seed 7]

Imitates a real work vault: ~150 folders up to three levels deep (Projects/<name>/<sub>, Clients/<name>, People,
Meetings/<year>, Journal/<year>, ChatGPT, wiki/entities, wiki/concepts, Archive/<year>, Inbox); heavy-tailed note
lengths scaled so the total lands near --words; YAML front matter on ~80% of notes; headings, lists, code blocks,
inline and nested #tags; ~6 wikilinks per note in all Obsidian forms with power-law targets and ~3% dangling.
Output depends only on the arguments (random.Random(seed); no hash() or set order). Titles are planned up front,
then notes are streamed to disk one at a time, so memory stays small.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import time
from bisect import bisect
from dataclasses import dataclass
from itertools import accumulate

FUNC = (
    "the of and to a in for is on that with as by this we be it are from at or will an not have our was "
    "but can they should need more all has which if their also about so one there into been would new "
    "than its up out other some could when what just them only any over after these may most because how "
    "before while each very both then through where does"
).split()
NOUNS = (
    "account action agreement alert analyst approach architecture asset audit backlog balance baseline "
    "benchmark board bottleneck branch brand briefing budget bug build buyer cache campaign candidate "
    "capability capacity category channel checklist client cluster cohort commitment company competitor "
    "component concern constraint contract contributor conversion cost customer cycle dashboard database "
    "deadline deal decision deck delivery dependency deployment design developer device dimension "
    "discount document domain draft driver endpoint engine engineer entry environment estimate event "
    "experiment feature field file filter forecast framework funnel gap goal guideline handoff "
    "hypothesis incident initiative input insight integration interface interview inventory invoice "
    "issue iteration job key launch layer lead license limit log manager margin market meeting metric "
    "migration milestone model module monitor network node notebook objective offer opportunity option "
    "order outage outcome owner package partner partnership payment pilot pipeline plan platform policy "
    "portal priority process product profile program project proposal prototype provider query queue "
    "quota rate release report repository request requirement resource response review risk roadmap role "
    "rollout runbook sale schedule schema scope script segment server service session signal sprint "
    "stakeholder standard status step strategy stream subscription summary supplier survey system table "
    "target task team template tenant test threshold ticket timeline tool topic trend trigger update "
    "upgrade user vendor version warehouse webhook workflow workload workshop"
).split()
MASS = (
    "data software feedback revenue infrastructure compliance security governance research knowledge "
    "traffic throughput latency retention churn growth storage compute funding hiring documentation "
    "visibility alignment ownership momentum leverage telemetry observability tooling analytics headroom "
    "runway equity pricing"
).split()
VERBS = (
    "accept access adjust align allocate analyze approve archive assess assign automate block book "
    "calibrate cancel capture change check clarify close collect combine compare complete configure "
    "confirm connect consolidate contact convert coordinate create decide define delay deliver deploy "
    "deprecate detect discuss document enable escalate evaluate expand explore export extract finalize "
    "fix follow gather generate handle identify implement import improve include increase install "
    "integrate investigate iterate launch list load maintain manage measure merge migrate mitigate move "
    "negotiate notify optimize own parse patch pause prepare present prioritize publish push qualify "
    "rank reach receive reduce refactor refresh reject remove rename render replace request require "
    "resolve restore retry revise rotate sample scale search secure select sign simplify sketch "
    "start streamline summarize support sync track train validate verify visualize"
).split()
ADJ = (
    "active annual automated available average basic better broad central clear cloud-native complex "
    "compliant consistent core critical cross-functional current custom daily dedicated detailed direct "
    "distributed early effective efficient enterprise entire essential existing external fast final "
    "financial flexible formal frequent full global granular high initial internal large late lean legacy "
    "live local long main major manual mature minimal mobile modern monthly multiple native next normal "
    "official open operational optimal overall partial pending previous primary private proactive public "
    "quarterly quick rapid real-time recent regional regular relevant reliable remote robust scalable "
    "secure senior shared short significant simple single small smooth solid specific stable steady "
    "strategic strong structured technical tight typical unified unique upstream urgent useful visible "
    "weekly"
).split()
TECH = (
    "API SDK CI/CD Kubernetes Docker Terraform AWS GCP Azure Postgres Neo4j Redis Kafka Spark Airflow dbt "
    "Snowflake BigQuery S3 Lambda GraphQL REST gRPC OAuth SSO SAML JWT LLM GPT embeddings RAG vector "
    "transformer Python TypeScript React Node.js Rust Go Java SQL JSON YAML CSV ETL OKR KPI ARR MRR CAC "
    "LTV NPS SLA SLO P&L ROI EBITDA CRM ERP HubSpot Salesforce Jira Confluence Notion Slack GitHub GitLab "
    "Figma Stripe Zendesk Looker Tableau Grafana Prometheus Datadog Sentry PagerDuty Okta SOC2 GDPR HIPAA "
    "MVP PoC RFC RFP SOW NDA MSA B2B SaaS GTM beta staging prod backend frontend microservice monorepo "
    "cron p95 uptime"
).split()
FIRST = (
    "James Mary Robert Linda Michael Sarah David Emma Daniel Olivia Thomas Sophia Lukas Anna Jonas Lea "
    "Mateo Lucia Hiroshi Yuki Wei Mei Arjun Priya Omar Fatima Ivan Elena Kofi Amara Liam Chloe Noah Zoe "
    "Ethan Grace Lucas Mia Felix Clara Hugo Ines Diego Sofia Raj Ananya Chen Lin Pierre Camille Marco "
    "Giulia Sven Astrid Tomasz Zofia Kwame Nia Samuel Ruth Oscar Freya Leo Nora Adam Hannah Isaac Maya "
    "Victor Alice Pablo Carmen Ali Leila"
).split()
LAST = (
    "Smith Johnson Brown Garcia Miller Davis Wilson Anderson Taylor Thomas Moore Martin Lee Walker Hall "
    "Young King Wright Lopez Hill Scott Green Adams Baker Nelson Carter Mitchell Perez Roberts Turner "
    "Phillips Campbell Parker Evans Edwards Collins Stewart Morris Rogers Reed Cook Morgan Bell Murphy "
    "Bailey Cooper Richardson Cox Howard Ward Torres Peterson Gray Ramirez Watson Brooks Kelly Sanders "
    "Price Bennett Wood Barnes Ross Henderson Muller Schmidt Schneider Fischer Weber Becker Tanaka Suzuki "
    "Nakamura Kim Park Patel Sharma Nguyen Rossi"
).split()
CODENAMES = (
    "Apollo Atlas Aurora Beacon Borealis Cascade Comet Condor Delta Echo Falcon Gemini Halo Helix "
    "Horizon Ion Jupiter Keystone Lighthouse Lumen Mercury Meridian Nimbus Nova Orion Pegasus "
    "Phoenix Polaris Quartz Radiant Sierra Sirius Solstice Summit Tango Titan Vega Vertex Zephyr "
    "Zenith"
).split()
CO_A = (
    "Nor Vel Quan Ster Blue Iron Lumi Zen Arc Hex Octa Sil Tera Nova Cir Pax Vor Kel Mer Dyn Alta Bright Cobal Fen"
).split()
CO_B = (
    "tech ium ora wave gate line bridge forge point stack field core loop path grid mark scale vista nex tide"
).split()
CO_SUFFIX = ["Inc", "Labs", "Group", "Systems", "Capital", "Health", "Logistics", "Partners", "AG", "GmbH", "Ltd", ""]
PRODUCT_SUFFIX = "Analytics Cloud Hub Studio Connect Insights OS Pay Sync Guard".split()
SUBS = ["Specs", "Meetings", "Research", "Decisions", "Notes"]
HEADINGS = [
    "Summary",
    "Background",
    "Context",
    "Notes",
    "Decisions",
    "Action items",
    "Next steps",
    "Open questions",
    "Risks",
    "Timeline",
    "Requirements",
    "Architecture",
    "Results",
    "Discussion",
    "Follow-ups",
    "Key takeaways",
    "Details",
    "Budget",
    "Metrics",
    "References",
]
MEETINGS = [
    "Standup",
    "Weekly sync",
    "Planning",
    "Retro",
    "1-1 with {p}",
    "{c} call",
    "{j} review",
    "Board meeting",
    "Interview {p}",
    "All hands",
]
TAGS = (
    "meeting idea todo research decision review followup hiring finance infra ml security design sales marketing "
    "ops reading client/active client/prospect client/churned status/wip status/done status/blocked "
    "area/engineering area/product area/sales area/ops type/spec type/howto type/reference"
).split()
# kind -> (share of notes, length multiplier)
KINDS = {
    "journal": (0.20, 0.55),
    "meeting": (0.18, 0.8),
    "client": (0.10, 1.0),
    "person": (0.05, 0.6),
    "chatgpt": (0.08, 1.5),
    "entity": (0.06, 1.0),
    "concept": (0.05, 1.2),
    "archive": (0.05, 1.0),
    "inbox": (0.03, 0.45),
    "project": (0.20, 1.2),
}
START, SPAN = dt.date(2018, 1, 1), (dt.date(2025, 6, 30) - dt.date(2018, 1, 1)).days
ADV_ENDS = ("al", "ent", "ant", "ive", "ous", "ful", "ate", "ect", "ar", "ong", "ick", "id", "ble", "ic")


def cap(w: str) -> str:
    return w[:1].upper() + w[1:]


def inflect(w: str, suffix: str) -> str:
    """Regular English inflection with suffix 's', 'ed' or 'ing' (the word lists avoid irregular words)."""
    cy = w[-1] == "y" and w[-2] not in "aeiou"
    if suffix == "s" and w.endswith("sis"):
        return w[:-2] + "es"  # hypothesis -> hypotheses
    if suffix == "s":
        return w[:-1] + "ies" if cy else w + ("es" if w.endswith(("s", "sh", "ch", "x")) else "s")
    if w.endswith("e"):
        return w[:-1] + suffix
    return w[:-1] + "ied" if cy and suffix == "ed" else w + suffix


@dataclass(eq=False)
class Note:
    title: str
    folder: str
    kind: str
    day: dt.date
    dated: bool = False  # the date is in the file name
    dup: bool = False  # basename shared with other notes, so links use the folder path
    hub: bool = False
    group: str = ""  # project or client the note belongs to


class Gen:
    def __init__(self, rng: random.Random, n: int, words: int) -> None:
        self.rng, self.seen = rng, set[str]()  # `seen` is only tested for membership, never iterated
        derived = [f"{p}-{x}" for p in ("pre", "post", "sub", "multi", "co", "non", "cross") for x in NOUNS]
        derived += [f"{x}-{s}" for x in NOUNS + MASS for s in ("based", "driven", "level", "specific")]
        base = list(
            dict.fromkeys(
                NOUNS
                + [inflect(x, "s") for x in NOUNS]
                + MASS
                + ADJ
                + TECH
                + [inflect(v, s) if s else v for v in VERBS for s in ("", "s", "ed", "ing")]
                + [
                    a[:-1] + "y" if a.endswith("ble") else a + ("ally" if a.endswith("ic") else "ly")
                    for a in ADJ
                    if a.endswith(ADV_ENDS) and "-" not in a
                ]
            )
        )
        rng.shuffle(base)
        self.content = base + rng.sample(derived, 1200)  # compounds sit in the Zipf tail at 0.3x weight
        self.vocab = FUNC + self.content  # Zipf weights by rank: function words first
        tail = len(FUNC) + len(base)
        self.vcw = list(accumulate((1.0 if i < tail else 0.3) / (i + 2.7) for i in range(len(self.vocab))))
        self.links = self.missing = self.embeds = 0
        self.notes = self.plan(n)
        self.people = [x for x in self.notes if x.kind == "person"]
        self.orgs = [x for x in self.notes if (x.kind == "client" and x.hub) or x.kind == "entity"]
        self.heads = {(x.kind, x.group): x for x in self.notes if x.hub and x.group}
        self.names = [x.title for x in self.people + self.orgs]
        rng.shuffle(self.names)
        keys = [rng.random() + (0 if x.hub else 1) for x in self.notes]  # hubs take the top ranks
        self.ranked = [self.notes[i] for i in sorted(range(n), key=keys.__getitem__)]
        self.hcw = list(accumulate(1.0 / (r + 1) for r in range(n)))  # Zipf(1) over ranks
        self.dangling = [t for t in (self.concept() for _ in range(n // 60 + 10)) if t.lower() not in self.seen]
        self.dangling += self.spare_people[: n // 60 + 10]
        rng.shuffle(self.dangling)
        dated = sum(x.dated for x in self.notes) / n
        self.p_fm_dated = 1 - min(1.0, 0.005 / max(dated, 1e-9))  # ~1 in 200 notes: date only in the file name
        self.p_fm = max(0.0, min(1.0, (0.8 - dated * self.p_fm_dated) / max(1 - dated, 1e-9)))
        self.link_rate = 4.5 * n / words  # per body word; preambles and Related sections add the rest of ~6/note

    def uniq(self, t: str) -> str:
        t = t.replace("/", "-")
        base, k = t, 2
        while t.lower() in self.seen:
            t, k = f"{base} {k}", k + 1
        self.seen.add(t.lower())
        return t

    def day(self) -> dt.date:
        return START + dt.timedelta(days=self.rng.randrange(SPAN))

    def concept(self) -> str:
        return f"{cap(self.rng.choice(ADJ + NOUNS + TECH))} {cap(self.rng.choice(NOUNS + MASS))}"

    def phrase(self) -> str:
        r, n = self.rng, self.rng.choice(NOUNS)
        return r.choice(
            [
                f"{cap(r.choice(ADJ))} {r.choice(NOUNS + MASS)} {n}",
                f"{cap(r.choice(NOUNS + MASS))} {n}",
                f"{r.choice(TECH)} {n} {r.choice(('plan', 'notes', 'review', 'design', 'options'))}",
                f"{cap(r.choice(VERBS))} {r.choice(ADJ)} {n}",
            ]
        )

    def plan(self, n: int) -> list[Note]:
        r, notes = self.rng, []
        counts = {k: int(n * s) for k, (s, _) in KINDS.items()}
        counts["project"] += n - sum(counts.values())

        def add(
            title: str,
            folder: str,
            kind: str,
            day: dt.date | None = None,
            dated: bool = False,
            dup: bool = False,
            hub: bool = False,
            group: str = "",
        ) -> None:
            title = title if dup else self.uniq(title)
            notes.append(Note(title, folder, kind, day or self.day(), dated, dup, hub, group))

        people = [f"{f} {s}" for f in FIRST for s in LAST]
        r.shuffle(people)
        self.spare_people = people[counts["person"] :]
        people = people[: counts["person"]]
        projects = r.sample(CODENAMES, max(1, min(26, n // 500)))
        companies = [f"{a}{b} {r.choice(CO_SUFFIX)}".strip() for a in CO_A for b in CO_B]
        products = [f"{c} {s}" for c in CODENAMES for s in PRODUCT_SUFFIX]
        r.shuffle(companies)
        r.shuffle(products)
        clients = [companies.pop() for _ in range(max(1, min(35, n // 380)))]
        subdirs = {p: [f"Projects/{p}"] + [f"Projects/{p}/{s}" for s in r.sample(SUBS, 2)] for p in projects}
        for p in projects:
            add("Overview", f"Projects/{p}", "project", dup=True, hub=True, group=p)
        for _ in range(counts["project"] - len(projects)):
            p = projects[int(len(projects) * r.random() ** 1.5)]
            add(
                f"{p} {self.phrase().lower()}" if r.random() < 0.4 else self.phrase(),
                r.choice(subdirs[p]),
                "project",
                group=p,
            )
        for c in clients:
            add(c, f"Clients/{c}", "client", hub=True, group=c)
        for _ in range(counts["client"] - len(clients)):
            c, d = clients[int(len(clients) * r.random() ** 1.5)], self.day()
            topic = r.choice(
                [
                    f"QBR {d.year}",
                    "Kickoff",
                    f"Contract renewal {d.year}",
                    "Requirements",
                    "Onboarding plan",
                    "Pricing proposal",
                    f"Status update {d}",
                    self.phrase(),
                ]
            )
            add(f"{c} - {topic}", f"Clients/{c}", "client", d, group=c)
        for p in people:
            add(p, "People", "person", hub=True)
        days = sorted(r.sample(range(SPAN), min(SPAN, counts["journal"])))
        for i in range(counts["journal"]):
            d = START + dt.timedelta(days=days[i % len(days)])
            add(d.isoformat(), f"Journal/{d.year}", "journal", d, dated=True)
        for _ in range(counts["meeting"]):
            d, p = self.day(), people[int(len(people) * r.random() ** 2)]
            kind = r.choice(MEETINGS).format(p=p, c=r.choice(clients), j=r.choice(projects))
            add(f"{d} {kind}", f"Meetings/{d.year}", "meeting", d, dated=True)
        for _ in range(counts["chatgpt"]):
            add(f"ChatGPT - {self.phrase().lower()}" if r.random() < 0.5 else self.phrase(), "ChatGPT", "chatgpt")
        for i in range(counts["entity"]):
            pool = companies if (i % 2 == 0 and companies) or not products else products
            add(
                pool.pop() if pool else f"{r.choice(CO_A)}{r.choice(CO_B)} {r.choice(PRODUCT_SUFFIX)}",
                "wiki/entities",
                "entity",
                hub=True,
            )
        for _ in range(counts["concept"]):
            add(self.concept(), "wiki/concepts", "concept", hub=True)
        for _ in range(counts["archive"]):
            d = self.day()
            add(
                r.choice([self.phrase(), f"{self.phrase()} (old)", f"{self.phrase()} v{r.randint(1, 4)}"]),
                f"Archive/{d.year}",
                "archive",
                d,
            )
        for _ in range(counts["inbox"]):
            add(r.choice(["Untitled", f"Idea - {self.phrase().lower()}", self.phrase()]), "Inbox", "inbox")
        return notes

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choices(self.content, k=self.rng.randint(lo, hi)))

    def number(self) -> str:
        r, x = self.rng, self.rng.randint(1, 999)
        return r.choice(
            [
                f"${x * 50:,}",
                f"${x / 10:.1f}M",
                f"€{x}k",
                f"{x % 100}%",
                self.day().isoformat(),
                f"Q{x % 4 + 1} {2018 + x % 8}",
                f"v{x % 6}.{x % 21}.{x % 10}",
                f"{x * 5:,}",
            ]
        )

    def ref(self, note: Note) -> str:
        self.links += 1
        return f"[[{note.folder + '/' + note.title if note.dup else note.title}]]"

    def link(self) -> str:
        r, p = self.rng, self.rng.random()
        self.links += 1
        if p < 0.06:
            self.embeds += 1
            return (
                f"![[Pasted image {self.day():%Y%m%d}{r.randint(0, 235959):06d}.png]]"
                if r.random() < 0.6
                else f"![[{r.choice(NOUNS)}-{r.choice(('diagram', 'screenshot', 'chart'))}-{r.randint(1, 40)}.png]]"
            )
        if r.random() < 0.036:
            self.missing += 1
            name = self.dangling[int(len(self.dangling) * r.random() ** 2)]
        else:
            note = self.ranked[bisect(self.hcw, r.random() * self.hcw[-1])]
            name = f"{note.folder}/{note.title}" if note.dup or p < 0.16 else note.title
        q = r.random()
        if q < 0.62:
            return f"[[{name}]]"
        if q < 0.80:
            return f"[[{name}|{self.words(1, 3)}]]"
        if q < 0.96:
            return f"[[{name}#{r.choice(HEADINGS)}{'|' + self.words(1, 3) if q >= 0.92 else ''}]]"
        return f"![[{name}]]"

    def sentence(self, lo: int = 8, hi: int = 25) -> tuple[str, int]:
        r = self.rng
        n = r.randint(lo, hi)
        w = r.choices(self.vocab, cum_weights=self.vcw, k=n)
        p = r.random()
        if p < 0.22:
            w[r.randrange(n)] = self.names[int(len(self.names) * r.random() ** 2)]
        elif p < 0.34:
            w[r.randrange(n)] = self.number()
        if r.random() < n * self.link_rate:
            w[r.randrange(n)] = self.link()
        if r.random() < 0.035:
            w.append("#" + r.choice(TAGS))
        if n > 10 and r.random() < 0.4:
            w[r.randrange(3, n - 3)] += ","
        w[0] = cap(w[0])
        return " ".join(w) + ("?" if r.random() < 0.05 else "."), n

    def front_matter(self, note: Note) -> str:
        r, d = self.rng, note.day
        val = d.isoformat() if r.random() < 0.7 else f"{d}T{r.randint(7, 22):02d}:{r.randint(0, 59):02d}"
        lines = ["---", f"{'date' if r.random() < 0.55 else 'created'}: {val}"]
        if r.random() < 0.35:
            lines.append(f"updated: {d + dt.timedelta(days=r.randint(1, 200))}")
        tags = list(dict.fromkeys([note.kind] + [r.choice(TAGS) for _ in range(r.randint(0, 3))]))
        tags += [f"project/{note.group.lower()}"] if note.kind == "project" else []
        s = r.random()
        lines += (
            [f"tags: [{', '.join(tags)}]"]
            if s < 0.4
            else ["tags:"] + [f"  - {t}" for t in tags]
            if s < 0.7
            else [f"tags: {', '.join(tags)}"]
        )
        if (note.kind in ("person", "entity") and r.random() < 0.5) or r.random() < 0.04:
            parts = note.title.split()
            lines.append(f"aliases: [{parts[0]}, {''.join(x[0] for x in parts if x[:1].isalpha()).upper()}]")
        if note.kind in ("project", "client") and r.random() < 0.5:
            lines.append(f"status: {r.choice(('active', 'paused', 'done', 'planning'))}")
        return "\n".join(lines + ["---"])

    def preamble(self, note: Note) -> list[str]:
        r = self.rng
        if note.kind == "meeting" and self.people:
            who = dict.fromkeys(self.people[int(len(self.people) * r.random() ** 2)] for _ in range(r.randint(2, 5)))
            return ["**Attendees:** " + ", ".join(self.ref(x) for x in who)]
        if note.kind == "person" and self.orgs:
            org = self.orgs[int(len(self.orgs) * r.random() ** 2)]
            email = note.title.lower().replace(" ", ".") + "@" + org.title.split()[0].lower() + ".com"
            return [f"**Role:** {cap(r.choice(ADJ))} {r.choice(NOUNS)} at {self.ref(org)}  \n**Email:** {email}"]
        head = self.heads.get((note.kind, note.group))
        if head is not None and head is not note and r.random() < 0.6:
            return [f"{'Project' if note.kind == 'project' else 'Client'}: {self.ref(head)}"]
        return []

    def render(self, note: Note, budget: int) -> str:
        r, out, chat = self.rng, [], note.kind == "chatgpt"
        if r.random() < (self.p_fm_dated if note.dated else self.p_fm):
            out.append(self.front_matter(note))
        if r.random() < 0.45:
            out.append(f"# {note.title}")
        out += self.preamble(note) + (["## User"] if chat else [])
        count, since, gap, turn = 0, 0, r.randint(150, 600), 0
        while count < budget:
            if since >= gap and budget - count > 80:  # headings every few paragraphs in longer notes
                turn += 1
                out.append(
                    ("## ChatGPT" if turn % 2 else "## User")
                    if chat
                    else f"{'###' if r.random() < 0.35 else '##'} "
                    f"{r.choice(HEADINGS) if r.random() < 0.6 else cap(self.words(2, 4))}"
                )
                since, gap = 0, r.randint(100, 400) if chat else r.randint(150, 600)
            b, k = r.random(), 0
            if b < 0.17:
                style, items = r.random(), []
                for i in range(r.randint(3, 7)):
                    s, m = self.sentence(4, 14)
                    k += m
                    bullet = (
                        ("- [x] " if r.random() < 0.4 else "- [ ] ")
                        if style < 0.2
                        else f"{i + 1}. "
                        if style < 0.35
                        else "- "
                    )
                    items.append(("  " if i and style >= 0.35 and r.random() < 0.15 else "") + bullet + s)
                out.append("\n".join(items))
            elif b < 0.17 + (0.12 if chat else 0.008):
                ident = [f"{r.choice(NOUNS)}_{r.choice(NOUNS)}".replace("-", "_") for _ in range(3)]
                lines = [
                    f"{r.choice(ident)} = {r.choice(ident)}({r.choice(ident)}, {r.randint(0, 100)})"
                    for _ in range(r.randint(3, 12))
                ]
                lang = r.choice(("python", "sql", "bash", "json", "yaml", "ts"))
                out.append(f"```{lang}\n" + "\n".join(lines) + "\n```")
                k = 4 * len(lines)
            else:
                sents = [self.sentence() for _ in range(r.randint(2, 6))]
                k = sum(x[1] for x in sents)
                out.append(" ".join(x[0] for x in sents))
            count, since = count + k, since + k
        if r.random() < 0.3:
            out.append("## Related\n" + "\n".join(f"- {self.link()}" for _ in range(r.randint(2, 5))))
        return "\n\n".join(out) + "\n"


def raw_len(r: random.Random, kind: str) -> int:
    """Heavy-tailed body length: lognormal bulk, ~5% 3,000-8,000 words, ~0.1% near 15,000."""
    p = r.random()
    if p < 0.07:
        return r.randint(13500, 15000) if p < 0.001 else r.randint(3000, 8000) if p < 0.051 else r.randint(1500, 3000)
    return int(min(2000, max(150, r.lognormvariate(6.5, 0.55) * KINDS[kind][1])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--notes", type=int, default=13284)
    ap.add_argument("--words", type=int, default=14_000_000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    if a.notes < 50 or a.words < a.notes * 50:
        ap.error("need --notes >= 50 and --words >= 50 * notes")
    t0, rng = time.perf_counter(), random.Random(a.seed)
    g = Gen(rng, a.notes, a.words)
    raw = [raw_len(rng, x.kind) for x in g.notes]
    rem_raw, written, used, nbytes, lengths, dirs = float(sum(raw)), 0, 0, 0, [], set()
    for note, rl in zip(g.notes, raw):
        ratio = written / used if used else 1.0  # words written per budgeted body word so far
        budget = max(40, round(rl * (a.words - written) / (rem_raw * ratio)))
        data = g.render(note, budget)
        lengths.append(len(data.split()))
        written, used, rem_raw = written + lengths[-1], used + budget, rem_raw - rl
        folder = os.path.join(a.out_dir, note.folder)
        if folder not in dirs:
            os.makedirs(folder, exist_ok=True)
            dirs.add(folder)
        with open(os.path.join(folder, note.title + ".md"), "w", encoding="utf-8", newline="\n") as f:
            nbytes += f.write(data)
    folders = {"/".join(x.folder.split("/")[:i]) for x in g.notes for i in range(1, x.folder.count("/") + 2)}
    lengths.sort()
    pct = " ".join(f"p{q}={lengths[min(len(lengths) - 1, len(lengths) * q // 100)]}" for q in (10, 50, 90, 99))
    print(
        f"wrote {len(g.notes)} notes in {len(folders)} folders to {a.out_dir}: {written:,} words, "
        f"~{nbytes / 1e6:.0f} M chars, {time.perf_counter() - t0:.1f}s"
    )
    print(f"words/note {pct} max={lengths[-1]}; {sum(x >= 3000 for x in lengths)} notes >= 3,000 words")
    print(f"links: {g.links:,} ({g.links / len(g.notes):.1f}/note), {g.missing:,} dangling, {g.embeds:,} image embeds")


if __name__ == "__main__":
    main()
