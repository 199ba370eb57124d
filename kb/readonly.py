"""The read-only guard for ad-hoc Cypher: text checks, the EXPLAIN query-type verdict, and response limits.

Text checks run on a normalised copy of the query, built the way Neo4j reads it: `\\uXXXX` escapes are
decoded first (Neo4j decodes them before lexing, even outside strings: `CR\\u0045ATE` is CREATE), then
string literals are blanked, `//` and `/* */` comments removed, backtick quotes dropped, the rest NFKC-
normalised and lower-cased. Refused on that copy:

- a `;` (more than one statement; a single trailing `;` is allowed);
- `LOAD CSV`, `CALL { … } IN [CONCURRENT] TRANSACTIONS`, `TERMINATE TRANSACTIONS`, a `USE` clause;
- `SHOW` commands other than SHOW INDEXES / CONSTRAINTS / PROCEDURES / FUNCTIONS (users, roles,
  privileges, databases, settings, servers and transactions are refused);
- any `dbms.` name; `db.` procedures and functions outside a read allow-list (so `db.create*`,
  `db.index.fulltext.createNodeIndex`, `db.clearQueryCaches`, `db.stats.*` are refused);
- every `apoc.` name unless it starts with a pure read-helper prefix (apoc.coll., apoc.text., apoc.map.,
  apoc.math., apoc.number., apoc.date., apoc.temporal., apoc.convert., apoc.meta., apoc.agg., apoc.bitwise.,
  apoc.hashing., apoc.label., apoc.node., apoc.rel., apoc.path., apoc.algo., apoc.scoring., apoc.any.) and
  is not a writer among them (apoc.convert.set*, apoc.date.expire*); so apoc.create, apoc.merge,
  apoc.refactor, apoc.periodic, apoc.cypher, apoc.do, apoc.load, apoc.import, apoc.export, apoc.trigger,
  apoc.schema, apoc.nodes, apoc.atomic, apoc.lock, apoc.uuid, apoc.ttl, apoc.systemdb and apoc.util are out;
- `gds.` names other than `gds.util.*` and those ending in .stream, .stats, .estimate, .list or .version;
- calls into any other namespace except Cypher's own (vector., point., date., datetime., localdatetime.,
  localtime., time., duration.).

Before any of that, a query longer than 8,000 characters or with brackets nested more than 64 deep is
refused (Neo4j's parser takes minutes on a few hundred nested brackets, before any timeout applies), and
parameters are held to 200,000 characters of JSON.

Then the server plans the query with EXPLAIN: only query type exactly "r" runs. Responses are held to
a token budget by dropping whole rows, numeric lists longer than 64 are left out, and note paths must
stay inside the vault.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from neo4j.graph import Node, Relationship
from neo4j.graph import Path as GraphPath

from kb.tokens import count_tokens

HARD_MAX_TOKENS = 8000
HARD_TIMEOUT_S = 30.0
MAX_QUERY_CHARS = 8000  # Neo4j's parser slows down steeply on long expression chains
MAX_NESTING = 64  # brackets nested deeper than this: Neo4j's parser takes minutes from about 300 levels
MAX_PARAMS_CHARS = 200_000
CHARS_PER_TOKEN_CAP = 16  # a row longer than this many characters per token of budget is cut unread
LONG_LIST = 64  # numeric lists longer than this (embeddings) are left out of rows
MAX_ROWS_SCANNED = 100_000  # rows read before counting the cut ones stops

APOC_READ = tuple(
    f"apoc.{p}."
    for p in "coll text map math number date temporal convert meta agg bitwise hashing "
    "label node rel path algo scoring any".split()
)
APOC_WRITERS = ("apoc.convert.set", "apoc.date.expire")
DB_READ = frozenset(
    f"db.{n}"
    for n in "labels relationshiptypes propertykeys info ping schema.visualization "
    "schema.nodetypeproperties schema.reltypeproperties index.fulltext.querynodes "
    "index.fulltext.queryrelationships index.fulltext.listavailableanalyzers "
    "index.vector.querynodes index.vector.queryrelationships".split()
)
GDS_READ_ENDINGS = ("stream", "stats", "estimate", "list", "version")
BUILTIN_NAMESPACES = frozenset("vector point date datetime localdatetime localtime time duration".split())
SHOW_ALLOWED = frozenset("index indexes constraint constraints procedure procedures function functions".split())
SHOW_DENIED = frozenset(
    "users role roles privilege privileges current database databases alias aliases server "
    "servers setting settings transaction transactions".split()
)
CLAUSE_WORDS = frozenset(
    "return with where order limit skip union match optional call unwind as and or xor in "
    "is contains starts ends finish yield".split()
)

_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
# string literals (backslash escapes; unterminated ones run to the end), backtick names, comments
_TOKEN = re.compile(r"""'(?:\\.|[^'\\])*'?|"(?:\\.|[^"\\])*"?|`(?:``|[^`])*`?|//[^\n\r]*|/\*.*?(?:\*/|\Z)""", re.S)
_NAME = re.compile(r"(?<![\w$.])([a-z_]\w*(?:\.[a-z_]\w*)+)", re.I)
_KEYWORDS = (
    (re.compile(r"\bload csv\b"), "LOAD CSV is not allowed"),
    (re.compile(r"\bin (?:\S+ )?(?:concurrent )?transactions\b"), "CALL { … } IN TRANSACTIONS is not allowed"),
    (re.compile(r"\bterminate transactions?\b"), "TERMINATE TRANSACTIONS is not allowed"),
    (
        re.compile(r"(?:^(?:explain |profile )?(?:cypher\b[^{]*? )?|\{ ?|\bunion (?:all )?)use [a-z_]"),
        "USE is not allowed: queries run on kb's database",
    ),
)


