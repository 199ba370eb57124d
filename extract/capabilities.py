"""What each model kb names accepts and costs: one table, each entry with the documentation page it comes from.

The request builder sends an optional parameter only where the model's entry says it is supported; the cost
estimate reads its prices and tokenizer factor from the same entry."""

from __future__ import annotations

from dataclasses import dataclass

DOCS = "https://platform.claude.com/docs/en"
EFFORT_DOC = f"{DOCS}/build-with-claude/effort"
THINKING_DOC = f"{DOCS}/build-with-claude/adaptive-thinking"
STRUCTURED_DOC = f"{DOCS}/build-with-claude/structured-outputs"
PRICING_DOC = f"{DOCS}/about-claude/pricing"
BATCH_DOC = f"{DOCS}/build-with-claude/batch-processing"
TOKEN_COUNT_DOC = f"{DOCS}/build-with-claude/token-counting"
ERRORS_DOC = f"{DOCS}/api/errors"
RATE_LIMITS_DOC = f"{DOCS}/api/rate-limits"
STOP_REASONS_DOC = f"{DOCS}/build-with-claude/handling-stop-reasons"
MODELS_DOC = f"{DOCS}/about-claude/models/overview"


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; `long_*` apply to every token of a request whose prompt is over `long_from`."""

    input: float
    output: float
    cache_write_5m: float
    cache_read: float
    long_from: int | None = None
    long_input: float = 0.0
    long_output: float = 0.0


@dataclass(frozen=True)
class Model:
    """One model's capabilities as documented (`doc`)."""

    id: str
    doc: str
    max_output: int
    effort: tuple[str, ...]  # accepted output_config.effort levels; () = the parameter is refused
    thinking: str  # "adaptive" (on by default, billed as output) | "none" (off unless asked)
    sampling: bool  # temperature / top_p / top_k accepted
    budget_tokens: bool  # thinking.budget_tokens accepted
    structured_outputs: bool
    tokenizer_factor: float  # tokens per cl100k token for the same text
    prices: Prices


BATCH_DISCOUNT = 0.5  # Message Batches: half of every price, input, output and cache (BATCH_DOC)

MODELS: dict[str, Model] = {
    m.id: m
    for m in (
        # https://platform.claude.com/docs/en/models/haiku-5-5/overview and .../haiku-5-5/migration-guide:
        # effort low..max (default medium), adaptive thinking on by default, sampling and budget_tokens refused,
        # 128K output, the newer tokenizer counts ~30% more tokens than Haiku 4.5's
        Model(
            "claude-haiku-5-5",
            f"{DOCS}/models/haiku-5-5/overview",
            128_000,
            ("low", "medium", "high", "max"),
            "adaptive",
            False,
            False,
            True,
            1.30,
            Prices(0.10, 0.50, 0.125, 0.01, long_from=100_000, long_input=0.50, long_output=2.50),
        ),
        # https://platform.claude.com/docs/en/about-claude/models/overview: 64K output, no effort parameter
        # (EFFORT_DOC lists the models that take it), extended thinking only when asked for with budget_tokens
        Model(
            "claude-haiku-4-5", MODELS_DOC, 64_000, (), "none", True, True, True, 1.0, Prices(1.00, 5.00, 1.25, 0.10)
        ),
        Model(
            "claude-sonnet-4-5", MODELS_DOC, 64_000, (), "none", True, True, True, 1.0, Prices(3.00, 15.00, 3.75, 0.30)
        ),
    )
}
DEARER = "claude-sonnet-4-5"  # an unknown model is priced at the dearer tier: overstate, never understate
# Retired, so refused before any call (https://platform.claude.com/docs/en/about-claude/model-deprecations)
RETIRED = ("claude-3-haiku", "claude-3-5-haiku")


def model(model_id: str) -> Model | None:
    """The table entry for a model id (a dated snapshot such as claude-haiku-4-5-20251001 counts)."""
    for mid, entry in MODELS.items():
        if model_id == mid or model_id.startswith(mid + "-"):
            return entry
    return None


def pricing(model_id: str) -> Prices:
    entry = model(model_id)
    return (entry or MODELS[DEARER]).prices


def usd(model_id: str, input_tokens: int, output_tokens: int, batch: bool = False) -> float:
    """The price of one call; the long-prompt tier applies to all its tokens."""
    p = pricing(model_id)
    long_ = p.long_from is not None and input_tokens > p.long_from
    p_in, p_out = (p.long_input, p.long_output) if long_ else (p.input, p.output)
    return (input_tokens * p_in + output_tokens * p_out) / 1e6 * (BATCH_DISCOUNT if batch else 1.0)


def price_rows() -> list[dict[str, object]]:
    """The price table as rows (README, `kb extract models`)."""
    return [
        {
            "model": m.id,
            "input": m.prices.input,
            "output": m.prices.output,
            "batch_input": m.prices.input * BATCH_DISCOUNT,
            "batch_output": m.prices.output * BATCH_DISCOUNT,
            "cache_write_5m": m.prices.cache_write_5m,
            "cache_read": m.prices.cache_read,
            "doc": m.doc,
        }
        for m in MODELS.values()
    ]
