"""Exact paired significance tests for comparing two search modes question by question."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class PairedResult:
    """Per-question comparison of mode A against mode B with a sign-test p-value."""

    wins: int
    losses: int
    ties: int
    p_value: float


def _binomial_two_sided(x: int, y: int) -> float:
    """Two-sided exact binomial p-value for x vs y successes under p = 0.5."""
    if x < 0 or y < 0:
        raise ValueError(f"counts must be non-negative, got {x} and {y}")
    n = x + y
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(x, y) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test p-value (ties excluded): min(1, 2 * P(X <= min)) with X ~ Bin(n, 1/2)."""
    return _binomial_two_sided(wins, losses)


def mcnemar(b: int, c: int) -> float:
    """Exact McNemar p-value: two-sided binomial test on discordant pairs b and c (not chi-square)."""
    return _binomial_two_sided(b, c)


def paired_compare(a: Sequence[float], b: Sequence[float]) -> PairedResult:
    """Count per-question wins/losses/ties of A over B (pairs with a NaN skipped) and sign-test them."""
    if len(a) != len(b):
        raise ValueError(f"paired sequences differ in length: {len(a)} vs {len(b)}")
    wins = losses = ties = 0
    for x, y in zip(a, b):
        if math.isnan(x) or math.isnan(y):
            continue
        if abs(x - y) <= TIE_TOLERANCE:
            ties += 1
        elif x > y:
            wins += 1
        else:
            losses += 1
    return PairedResult(wins=wins, losses=losses, ties=ties, p_value=sign_test(wins, losses))
