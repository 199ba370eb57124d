"""Cost estimates before any paid call: tokens counted (the provider's count, or a calibrated factor per model
family over an offline count), answers estimated from recorded usage, prices from extract/capabilities.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kb.errors import ConfigError
from kb.extract.capabilities import model as model_entry
from kb.extract.capabilities import usd
from kb.tokens import count_tokens

# Typical answer sizes, in cl100k tokens (scaled by the model's tokenizer factor): the example vault's 34
# recorded extractions average 1,176 tokens of JSON, its 2 triage answers 64; judging and auditing answer a
# verdict and a reason; a re-typing batch answers up to 40 small items.
OUTPUT_PER_CALL = {"extract": 1176, "triage": 64, "dedupe": 60, "audit": 60, "retype": 400}
# Adaptive thinking at low effort, billed as output; not measured against the real API (no key here):
# an allowance, shown in the estimate and replaced by recorded usage once answers are cached.
THINKING_PER_CALL = 150


@dataclass(frozen=True)
class Call:
    """One paid call to estimate: its kind, folder and prompt parts."""

    kind: str
    folder: str
    system: str
    message: str
    schema_tokens: int


@dataclass
class Estimate:
    """Calls, tokens and dollars per folder for one run."""

    model: str
    batch: bool = False
    per_folder: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, folder: str, input_tokens: int, output_tokens: int, usd: float) -> None:
        row = self.per_folder.setdefault(folder or "/", {"calls": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0})
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
        mode = ", batch: half price" if self.batch else ""
        out = [
            f"  {f:<40} {int(r['calls']):>6} calls {int(r['input_tokens']):>10,} in {int(r['output_tokens']):>9,} "
            f"out ~${r['usd']:.2f}"
            for f, r in sorted(self.per_folder.items())
        ]
        out.append(f"  {'total':<40} {self.calls:>6} calls {'':>24}~${self.total_usd:.2f} ({self.model}{mode})")
        return out


def factor(model: str, remote: bool) -> float:
    """Tokens of this model per cl100k token: the documented family factor (newer tokenizers count more)."""
    entry = model_entry(model)
    return entry.tokenizer_factor if entry is not None and remote else 1.0


def estimate(model: str, remote: bool, calls: list[Call], batch: bool = False, scale: float | None = None) -> Estimate:
    """Dollars for the calls; `scale` (the provider's count over the offline count) replaces the family factor."""
    est = Estimate(model, batch)
    f = scale if scale is not None else factor(model, remote)
    entry = model_entry(model)
    thinking = THINKING_PER_CALL if entry is not None and entry.thinking == "adaptive" else 0
    for c in calls:
        tin = int((count_tokens(c.system) + count_tokens(c.message) + c.schema_tokens) * f)
        tout = int(OUTPUT_PER_CALL[c.kind] * factor(model, remote)) + thinking
        est.add(c.folder, tin, tout, usd(model, tin, tout, batch) if remote else 0.0)
    return est


def check(
    est: Estimate, threshold: float, yes: bool, confirm: Callable[[str], bool] | None, what: str = "Extraction"
) -> None:
    """Go on, or stop before any paid call with the one-line way forward."""
    if est.total_usd <= threshold or yes:
        return
    question = f"{what} will cost about ${est.total_usd:.2f} ({est.calls} calls). Go ahead?"
    if confirm is not None and confirm(question):
        return
    raise ConfigError(
        f"estimated ${est.total_usd:.2f} for {est.calls} calls is over the "
        f"${threshold:.2f} threshold: rerun with --yes (see it first with --dry-run)"
    )
