"""Cost estimates before any paid call: input tokens counted, output estimated, prices in one table."""

from __future__ import annotations

from dataclasses import dataclass, field

# USD per million tokens (input, output), as published by each provider.
PRICES: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-5-haiku-latest": (0.80, 4.00),
    "claude-3-haiku-20240307": (0.25, 1.25),
    "claude-sonnet-4-5": (3.00, 15.00),
}
OUTPUT_PER_CHUNK = 450  # typical extraction answer, in tokens
OUTPUT_PER_TRIAGE = 40
LOCAL = (0.0, 0.0)


def price(model: str, remote: bool) -> tuple[float, float]:
    if not remote:
        return LOCAL
    for name, p in PRICES.items():
        if model.startswith(name):
            return p
    return PRICES["claude-sonnet-4-5"]  # unknown: assume the dearer tier rather than understate


@dataclass
class Estimate:
    """Calls, tokens and dollars per folder for one run."""

    model: str
    per_folder: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, folder: str, input_tokens: int, output_tokens: int, usd: float) -> None:
        row = self.per_folder.setdefault(folder or "/", {"calls": 0, "input_tokens": 0, "output_tokens": 0,
                                                          "usd": 0.0})
        row["calls"] += 1
        row["input_tokens"] += input_tokens
        row["output_tokens"] += output_tokens
        row["usd"] += usd

    @property
    def total_usd(self) -> float:
        return sum(r["usd"] for r in self.per_folder.values())

    @property
    def calls(self) -> int:
        return int(sum(r["calls"] for r in self.per_folder.values()))

    def lines(self) -> list[str]:
        out = [f"  {f:<40} {int(r['calls']):>6} calls {int(r['input_tokens']):>10,} in {int(r['output_tokens']):>9,} "
               f"out ~${r['usd']:.2f}" for f, r in sorted(self.per_folder.items())]
        out.append(f"  {'total':<40} {self.calls:>6} calls {'':>24}~${self.total_usd:.2f} ({self.model})")
        return out