class Refused(Exception):
    """A query the guard will not run; the message is what the agent sees."""


def decode_escapes(text: str) -> str:
    """Decode `\\uXXXX` once, as Neo4j does before lexing: only a backslash after an even run of backslashes."""
    out: list[str] = []
    i, run = 0, 0
    while i < len(text):
        m = _ESCAPE.match(text, i) if text[i] == "\\" and run % 2 == 0 else None
        if m:
            out.append(chr(int(m.group(1), 16)))
            i, run = m.end(), 0
            continue
        run = run + 1 if text[i] == "\\" else 0
        out.append(text[i])
        i += 1
    return "".join(out)


def _code_only(m: re.Match[str]) -> str:
    """A string literal as '', a backtick name unquoted, a comment as a space."""
    token = m.group(0)
    if token[0] in "'\"":
        return "''"
    if token[0] == "`":
        return re.sub(r"[^\w.]", "_", token.strip("`").replace("``", "`"))
    return " "


def code_text(query: str) -> str:
    """The query as code only: strings blanked to '', comments removed, backtick names unquoted."""
    return _TOKEN.sub(_code_only, decode_escapes(query))


def normalise(query: str, lower: bool = True) -> str:
    """The code text, NFKC-normalised, lower-cased, whitespace collapsed and `a . b` joined to `a.b`."""
    text = unicodedata.normalize("NFKC", code_text(query))
    text = text.lower() if lower else text
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r" ?\. ?", ".", text)


def _show_reason(text: str) -> str | None:
    for m in re.finditer(r"(?<![\w$.:])show ((?:[a-z_]\w* ?){1,6})", text, re.I):
        words = m.group(1).lower().split()
        words = words[: next((i for i, w in enumerate(words) if w in ("yield", "where", "return")), len(words))]
        if not words or words[0] in CLAUSE_WORDS:
            continue  # a variable called `show`
        if not SHOW_ALLOWED.intersection(words) or SHOW_DENIED.intersection(words):
            return (
                f"SHOW {' '.join(words).upper()} is not allowed (only SHOW INDEXES, CONSTRAINTS, "
                "PROCEDURES and FUNCTIONS)"
            )
    return None


