"""Entity resolution by rules, aliases without chaining, namesake guards and hand overrides.

Precision over recall: a wrong merge is worse than a missed one, so every merge needs a rule that allows it,
is logged with that rule, and can be vetoed in overrides.yaml. Deterministic: inputs are sorted first.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kb.extract.schema import SHARED_NAMESPACE

COMPANY_SUFFIXES = (
    "inc",
    "incorporated",
    "ltd",
    "limited",
    "llc",
    "gmbh",
    "plc",
    "corp",
    "corporation",
    "co",
    "ag",
    "sa",
    "sas",
    "bv",
    "oy",
    "ab",
    "pty",
)
TLD_SUFFIXES = (".ai", ".io", ".com", ".app", ".co")


_NOT_NAME = re.compile(r"[^\w\s&+]")


@lru_cache(maxsize=200_000)  # pure, and called for the same few names again and again
def norm(name: str) -> str:
    """Case, punctuation and whitespace folded (accents kept)."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _NOT_NAME.sub(" ", text)
    return " ".join(text.split())


def namespace(etype: str) -> str:
    return "thing" if etype in SHARED_NAMESPACE else etype.lower()


@lru_cache(maxsize=200_000)
def rule_key(name: str, etype: str) -> str:
    """The rule-level identity: namespace plus the folded name, without web or company suffixes."""
    raw = unicodedata.normalize("NFKC", name).strip().casefold()
    if namespace(etype) == "thing":
        for tld in TLD_SUFFIXES:
            if raw.endswith(tld) and len(raw) > len(tld) + 1:
                raw = raw[: -len(tld)]
        words = norm(raw).split()
        while len(words) > 1 and words[-1] in COMPANY_SUFFIXES:
            words.pop()
        return f"thing:{' '.join(words)}"
    return f"{namespace(etype)}:{norm(raw)}"


@dataclass
class Mention:
    """One entity as one chunk's extraction names it."""

    chunk: str
    note: str
    date: str
    name: str
    type: str
    aliases: tuple[str, ...]


@dataclass
class Overrides:
    """Hand decisions from overrides.yaml; they win over every rule."""

    vetoed: set[frozenset[str]] = field(default_factory=set)
    forced: list[tuple[str, str]] = field(default_factory=list)  # (merge this, into this)
    blocked_aliases: set[str] = field(default_factory=set)
    hub_threshold: int | None = None

    @classmethod
    def from_yaml(cls, data: dict[str, Any]) -> Overrides:
        return cls(
            vetoed={frozenset(norm(x) for x in pair) for pair in data.get("merges_vetoed", []) or []},
            forced=[(str(a), str(b)) for a, b in (data.get("merges_forced", []) or [])],
            blocked_aliases={norm(a) for a in data.get("aliases_blocked", []) or []},
            hub_threshold=data.get("hub_threshold"),
        )


@dataclass
class Resolution:
    """Mention -> canonical entity key, and the log of every merge with its reason."""

    key_of: dict[tuple[str, str], str]  # (chunk, mention name) -> entity key
    merges: list[dict[str, str]]


class _Groups:
    """Union-find over rule keys that remembers why two keys were joined."""

    def __init__(self, keys: list[str]) -> None:
        self.parent = {k: k for k in keys}

    def find(self, k: str) -> str:
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def join(self, child: str, root: str) -> None:
        self.parent[self.find(child)] = self.find(root)


def _display(k: str) -> str:
    return k.split(":", 1)[1].split("@", 1)[0]


