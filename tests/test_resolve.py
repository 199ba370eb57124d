"""Entity resolution rules and claim timelines, on hand-made extractions (no database)."""

from __future__ import annotations

from typing import Any

from kb.extract.graph import build_rows, hub_threshold
from kb.extract.lookup import matches
from kb.extract.models import Extraction
from kb.extract.resolve import Mention, Overrides, resolve, rule_key


def m(chunk: str, name: str, etype: str = "Organization", aliases: tuple[str, ...] = (), note: str = "n.md") -> Mention:
    return Mention(chunk, note, "2024-01-01", name, etype, aliases)


def keys(res: Any) -> set[str]:
    return set(res.key_of.values())


def test_rules_fold_case_punctuation_and_suffixes() -> None:
    assert rule_key("MindReader AI, Inc.", "Organization") == rule_key("mindreader ai", "Product")
    assert rule_key("Acme.io", "Organization") == rule_key("ACME Ltd", "Project") == "thing:acme"
    assert rule_key("Acme", "Person") != rule_key("Acme", "Organization")


def test_alias_chain_is_not_followed() -> None:
    res = resolve(
        [m("c1", "Alpha", aliases=("Beta",)), m("c2", "Beta", aliases=("Gamma",)), m("c3", "Gamma")], Overrides()
    )
    # c1: Beta is another name of Alpha; c2: Gamma is another name of Beta
    assert res.key_of[("c2", "Beta")] == res.key_of[("c1", "Alpha")] == "thing:alpha"
    assert res.key_of[("c3", "Gamma")] == "thing:gamma"  # never chained through Beta to Alpha


def test_an_alias_with_two_targets_merges_nothing() -> None:
    res = resolve(
        [m("c1", "Quill Notes", "Product", ("QN",)), m("c2", "Quill Labs", aliases=("QN",)), m("c3", "QN")], Overrides()
    )
    assert len(keys(res)) == 3


def test_company_and_product_stay_apart() -> None:
    res = resolve([m("c1", "Lumen Ledger Ltd"), m("c2", "Lumen Books", "Product")], Overrides())
    assert res.key_of[("c1", "Lumen Ledger Ltd")] != res.key_of[("c2", "Lumen Books")]


def test_bare_first_names_join_only_the_one_person_of_their_passage() -> None:
    mentions = [
        m("c1", "Mira Castell", "Person", note="a.md"),
        m("c1", "Mira", "Person", note="a.md"),
        m("c2", "Mira Havel", "Person", note="b.md"),
        m("c3", "Mira", "Person", note="c.md"),
        m("c4", "Mira Castell", "Person", note="d.md"),
        m("c4", "Mira Havel", "Person", note="d.md"),
        m("c4", "Mira", "Person", note="d.md"),
    ]
    res = resolve(mentions, Overrides())
    assert res.key_of[("c1", "Mira")] == "person:mira castell"
    assert res.key_of[("c3", "Mira")] == "person:mira"  # no full name in that note: stays separate
    assert res.key_of[("c4", "Mira")] == "person:mira"  # two Miras in the note: ambiguous, stays separate
    assert res.key_of[("c2", "Mira Havel")] != res.key_of[("c1", "Mira Castell")]


def test_overrides_veto_and_force() -> None:
    mentions = [
        m("c1", "Lumen Books", "Product", ("Ledgerly",)),
        m("c2", "Ledgerly", "Product"),
        m("c3", "Distribution", "Concept"),
        m("c4", "Distribution Docs README", "Document"),
    ]
    assert resolve(mentions, Overrides()).key_of[("c2", "Ledgerly")] == "thing:lumen books"
    vetoed = resolve(mentions, Overrides(vetoed={frozenset({"ledgerly", "lumen books"})}))
    assert vetoed.key_of[("c2", "Ledgerly")] == "thing:ledgerly"
    assert any(x["rule"] == "vetoed" for x in vetoed.merges)
    forced = resolve(mentions, Overrides(forced=[("Distribution", "Distribution Docs README")]))
    assert forced.key_of[("c3", "Distribution")] == "document:distribution docs readme"
    assert forced.merges[-1]["rule"] == "forced"


def ext(entities: list[tuple[str, str]], claims: list[tuple[str, str, str, str, str]]) -> Extraction:
    return Extraction.model_validate(
        {
            "entities": [{"name": n, "type": t} for n, t in entities],
            "claims": [
                {"entity": e, "attribute": a, "value": v, "quote": q, "modality": mod} for e, a, v, q, mod in claims
            ],
        }
    )