def _name_reason(name: str, invoked: bool) -> str | None:
    """Why a dotted name (procedure, function or property access) is refused, or None."""
    shown, name = name, name.lower()
    space = name.split(".", 1)[0]
    if space == "dbms":
        return f"dbms procedures are not allowed ({shown})"
    if space == "apoc":
        if name.startswith(APOC_READ) and not name.startswith(APOC_WRITERS):
            return None
        return f"{shown} is not allowed (only read-only apoc helpers such as apoc.coll.*, apoc.text.*, apoc.map.*)"
    if space == "gds":
        if name.startswith("gds.util.") or name.rsplit(".", 1)[-1] in GDS_READ_ENDINGS:
            return None
        return f"{shown} is not allowed (only gds .stream/.stats/.estimate procedures)"
    if not invoked or space in BUILTIN_NAMESPACES:
        return None
    if space == "db":
        return None if name in DB_READ else f"{shown} is not allowed (only read-only db.* procedures)"
    return f"{shown} is not allowed (unknown procedure namespace '{space}')"


def nesting(code: str) -> int:
    """How deeply brackets ( [ { nest in code text (strings and comments already blanked)."""
    depth = deepest = 0
    for ch in code:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth = max(depth - 1, 0)
    return deepest


def check_size(query: str) -> None:
    """Refuse queries so long or so deeply nested that planning them alone could outlast any timeout."""
    if len(query) > MAX_QUERY_CHARS:
        raise Refused(
            f"refused: the query has {len(query)} characters, at most {MAX_QUERY_CHARS}: "
            "pass long values as parameters ($name)"
        )
    depth = nesting(code_text(query))
    if depth > MAX_NESTING:
        raise Refused(f"refused: brackets nest {depth} deep, at most {MAX_NESTING}: flatten the expression")


def check_params(params: Mapping[str, Any]) -> None:
    """Parameters must be JSON of a bounded size."""
    try:
        size = len(dumps(params))
    except (TypeError, ValueError) as exc:
        raise Refused(f"refused: the parameters are not plain JSON values ({exc})") from exc
    if size > MAX_PARAMS_CHARS:
        raise Refused(f"refused: the parameters are {size} characters of JSON, at most {MAX_PARAMS_CHARS}")


def check_text(query: str) -> None:
    """Raise Refused when the query text breaks a rule in the module docstring."""
    check_size(query)
    text = normalise(query, lower=False)
    if ";" in (text[:-1] if text.endswith(";") else text):
        raise Refused("refused: multiple statements are not allowed (';' outside a string)")
    for pattern, what in _KEYWORDS:
        if pattern.search(text.lower()):
            raise Refused(f"refused: {what}")
    if show := _show_reason(text):
        raise Refused(f"refused: {show}")
    for m in _NAME.finditer(text):
        invoked = text[m.end() : m.end() + 2].lstrip().startswith("(") or text[: m.start()].lower().endswith("call ")
        if reason := _name_reason(m.group(1), invoked):
            raise Refused(f"refused: {reason}")


def check_query_type(query_type: str | None) -> None:
    """Only a plain read ("r") passes; writes, read-writes and schema changes are refused."""
    if query_type == "r":
        return
    if query_type == "s":
        raise Refused("refused: schema and administration commands are not allowed (query type 's')")
    if query_type in ("w", "rw"):
        raise Refused(f"refused: writes are not allowed (query type '{query_type}')")
    raise Refused(f"refused: the server did not classify the query as a read (query type {query_type!r})")


def limit_value(value: float | None, hard_max: float) -> float:
    """A configured limit (checked > 0 by kb.config), lowered to `hard_max` when set higher; never raised past it."""
    return hard_max if value is None else min(value, hard_max)


