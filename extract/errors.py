"""Extraction errors: transient ones are retried; fatal ones stop the run at once; the rest fail one item."""

from kb.errors import KbError


class ExtractError(KbError):
    """One chunk could not be extracted (after retries)."""


class InvalidOutput(ExtractError):
    """The model's answer was not valid JSON for the schema."""


class Truncated(ExtractError):
    """The answer stopped at max_tokens: recorded with its reason, never retried blindly."""


class Refused(ExtractError):
    """The model declined (stop_reason "refusal"): recorded with its reason, never retried."""


class FatalExtractError(ExtractError):
    """Stop the whole run: a request the API refuses (400, 404), authentication, spend limit, or a missing
    model. Nothing later would succeed; the next run resumes."""
