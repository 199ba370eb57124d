"""Graph lines as an answerer reads them: dated, cited and labelled with their modality."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MODALITY_LABEL = {
    "fact": "",
    "reported": "reported",
    "plan": "PLAN (not a fact)",
    "opinion": "opinion",
    "hypothetical": "hypothetical",
    "ai_suggestion": "ChatGPT suggestion (not adopted as stated)",
}


@dataclass(frozen=True)
class Line:
    """One line of graph context with the note it cites."""

    kind: str  # "claim" | "link"
    text: str
    path: str
    date: str | None
    pinned: bool = False
    order: int = 0
    score: float = 0.0
    sim: float | None = None  # cosine of the line's build-time vector with the question, from the server
    when: str = ""  # when the value took effect, for newest-first order
    chunk: str = ""  # the chunk that states it: a line whose chunk the answerer already reads adds little
    timeline: str = ""  # entity and attribute of a claim line


def _cite(path: str | None, date: str | None) -> str:
    return f"[{path}, {date}]" if path else ""


def link_line(row: dict[str, Any], pinned: bool = False, cite: tuple[str, str | None] = ("", None)) -> Line:
    """ "-introduced-> B (2x, last 2023-02-14): "evidence" [note, date]"."""
    a, b = (row.get("via") or "", row["other"]) if row.get("via") else ("", row["other"])
    verb = row["type"].lower().replace("_", " ")
    arrow = f"-{verb}->" if row["outgoing"] else f"<-{verb}-"
    mods = "/".join(m for m in row.get("modalities") or [] if m != "fact")
    label = f"; {mods}" if mods else ""
    evidence = (row.get("evidence") or [""])[0]
    start = f"{a} " if a else ""
    seen = f"{row['count']}x, last {row.get('last_seen')}"
    if row.get("as_of") and str(row.get("last_seen") or "") > row["as_of"]:
        seen = f"since {row.get('first_seen')}"  # how often and how lately by that day is not known
    text = (f'{row.get("entry_name", "")} {start}{arrow} {b} ({seen}{label}): "{evidence}" {_cite(*cite)}').strip()
    return Line(
        "link", text, cite[0], cite[1], pinned, 1, sim=row.get("score"), chunk=(row.get("chunk_ids") or [""])[0]
    )


def claim_lines(rows: list[dict[str, Any]], limit: int) -> list[Line]:
    """Claims of the entry entities, current values first, each with its timeline."""
    out: list[Line] = []
    for r in rows:
        c = r["claim"]
        label = MODALITY_LABEL.get(c["modality"], c["modality"])
        valid = f", valid from {c['valid_from']}" if c.get("valid_from") else ""
        status = "CURRENT" if c.get("is_current") else ("was" if r["sup"] else "")
        head = " ".join(x for x in (status, label) if x)
        text = f"{r['entity']} {c['attribute']} = {c['value']}{f' ({head})' if head else ''}"
        quote = "" if status == "was" else f': "{c["quote"]}"'  # an outdated value needs its source, not its words
        text += f"{quote} {_cite(c['note_path'], c['note_date'])}{valid}"
        for n in r["sup"][:1]:
            text += f"; superseded by {n['value']} as of {n['as_of']} [{n['note_path']}]"
        for x in r["conf"][:2]:
            text += f"; CONFLICTS with {x['value']} [{x['note_path']}, same date]"
        for t in r["then"][:1]:
            text += f"; planned, then {t['value']} as of {t['as_of']}"
        order = 0 if c.get("is_current") else (2 if c["modality"] in ("fact", "reported") else 3)
        out.append(
            Line(
                "claim",
                text,
                c["note_path"],
                c["note_date"],
                False,
                order,
                sim=r.get("score"),
                when=str(c.get("valid_from") or c.get("note_date") or ""),
                chunk=r.get("chunk") or "",
                timeline=f"{r['entry']}\x00{c['attribute']}",
            )
        )
    out.sort(key=lambda ln: ln.text)
    out.sort(key=lambda ln: ln.when, reverse=True)  # newest first ...
    out.sort(key=lambda ln: ln.order)  # ... within current, past facts, then plans and opinions
    return out[:limit]