def clean(value: Any) -> Any:
    """A JSON-ready copy of a Neo4j value; numeric lists longer than LONG_LIST become a short note."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if len(value) > LONG_LIST and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return f"<list of {len(value)} numbers left out>"
        return [clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes left out>"
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return _graph_value(value)


def _graph_value(value: Any) -> Any:
    """Nodes, relationships and paths as maps; temporal and spatial values as strings."""
    if isinstance(value, Node):
        return {"_labels": sorted(value.labels), **clean(dict(value.items()))}
    if isinstance(value, Relationship):
        return {"_type": value.type, **clean(dict(value.items()))}
    if isinstance(value, GraphPath):
        return {"_nodes": [clean(n) for n in value.nodes], "_relationships": [clean(r) for r in value.relationships]}
    iso = getattr(value, "iso_format", None)
    return iso() if callable(iso) else str(value)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


def row_tokens(row: Any) -> int:
    return count_tokens(dumps(row)) + 1


def shape_rows(columns: list[str], rows: list[Any], cut: int, complete: bool, max_tokens: int) -> dict[str, Any]:
    """The cypher response: rows dropped whole from the end until its JSON fits in `max_tokens`."""
    while True:
        payload: dict[str, Any] = {"columns": columns, "rows": rows, "rows_returned": len(rows)}
        if cut:
            more = "" if complete else "at least "
            payload["rows_cut"] = cut
            payload["notice"] = (
                f"{more}{cut} more rows were cut to stay within {max_tokens} tokens: "
                "add LIMIT, aggregate, or return fewer properties"
            )
        if count_tokens(dumps(payload)) <= max_tokens or not rows:
            return payload
        rows.pop()
        cut += 1


@dataclass(frozen=True)
class Limits:
    max_tokens: int
    timeout_s: float


def limits_for(max_tokens: int | None, timeout_s: float | None) -> Limits:
    """The response and time limits: the hard maxima, or lower values from the kb config (mcp_max_tokens,
    mcp_timeout_s)."""
    return Limits(int(limit_value(max_tokens, HARD_MAX_TOKENS)), limit_value(timeout_s, HARD_TIMEOUT_S))


def collect_rows(result: Any, max_tokens: int) -> dict[str, Any]:
    """Read rows until the token budget is spent, then count (up to MAX_ROWS_SCANNED) the ones cut."""
    columns = list(result.keys())
    budget = max_tokens - 120 - count_tokens(dumps(columns))
    rows: list[dict[str, Any]] = []
    used, cut, complete = 0, 0, True
    for record in result:
        if not cut:
            row = {k: clean(v) for k, v in record.items()}
            text = dumps(row)
            used += count_tokens(text) + 1 if len(text) <= max_tokens * CHARS_PER_TOKEN_CAP else max_tokens + 1
            if used <= budget:
                rows.append(row)
                continue
        cut += 1
        if len(rows) + cut >= MAX_ROWS_SCANNED:
            complete = False
            break
    return shape_rows(columns, rows, cut, complete, max_tokens)


def in_folders(path: str, folders: Any) -> bool:
    """Whether a vault-relative path lies in one of the folders, compared case-insensitively."""
    low = path.casefold()
    return any(low.startswith(str(f).strip("/").casefold() + "/") for f in folders if str(f).strip("/"))


def vault_file(vault: Path, path: str) -> tuple[str, Path]:
    """The note's vault-relative POSIX path and its file; Refused when the path leaves the vault."""
    text = path.strip().replace("\\", "/")
    pure = PurePosixPath(text)
    if not text or "\x00" in text or pure.is_absolute() or PureWindowsPath(path).drive or ".." in pure.parts:
        raise Refused("refused: give a path relative to the vault, without '..' (e.g. 'People/Ann.md')")
    root = vault.resolve()
    target = (root / pure).resolve()
    if not target.is_relative_to(root):
        raise Refused("refused: the path resolves outside the vault")
    return pure.as_posix(), target