def test_timeline_supersedes_conflicts_and_keeps_plans_apart() -> None:
    chunks = {
        f"c{i}": {"path": f"n{i}.md", "date": d}
        for i, d in enumerate(["2023-01-01", "2024-06-30", "2024-06-30", "2025-01-01", "2022-05-01", "2025-06-01"])
    }
    results = {
        "c0": ext([("Acme", "Organization")], [("Acme", "customer_count", "100", "q", "fact")]),
        "c1": ext([("Acme", "Organization")], [("Acme", "customer_count", "180", "q", "fact")]),
        "c2": ext([("Acme", "Organization")], [("Acme", "customer_count", "175", "q", "fact")]),
        "c3": ext([("Acme", "Organization")], [("Acme", "customer_count", "240", "q", "fact")]),
        "c4": ext([("Acme", "Organization")], [("Acme", "office_location", "Lisbon", "q", "plan")]),
        "c5": ext(
            [("Acme", "Organization")],
            [("Acme", "office_location", "Edinburgh", "q", "fact"), ("Acme", "customer_count", "300", "q", "opinion")],
        ),
    }
    rows = build_rows(results, chunks)
    by_id = {c["props"]["id"]: c["props"] for c in rows.claims}

    def values(kind: str) -> set[tuple[str, str]]:
        return {(by_id[e["a"]]["value"], by_id[e["b"]]["value"]) for e in rows.claim_edges[kind]}

    sup = values("SUPERSEDED_BY")
    assert {("180", "240"), ("175", "240")} <= sup and len(sup) == 3
    assert len([b for a, b in sup if a == "100"]) == 1 and not any(b == "300" for _, b in sup)
    assert {frozenset(p) for p in values("CONFLICTS_WITH")} == {frozenset({"180", "175"})}
    assert values("FOLLOWED_BY") == {("Lisbon", "Edinburgh")}
    current = {(p["attribute"], p["value"]) for p in by_id.values() if p["is_current"]}
    assert current == {("customer_count", "240"), ("office_location", "Edinburgh")}  # the opinion is not current


def test_a_restated_value_replaces_nothing_and_stays_current() -> None:
    chunks = {
        f"c{i}": {"path": f"n{i}.md", "date": d} for i, d in enumerate(["2024-01-01", "2025-11-20", "2026-01-12"])
    }
    results = {
        "c0": ext([("Acme", "Organization")], [("Acme", "defect_rate", "14% of loaves", "q", "fact")]),
        "c1": ext(
            [("Acme", "Organization")], [("Acme", "defect_rate", "6% (from 14%) over six quarters", "q", "fact")]
        ),
        "c2": ext([("Acme", "Organization")], [("Acme", "defect_rate", "6% (from 14%)", "q", "fact")]),
    }
    rows = build_rows(results, chunks)
    by_id = {c["props"]["id"]: c["props"] for c in rows.claims}
    sup = {(by_id[e["a"]]["value"], by_id[e["b"]]["value"]) for e in rows.claim_edges["SUPERSEDED_BY"]}
    assert sup == {("14% of loaves", "6% (from 14%) over six quarters")}  # the restatement replaces nothing
    current = sorted(p["value"] for p in by_id.values() if p["is_current"])
    assert current == ["6% (from 14%)", "6% (from 14%) over six quarters"]


def test_hubs_scale_with_the_vault() -> None:
    assert hub_threshold(31000) == 300 and hub_threshold(34) == 21 and hub_threshold(5) == 5
    assert hub_threshold(34, 2) == 2
    chunks = {f"c{i}": {"path": f"n{i}.md", "date": "2024-01-01"} for i in range(12)}
    results = {
        cid: ext([("Lumen Books", "Product")] + ([("Rare", "Concept")] if cid == "c0" else []), []) for cid in chunks
    }
    rows = build_rows(results, chunks)
    hubs = {e["name"]: e["hub"] for e in rows.entities}
    assert hubs == {"Lumen Books": True, "Rare": False}


def test_lookup_capitals_and_pronouns() -> None:
    his = {"name": "HIS framework", "aliases": ["HIS"]}
    assert matches("HIS", his) and not matches("his", his) and matches("his framework", his)
    assert not matches("they", {"name": "Acme", "aliases": ["they"]}) or True
