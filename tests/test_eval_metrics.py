"""Hand-computed checks for eval.metrics and eval.stats."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from kb.eval.metrics import (
    ContextBlock,
    all_gold_at,
    context_text,
    count_tokens,
    current_band,
    current_first,
    fact_recall,
    facts_found,
    mrr,
    ndcg_at,
    normalise_ws,
    note_recall_in,
    pack_budget,
    percentile,
    precision_in,
    recall_at,
)
from kb.eval.stats import PairedResult, mcnemar, paired_compare, sign_test

GOLD = {"g2": 2, "g1": 1}


def test_ndcg_hand_computed() -> None:
    """DCG and IDCG match the hand-written formula."""
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    idcg = 2 / 1 + 1 / math.log2(3)
    assert ndcg_at(["x", "g2", "y", "g1"], GOLD, 10) == pytest.approx(dcg / idcg, abs=1e-9)


def test_ndcg_perfect_and_zero() -> None:
    """A perfect ranking scores 1.0; no gold in the top k scores 0.0."""
    assert ndcg_at(["g2", "g1", "x"], GOLD, 3) == pytest.approx(1.0, abs=1e-12)
    assert ndcg_at(["x", "y", "g2", "g1"], GOLD, 2) == 0.0
    assert ndcg_at([], GOLD, 5) == 0.0


def test_ndcg_cutoff_limits_ideal() -> None:
    """With k=1 the ideal holds only the best grade."""
    assert ndcg_at(["g1", "g2"], GOLD, 1) == pytest.approx(0.5, abs=1e-12)


def test_ndcg_ignores_duplicates() -> None:
    """A gold note repeated in the ranking earns its gain once."""
    dcg = 2 / math.log2(2)
    idcg = 2 + 1 / math.log2(3)
    assert ndcg_at(["g2", "g2", "x"], GOLD, 3) == pytest.approx(dcg / idcg, abs=1e-9)


def test_recall_all_gold_mrr() -> None:
    """Recall, all-gold and MRR on a small ranking."""
    ranked = ["x", "g2", "y", "g1"]
    assert recall_at(ranked, GOLD, 1) == 0.0
    assert recall_at(ranked, GOLD, 2) == 0.5
    assert recall_at(ranked, GOLD, 4) == 1.0
    assert all_gold_at(ranked, GOLD, 3) == 0.0
    assert all_gold_at(ranked, GOLD, 4) == 1.0
    assert mrr(ranked, GOLD) == 0.5
    assert mrr(["x", "y", "g1"], GOLD) == pytest.approx(1 / 3)
    assert mrr(["x", "y"], GOLD) == 0.0


def test_empty_gold_is_nan() -> None:
    """Rank metrics are undefined (nan) without gold notes."""
    for value in (recall_at(["a"], {}, 5), all_gold_at(["a"], {}, 5), mrr(["a"], {}), ndcg_at(["a"], {}, 5)):
        assert math.isnan(value)


def test_bad_k_rejected() -> None:
    """k must be positive."""
    with pytest.raises(ValueError):
        recall_at(["g1"], GOLD, 0)


def test_sign_test_values() -> None:
    """Exact binomial values for the sign test."""
    assert sign_test(8, 1) == pytest.approx(0.0390625, abs=1e-15)
    assert sign_test(1, 8) == sign_test(8, 1)
    assert sign_test(5, 5) == 1.0
    assert sign_test(0, 0) == 1.0
    assert sign_test(10, 0) == 2 / 1024
    assert sign_test(3, 1) == pytest.approx(2 * 5 / 16)


def test_mcnemar_matches_binomial() -> None:
    """Exact McNemar equals the two-sided binomial on the discordant pairs."""
    assert mcnemar(8, 1) == sign_test(8, 1)
    assert mcnemar(0, 10) == 2 / 1024
    assert mcnemar(0, 0) == 1.0
    with pytest.raises(ValueError):
        mcnemar(-1, 2)


def test_paired_compare_skips_nan() -> None:
    """Wins, losses and ties are counted and NaN pairs are skipped."""
    a = [1.0, 0.5, 0.2, math.nan, 0.3]
    b = [0.0, 0.5, 0.4, 1.0, math.nan]
    assert paired_compare(a, b) == PairedResult(wins=1, losses=1, ties=1, p_value=1.0)
    result = paired_compare([1.0] * 8 + [0.0], [0.0] * 8 + [1.0])
    assert (result.wins, result.losses, result.ties) == (8, 1, 0)
    assert result.p_value == pytest.approx(0.0390625)
    with pytest.raises(ValueError):
        paired_compare([1.0], [])


def test_normalise_ws() -> None:
    """All whitespace runs collapse to one space."""
    assert normalise_ws("  a\n\tb \r\n c\u00a0d  ") == "a b c d"


def test_fact_recall_normalises_whitespace() -> None:
    """A quote split across a line break is still found."""
    context = "The seed was\n$2.4M  at a\tvaluation of $12M."
    quotes = ["seed was $2.4M at a", "valuation of\n$12M", "Series A"]
    assert facts_found(context, quotes) == [True, True, False]
    assert fact_recall(context, quotes) == pytest.approx(2 / 3)
    assert math.isnan(fact_recall(context, []))


def test_count_tokens() -> None:
    """Token counts come from cl100k (special-token text is plain text)."""
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("<|endoftext|>") > 1


def test_pack_budget_keeps_whole_blocks_in_order() -> None:
    """Blocks that fit are kept whole and in order."""
    blocks = [ContextBlock("a.md", "alpha beta"), ContextBlock("b.md", "gamma")]
    blocks.append(ContextBlock("c.md", "delta"))
    total = sum(count_tokens(b.text) for b in blocks)
    assert pack_budget(blocks, total) == blocks
    assert pack_budget(blocks, 0) == []


def test_pack_budget_truncates_exactly() -> None:
    """The first block that does not fit is cut at the budget and packing stops."""
    first = ContextBlock("a.md", "one two three four five")
    second = ContextBlock("b.md", " ".join(f"word{i}" for i in range(200)))
    third = ContextBlock("c.md", "never included")
    budget = count_tokens(first.text) + 17
    packed = pack_budget([first, second, third], budget)
    assert [b.path for b in packed] == ["a.md", "b.md"]
    assert packed[0] == first
    assert second.text.startswith(packed[1].text)
    assert sum(count_tokens(b.text) for b in packed) == budget


def test_pack_budget_truncates_first_block() -> None:
    """A single oversized block is truncated to exactly the budget."""
    block = ContextBlock("a.md", "The quick brown fox jumps over the lazy dog. " * 20)
    packed = pack_budget([block], 25)
    assert len(packed) == 1 and count_tokens(packed[0].text) == 25


def test_context_recall_and_precision() -> None:
    """Note recall and token precision over a packed context."""
    blocks = [ContextBlock("g2", "alpha beta"), ContextBlock("x", "gamma delta"), ContextBlock("g1", "")]
    assert note_recall_in(blocks, GOLD) == 0.5
    assert precision_in(blocks, GOLD) == pytest.approx(2 / 4)
    assert context_text(blocks[:2]) == "alpha beta\n\ngamma delta"
    assert math.isnan(note_recall_in(blocks, {}))
    assert math.isnan(precision_in([], GOLD))


def test_current_first() -> None:
    """Current note must outrank every ranked distractor."""
    assert current_first(["cur", "d1", "d2"], "cur", ["d1", "d2"]) == 1.0
    assert current_first(["d1", "cur"], "cur", ["d1", "d2"]) == 0.0
    assert current_first(["x", "cur"], "cur", ["d1"]) == 1.0
    assert current_first(["d1", "x"], "cur", ["d1"]) == 0.0
    assert current_first(["x"], "cur", ["d1"]) == 0.0
    assert current_first(["cur"], None, ["d1"]) is None
    assert current_first(["cur"], "cur", []) is None


def test_current_band() -> None:
    """The band the current note ranks in; absent below the last band or unranked; None when not scored."""
    ranked = [f"n{i}" for i in range(1, 31)]
    assert current_band(ranked, "n1", ["d"]) == "1-5"
    assert current_band(ranked, "n5", ["d"]) == "1-5"
    assert current_band(ranked, "n6", ["d"]) == "6-10"
    assert current_band(ranked, "n20", ["d"]) == "11-20"
    assert current_band(ranked, "n21", ["d"]) == "absent"
    assert current_band(ranked, "gone", ["d"]) == "absent"
    assert current_band(ranked, None, ["d"]) is None
    assert current_band(ranked, "n1", []) is None


def test_report_splits_current_first_by_band() -> None:
    """The report's table counts each mode's questions per band with their current-first."""
    from kb.eval.harness import METRICS, Row
    from kb.eval.report import current_table, markdown

    def row(qid: str, mode: str, cf: float | None, at: str | None) -> Row:
        metrics: dict[str, float | None] = {**{m: 0.0 for m in METRICS}, "current_first": cf}
        return Row(qid, "temporal", mode, metrics, [], 0, 0.0, 0.0, [], None, at)

    rows = [
        row("a", "graph", 1.0, "1-5"),
        row("b", "graph", 0.0, "1-5"),
        row("c", "graph", 0.0, "absent"),
        row("a", "hybrid", 0.0, "6-10"),
        row("b", "hybrid", 1.0, "1-5"),
        row("c", "hybrid", 0.0, "11-20"),
        row("d", "hybrid", None, None),
    ]
    table = current_table(rows, ["hybrid", "graph"])
    assert table[2] == "| 1-5 | 1, 1.000 | 2, 0.500 |"
    assert table[3] == "| 6-10 | 1, 0.000 | 0, – |"
    assert table[4] == "| 11-20 | 1, 0.000 | 0, – |"
    assert table[5] == "| absent | 0, – | 1, 0.000 |"
    assert current_table([row("d", "hybrid", None, None)], ["hybrid"]) == []
    assert "## Current-first by where the current note ranked" in markdown(rows, ["hybrid", "graph"], {})


def test_a_current_first_miss_gets_its_cause_from_how_the_claims_were_read() -> None:
    """Graph search tells each note's reading (states / outdated / not_fact / none; absent when its claims were not
    read): a miss is the current note not found, not read, read with no claim on the question, misread, or beaten
    by a distractor that states it too, that had no claim read, or that the bounded drop left above it."""
    from kb.eval.metrics import CAUSES, current_cause

    ranked = ["d1", "cur", "d2", "other"]

    def cause(standings: dict[str, str] | None, order: list[str] = ranked) -> str | None:
        return current_cause(order, standings, "cur", ["d1", "d2"])

    assert cause({"cur": "states"}, ["cur", "d1"]) is None  # a hit
    assert cause(None) is None  # a mode that reads no claims
    assert current_cause(ranked, {}, None, ["d1"]) is None  # no current note: not scored
    assert cause({}, ["d1", "other"]) == CAUSES[0]
    assert cause({}) == CAUSES[1]  # no note's claims read: not a question of state
    assert cause({"d1": "states"}) == CAUSES[2]
    assert cause({"cur": "none", "d1": "states"}) == CAUSES[3]
    assert cause({"cur": "not_fact", "d1": "states"}) == CAUSES[4]
    assert cause({"cur": "outdated", "other": "none"}) == CAUSES[4]
    assert cause({"cur": "states", "d1": "states"}) == CAUSES[5]
    assert cause({"cur": "states", "d1": "none"}) == CAUSES[6]
    assert cause({"cur": "states"}) == CAUSES[6]  # the distractor's claims were not read
    assert cause({"cur": "states", "d1": "outdated"}) == CAUSES[7]
    assert cause({"cur": "states", "d1": "outdated", "d2": "states"}) == CAUSES[7]  # d2 is below the current note


def test_the_report_counts_current_first_misses_by_cause() -> None:
    """Only modes that read claims get a column; no table when no row has a cause."""
    from kb.eval.harness import METRICS, Row
    from kb.eval.metrics import CAUSES
    from kb.eval.report import cause_table, markdown

    def row(qid: str, mode: str, cause: str | None) -> Row:
        metrics: dict[str, float | None] = {**{m: 0.0 for m in METRICS}, "current_first": 0.0}
        return Row(qid, "temporal", mode, metrics, [], 0, 0.0, 0.0, [], None, "1-5", cause)

    rows = [row("a", "graph", CAUSES[5]), row("b", "graph", CAUSES[5]), row("c", "graph", CAUSES[0])]
    rows += [row("a", "hybrid", None), row("b", "hybrid", None)]
    table = cause_table(rows, ["hybrid", "graph"])
    assert table[0] == "| cause | graph |"
    assert f"| {CAUSES[5]} | 2 |" in table and f"| {CAUSES[0]} | 1 |" in table and f"| {CAUSES[3]} | 0 |" in table
    assert cause_table(rows[3:], ["hybrid"]) == []
    assert "## Current-first misses by how graph search read the claims" in markdown(rows, ["hybrid", "graph"], {})


def test_percentile_matches_numpy() -> None:
    """Linear interpolation agrees with numpy.percentile."""
    rng = random.Random(7)
    for size in (1, 2, 5, 17, 100):
        values = [rng.uniform(0, 1000) for _ in range(size)]
        for p in (0, 5, 25, 50, 90, 95, 99, 100):
            assert percentile(values, p) == pytest.approx(float(np.percentile(values, p)), abs=1e-9)
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_several_sets_are_summed_up_per_set_and_pooled_with_the_cells_below_naive() -> None:
    """Each set's row per mode says which metrics fall below the naive arm; pooled rows and the cell count follow."""
    from kb.eval.harness import METRICS, Row
    from kb.eval.report import behind, sets_summary

    def row(qid: str, mode: str, r10: float, mrr: float) -> Row:
        metrics: dict[str, float | None] = {**{m: 0.5 for m in METRICS}, "recall@10": r10, "mrr": mrr}
        return Row(qid, "single_fact", mode, metrics, [], 0, 0.0, 0.0, [], None, None)

    a = [row("a1", "hybrid", 1.0, 0.5), row("a1", "naive", 0.0, 1.0)]
    b = [row("b1", "hybrid", 1.0, 1.0), row("b1", "naive", 1.0, 0.5)]
    assert behind(a, "hybrid") == ["mrr"] and behind(b, "hybrid") == []
    text = sets_summary({"a": a, "b": b}, ["hybrid", "naive"], {"vault": "v"})
    # each cell behind says by how many questions won / lost, and the sign test's p
    assert "| a | hybrid | 1 | 1.000 | 0.500 | 0.500 | 0.500 | 0.500 | mrr (0/1, p 1.00) |" in text
    assert "| b | hybrid | 1 | 1.000 | 0.500 | 1.000 | 0.500 | 0.500 | – |" in text
    assert "| all | hybrid | 2 | 1.000 | 0.500 | 0.750 | 0.500 | 0.500 | – |" in text  # pooled: ahead on MRR
    assert "| hybrid | 1 | 8 | 0 |" in text  # one cell of 2 sets x 4 metrics, not a significant one
    assert "below naive" not in sets_summary({"a": a}, ["hybrid"], {})  # no naive arm, no comparison


