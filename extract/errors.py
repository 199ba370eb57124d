"""Extraction errors: transient ones are retried; fatal ones stop the run cleanly."""

from kb.errors import KbError


class ExtractError(KbError):
    """One chunk could not be extracted (after retries)."""


class InvalidOutput(ExtractError):
    """The model's answer was not valid JSON for the schema."""


class FatalExtractError(ExtractError):
    """Stop the whole run: authentication, spend limit, or a missing model. The next run resumes."""