def resolve(
    mentions: list[Mention], overrides: Overrides, judged: list[tuple[str, str, str]] | None = None
) -> Resolution:
    """Rules, unambiguous aliases (no chains), bare first names within a note, judged near-duplicates
    (child key, root key, reason), then the overrides."""
    mentions = sorted(mentions, key=lambda m: (m.chunk, m.name, m.type))
    base = {(m.chunk, m.name): _mention_key(m) for m in mentions}
    groups = _Groups(sorted(set(base.values()) | {k.split("@", 1)[0] for k in base.values()}))
    merges: list[dict[str, str]] = []

    def merge(child: str, root: str, rule: str, reason: str) -> None:
        if child not in groups.parent or root not in groups.parent:
            return  # an alias nobody uses as a name: nothing to merge, it stays an alias
        if groups.find(child) == groups.find(root):
            return
        if frozenset((_display(child), _display(root))) in overrides.vetoed:
            merges.append({"from": child, "into": root, "rule": "vetoed", "reason": "overrides.yaml merges_vetoed"})
            return
        groups.join(child, root)
        merges.append({"from": child, "into": root, "rule": rule, "reason": reason})

    _alias_merges(mentions, base, overrides, merge)
    _first_name_merges(mentions, base, merge)
    for k in sorted(set(base.values())):  # bare first names no note could place: one entity per name
        if "@" in k and groups.find(k) == k:
            groups.join(k, k.split("@", 1)[0])
    for child, root, reason in sorted(judged or []):
        merge(child, root, "llm", reason)
    for child, root in overrides.forced:
        ck, rk = _find_key(child, base), _find_key(root, base)
        if ck and rk:
            groups.join(ck, rk)
            merges.append({"from": ck, "into": rk, "rule": "forced", "reason": "overrides.yaml merges_forced"})
    key_of = {pair: groups.find(k) for pair, k in base.items()}
    return Resolution(key_of, merges)


def _bare_first_name(m: Mention) -> bool:
    return m.type == "Person" and len(norm(m.name).split()) == 1


def _mention_key(m: Mention) -> str:
    """A bare first name is first known only within its passage ("person:mira@<chunk id>")."""
    key = rule_key(m.name, m.type)
    return f"{key}@{m.chunk}" if _bare_first_name(m) else key


def _find_key(name: str, base: dict[tuple[str, str], str]) -> str | None:
    wanted = norm(name)
    hits = sorted({k for k in base.values() if _display(k) == wanted})
    return hits[0] if hits else None


def _alias_merges(mentions: list[Mention], base: dict[tuple[str, str], str], overrides: Overrides, merge: Any) -> None:
    """An alias joins its entity only if it names one target, is not itself an alias-merged entity's
    target elsewhere (no chains), and is not used as the name of something of another kind."""
    targets: dict[str, set[str]] = {}
    for m in mentions:
        for alias in m.aliases:
            if norm(alias) in overrides.blocked_aliases:
                continue
            akey = rule_key(alias, m.type)
            if akey != base[(m.chunk, m.name)]:
                targets.setdefault(akey, set()).add(base[(m.chunk, m.name)])
    names_by_key: dict[str, set[str]] = {}
    firsts: dict[str, set[str]] = {}  # first name -> full-name people who have it
    for m in mentions:
        names_by_key.setdefault(base[(m.chunk, m.name)], set()).add(namespace(m.type))
        words = norm(m.name).split()
        if m.type == "Person" and len(words) > 1:
            firsts.setdefault(words[0], set()).add(base[(m.chunk, m.name)])
    sources = set(targets)
    for akey in sorted(targets):
        dests = targets[akey]
        if len(dests) != 1:
            continue  # one alias, several entities: ambiguous
        dest = next(iter(dests))
        if dest in sources:
            continue  # the target is itself an alias of something: never chain
        if akey in names_by_key and names_by_key[akey] != {akey.split(":", 1)[0]}:
            continue
        if akey.startswith("person:") and " " not in _display(akey) and len(firsts.get(_display(akey), ())) > 1:
            continue  # a bare first name shared by two known people is never merged vault-wide
        merge(akey, dest, "alias", f"'{_display(akey)}' is given as an alias of '{_display(dest)}' only")


def _first_name_merges(mentions: list[Mention], base: dict[tuple[str, str], str], merge: Any) -> None:
    """A bare first name joins a full name only when exactly one person in the same passage has it
    (a long note can mention two people of that first name in different places)."""
    people: dict[str, set[str]] = {}
    for m in mentions:
        if m.type == "Person" and len(norm(m.name).split()) > 1:
            people.setdefault(m.chunk, set()).add(base[(m.chunk, m.name)])
    for m in mentions:
        if not _bare_first_name(m):
            continue
        first = norm(m.name)
        full = sorted(k for k in people.get(m.chunk, set()) if _display(k).split()[0] == first)
        if len(full) == 1:
            merge(
                _mention_key(m), full[0], "first name", f"'{m.name}' in {m.note} can only be {_display(full[0])} there"
            )