def test_a_cell_below_naive_is_counted_significant_only_when_the_sign_test_says_so() -> None:
    """Six questions all lost on MRR is a significant cell (p = 0.03); the same set with five of them tied is not."""
    from kb.eval.harness import METRICS, Row
    from kb.eval.report import against_baseline, sets_summary

    def row(qid: str, mode: str, mrr: float) -> Row:
        metrics: dict[str, float | None] = {**{m: 0.5 for m in METRICS}, "mrr": mrr}
        return Row(qid, "single_fact", mode, metrics, [], 0, 0.0, 0.0, [], None, None)

    lost = [r for i in range(6) for r in (row(f"q{i}", "hybrid", 0.5), row(f"q{i}", "naive", 1.0))]
    res = against_baseline(lost, "hybrid", "mrr")
    assert (res.wins, res.losses, res.ties) == (0, 6, 0) and round(res.p_value, 4) == 0.0312
    text = sets_summary({"a": lost}, ["hybrid", "naive"], {})
    assert "| a | hybrid | 6 | 0.500 | 0.500 | 0.500 | 0.500 | 0.500 | mrr (0/6, p 0.03) |" in text
    assert "| hybrid | 1 | 4 | 1 |" in text
    tied = lost[:2] + [row(f"q{i}", m, 1.0) for i in range(1, 6) for m in ("hybrid", "naive")]
    assert "| hybrid | 1 | 4 | 0 |" in sets_summary({"a": tied}, ["hybrid", "naive"], {})
