"""A canonical, order-independent dump of the graph, for comparing two builds."""

from __future__ import annotations

import json
from typing import Any

from kb.store import Store

KEYS = {
    "Note": "path",
    "Chunk": "id",
    "Tag": "name",
    "Folder": "path",
    "Missing": "key",
    "Attachment": "path",
    "Entity": "key",
    "Claim": "id",
    "Passage": "id",
    "KbMeta": "key",
}
SKIP_PROPS = {"mtime", "embedding"}


def _key(labels: list[str], props: dict[str, Any]) -> str:
    label = sorted(lbl for lbl in labels if lbl in KEYS)[0]
    return f"{label}:{props[KEYS[label]]}"


def dump(store: Store) -> list[str]:
    """Every node and relationship as a sorted list of JSON strings (mtimes and vectors left out)."""
    nodes = store.read("MATCH (n) WHERE NOT n:KbMeta RETURN labels(n) AS labels, properties(n) AS props")
    rels = store.read(
        "MATCH (a)-[r]->(b) RETURN labels(a) AS la, properties(a) AS pa, type(r) AS t, "
        "properties(r) AS pr, labels(b) AS lb, properties(b) AS pb"
    )
    out = [
        json.dumps(
            [sorted(n["labels"]), {k: v for k, v in sorted(n["props"].items()) if k not in SKIP_PROPS}],
            sort_keys=True,
            default=str,
        )
        for n in nodes
    ]
    out += [json.dumps([_key(r["la"], r["pa"]), r["t"], r["pr"], _key(r["lb"], r["pb"])], sort_keys=True) for r in rels]
    return sorted(out)
