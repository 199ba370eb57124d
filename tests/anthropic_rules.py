"""The documented rules of Anthropic's Messages API that the stand-in enforces, each beside its source.

Kept apart from kb's own capability table (extract/capabilities.py) on purpose: the stand-in is written from
the documentation, so a mistake in kb's table shows up as a refused request instead of being copied here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DOCS = "https://platform.claude.com/docs/en"


@dataclass(frozen=True)
class Documented:
    max_output: int
    effort: tuple[str, ...]  # () = "This model does not support the effort parameter."
    adaptive: bool  # adaptive thinking on by default (thinking blocks billed as output)
    sampling: bool  # temperature / top_p / top_k accepted
    budget_tokens: bool  # thinking {"type": "enabled", "budget_tokens": N} accepted


# https://platform.claude.com/docs/en/about-claude/models/overview (IDs, output limits),
# https://platform.claude.com/docs/en/build-with-claude/effort (which models take effort, which levels),
# https://platform.claude.com/docs/en/models/haiku-5-5/migration-guide (Haiku 5.5: sampling parameters and
# budget_tokens refused, adaptive thinking), https://platform.claude.com/docs/en/models/haiku-5-5/overview (128K)
MODELS: dict[str, Documented] = {
    "claude-haiku-5-5": Documented(128_000, ("low", "medium", "high", "max"), True, False, False),
    "claude-haiku-4-5": Documented(64_000, (), False, True, True),
    "claude-haiku-4-5-20251001": Documented(64_000, (), False, True, True),
    "claude-sonnet-4-5": Documented(64_000, (), False, True, True),
    "claude-sonnet-4-6": Documented(64_000, ("low", "medium", "high", "max"), True, True, True),
    "claude-opus-4-5": Documented(64_000, ("low", "medium", "high"), False, True, True),
}

RULES: dict[str, str] = {
    "unknown model -> 404 not_found_error": f"{DOCS}/api/errors",
    "effort on a model without it -> 400": f"{DOCS}/build-with-claude/effort",
    "effort level the model lacks -> 400": f"{DOCS}/build-with-claude/effort",
    "unsupported JSON Schema keyword -> 400": f"{DOCS}/build-with-claude/structured-outputs#json-schema-limitations",
    "object without additionalProperties false -> 400": (
        f"{DOCS}/build-with-claude/structured-outputs#json-schema-limitations"
    ),
    "temperature/top_p/top_k on Haiku 5.5 -> 400": f"{DOCS}/models/haiku-5-5/migration-guide",
    "thinking.budget_tokens on Haiku 5.5 -> 400": f"{DOCS}/models/haiku-5-5/migration-guide",
    "max_tokens over the model's limit -> 400": f"{DOCS}/about-claude/models/overview",
    "429 carries retry-after": f"{DOCS}/api/rate-limits",
    "stop_reason max_tokens when the answer does not fit": f"{DOCS}/build-with-claude/handling-stop-reasons",
    "stop_reason refusal": f"{DOCS}/build-with-claude/handling-stop-reasons",
    "adaptive thinking blocks come first and count as output": f"{DOCS}/build-with-claude/adaptive-thinking",
    "batch custom_id matches ^[a-zA-Z0-9_-]{1,64}$ and is unique": f"{DOCS}/build-with-claude/batch-processing",
    "batch results are JSONL, one per custom_id: succeeded/errored/expired": (
        f"{DOCS}/build-with-claude/batch-processing"
    ),
    "count_tokens answers {input_tokens}": f"{DOCS}/build-with-claude/token-counting",
}

# Keywords structured outputs accept (https://platform.claude.com/docs/en/build-with-claude/structured-outputs):
# types, enum/const of primitives, anyOf/allOf, local $ref/$defs, required, additionalProperties false,
# description/title, supported string formats, minItems 0 or 1. Everything else is refused with a 400.
ALLOWED = {
    "type",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "required",
    "properties",
    "additionalProperties",
    "description",
    "title",
    "format",
    "items",
    "minItems",
    "default",
}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def schema_problem(node: Any, path: str = "schema") -> str | None:
    """The first thing in a JSON schema that structured outputs refuse, as the API would word it; else None."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            found = schema_problem(item, f"{path}[{i}]")
            if found:
                return found
        return None
    if not isinstance(node, dict):
        return None
    for key in node:
        if key not in ALLOWED:
            return f"output_config.format.{path}: JSON schema keyword '{key}' is not supported"
    if node.get("type") == "object" and node.get("additionalProperties") is not False:
        return f"output_config.format.{path}: objects must set 'additionalProperties' to false"
    if "minItems" in node and node["minItems"] not in (0, 1):
        return f"output_config.format.{path}: minItems values other than 0 or 1 are not supported"
    if "format" in node and node["format"] not in FORMATS:
        return f"output_config.format.{path}: string format '{node['format']}' is not supported"
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            found = schema_problem(sub, f"{path}.{key}.{name}")
            if found:
                return found
    for key in ("items", "anyOf", "allOf"):
        if key in node:
            found = schema_problem(node[key], f"{path}.{key}")
            if found:
                return found
    return None


def request_problem(body: dict[str, Any]) -> tuple[int, str, str] | None:
    """(status, error type, message) for a Messages request the documented API refuses; None when accepted."""
    model = str(body.get("model", ""))
    doc = MODELS.get(model)
    if doc is None:
        return 404, "not_found_error", f"model: {model}"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return 400, "invalid_request_error", "max_tokens: Input should be a valid integer greater than 0"
    if max_tokens > doc.max_output:
        return (
            400,
            "invalid_request_error",
            (
                f"max_tokens: {max_tokens} > {doc.max_output}, which is the maximum "
                f"allowed number of output tokens for {model}"
            ),
        )
    if not doc.sampling:
        for name in ("temperature", "top_p", "top_k"):
            if name in body:
                return 400, "invalid_request_error", f"{name}: is not supported on {model}; remove it"
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and "budget_tokens" in thinking:
        if not doc.budget_tokens:
            return (
                400,
                "invalid_request_error",
                (
                    f"thinking.budget_tokens: is not supported on {model}; use "
                    'thinking: {"type": "adaptive"} with output_config.effort'
                ),
            )
        if not 1024 <= int(thinking["budget_tokens"]) < max_tokens:
            return 400, "invalid_request_error", "thinking.budget_tokens: must be >= 1024 and less than max_tokens"
    return output_config_problem(body.get("output_config"), model, doc)


def output_config_problem(config: Any, model: str, doc: Documented) -> tuple[int, str, str] | None:
    if config is None:
        return None
    if not isinstance(config, dict) or set(config) - {"format", "effort"}:
        extra = sorted(set(config) - {"format", "effort"}) if isinstance(config, dict) else ["(not an object)"]
        return 400, "invalid_request_error", f"output_config.{extra[0]}: Extra inputs are not permitted"
    if "effort" in config:
        if not doc.effort:
            return 400, "invalid_request_error", "This model does not support the effort parameter."
        if config["effort"] not in doc.effort:
            return (
                400,
                "invalid_request_error",
                (
                    f"output_config.effort: '{config['effort']}' is not supported on "
                    f"{model}; use one of {', '.join(doc.effort)}"
                ),
            )
    fmt = config.get("format")
    if fmt is not None:
        if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
            return 400, "invalid_request_error", "output_config.format: expected {type: json_schema, schema: {...}}"
        found = schema_problem(fmt["schema"])
        if found:
            return 400, "invalid_request_error", found
    return None
