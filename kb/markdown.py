"""Markdown structure from markdown-it tokens: headings, code to mask, wikilinks, tags."""

from __future__ import annotations

import bisect
import re
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

# a wiki link, and an embed when "!" stands before it; this pattern and TAG start with a literal, which the regex
# engine scans for (a leading "(!?)" or look-behind tried every position: ~40x slower on long notes)
WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
BACKTICKS = re.compile(r"`+")
# Obsidian tags: after whitespace or line start (checked by `_tags`); letters, digits, _ - /; not all digits.
TAG = re.compile(r"#(\w[\w\-/]*)")
BLOCK_ID = re.compile(r"\s\^([A-Za-z0-9-]+)\s*$")


@dataclass(frozen=True)
class Heading:
    """A heading outside code: its level, text and 0-based line in the body."""

    level: int
    text: str
    line: int


@dataclass(frozen=True)
class RawLink:
    """A link as written; `target` is what resolution looks up."""

    target: str
    display: str | None
    heading: str | None
    block: str | None
    embed: bool
    kind: str  # "wiki" or "md"


@dataclass(frozen=True)
class Structure:
    headings: tuple[Heading, ...]
    links: tuple[RawLink, ...]
    tags: tuple[str, ...]
    masked: str  # the body with code blanked out, line for line


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    """CommonMark without its inline pass: for a body where no link can occur (parse_structure 31% faster)."""
    return MarkdownIt("commonmark").disable("inline")


def may_link(body: str) -> bool:
    """Whether a Markdown link or image can occur: an inline one needs "](", a reference one its definition's
    "]:" (autolinks name a scheme, and external links are not kept)."""
    return "](" in body or "]:" in body


def _inline_text(token: Token) -> str:
    if not token.children and token.content:  # not parsed inline (_block_parser): no reference to read
        token = _parser().parseInline(token.content)[0]
    return "".join(c.content for c in token.children or [] if c.type in ("text", "code_inline")).strip()


def parse_structure(body: str) -> Structure:
    """Headings, links and tags of a note body; nothing inside code counts."""
    tokens = (_parser() if may_link(body) else _block_parser()).parse(body)
    lines = body.split("\n")
    code_lines: set[int] = set()
    headings: list[Heading] = []
    md_links: list[RawLink] = []
    for i, tok in enumerate(tokens):
        if tok.type in ("fence", "code_block") and tok.map:
            code_lines.update(range(tok.map[0], tok.map[1]))
        elif tok.type == "heading_open" and tok.map:
            headings.append(Heading(int(tok.tag[1]), _inline_text(tokens[i + 1]), tok.map[0]))
        elif tok.type == "inline":
            md_links.extend(_markdown_links(tok))
    if code_lines or "`" in body:
        masked = "\n".join(
            " " * len(line) if n in code_lines else _mask_inline_code(line) for n, line in enumerate(lines)
        )
    else:
        masked = body
    found = list(WIKILINK.finditer(masked))
    embeds = [m.start() > 0 and masked[m.start() - 1] == "!" for m in found]
    wiki = [_wikilink(embed, m.group(1)) for m, embed in zip(found, embeds)]
    return Structure(tuple(headings), tuple(wiki + md_links), _tags(_blanked(masked, found, embeds)), masked)


def _blanked(text: str, found: list[re.Match[str]], embeds: list[bool]) -> str:
    """`text` with each wiki link (and its "!") blanked out, lengths kept."""
    parts: list[str] = []
    at = 0
    for m, embed in zip(found, embeds):
        start = m.start() - embed
        parts += [text[at:start], " " * (m.end() - start)]
        at = m.end()
    return "".join(parts) + text[at:]


def _tags(text: str) -> tuple[str, ...]:
    """Tags after whitespace or at a line's start, lower-cased; "#123" is not a tag."""
    found = [m.group(1) for m in TAG.finditer(text) if m.start() == 0 or text[m.start() - 1].isspace()]
    return tuple(t.rstrip("/").lower() for t in found if any(ch.isalpha() for ch in t))


def _mask_inline_code(line: str) -> str:
    """Blank out code spans: a run of n backticks up to the next run of exactly n (CommonMark).

    Runs are indexed by length, so a line of thousands of backticks takes linear time (a backreference
    regex took minutes on 1,500 of them).
    """
    if "`" not in line:
        return line
    runs = [(m.start(), m.end()) for m in BACKTICKS.finditer(line)]
    by_len: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(i)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        a, b = runs[i]
        same = by_len[b - a]
        k = bisect.bisect_right(same, i)
        if k < len(same) and runs[same[k]][0] > b:  # a closer with something between
            close = runs[same[k]]
            spans.append((a, close[1]))
            i = same[k] + 1
        else:
            i += 1
    if not spans:
        return line
    out, last = [], 0
    for a, b in spans:
        out.append(line[last:a])
        out.append(" " * (b - a))
        last = b
    out.append(line[last:])
    return "".join(out)


def _wikilink(embed: bool, inner: str) -> RawLink:
    # Inside a Markdown table Obsidian writes the pipe escaped: [[Note\|alias]], ![[image.png\|100]].
    target, _, display = inner.replace("\\|", "|").partition("|")
    target, _, anchor = target.partition("#")
    heading = block = None
    if anchor.startswith("^"):
        block = anchor[1:].strip() or None
    elif anchor:
        heading = anchor.strip() or None
    return RawLink(target.strip(), display.strip() or None, heading, block, embed, "wiki")


def _markdown_links(inline: Token) -> list[RawLink]:
    out: list[RawLink] = []
    children = inline.children or []
    for i, child in enumerate(children):
        if child.type not in ("link_open", "image"):
            continue
        href = str(child.attrGet("href") or child.attrGet("src") or "")
        if not href or re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I):
            continue  # external URL or other scheme
        path, _, anchor = urllib.parse.unquote(href).partition("#")
        if not path:
            continue
        if child.type == "image":
            text = child.content
        else:
            text = _link_text(children[i + 1 :])
        heading = anchor or None
        out.append(RawLink(path, text.strip() or None, heading, None, child.type == "image", "md"))
    return out


def _link_text(rest: list[Token]) -> str:
    parts: list[str] = []
    for tok in rest:
        if tok.type == "link_close":
            break
        parts.append(tok.content)
    return "".join(parts)[:200]


def block_ids(body: str) -> tuple[str, ...]:
    """Block ids (`^id` at a line end) defined in the body."""
    return tuple(m.group(1) for line in body.split("\n") if (m := BLOCK_ID.search(line)))


def expand_tags(tags: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Tags plus their parents (`client/active` also counts under `client`), sorted, unique."""
    out: set[str] = set()
    for tag in tags:
        parts = [p for p in tag.strip().lstrip("#").lower().split("/") if p]
        out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return tuple(sorted(out))
