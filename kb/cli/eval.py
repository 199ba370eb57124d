"""`kb eval check` and `kb eval run`: graded retrieval questions, scored per search mode."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from kb import __version__
from kb.cli.common import config, embedder_option, emit_json, json_option, store
from kb.config import Config
from kb.embed import Embedder, make_embedder
from kb.embeddings import EmbedStep
from kb.errors import ConfigError
from kb.eval.harness import Mode, Row, flat_mode, hybrid_mode, naive_mode, rows_json, run_modes, search_mode
from kb.eval.naive import NaiveIndex
from kb.eval.questions import Question, QuestionSetError, check_questions, filter_split, load_questions
from kb.eval.report import charts, markdown, sets_summary
from kb.extract.pipeline import refresh_all
from kb.extract.step import policy_for
from kb.progress import Bars
from kb.search.fusion import FUSION_PRESETS
from kb.search.hybrid import iso_date
from kb.store import SearchIndex, Store

MODES = (
    "hybrid",
    "hybrid-notime",
    "keyword",
    "vector",
    "naive",
    "flat",
    "graph",
    "auto",
    "graph-notrim",
    "graph-nopromote",
    "graph-notime",
    "graph-current",
)


@click.group("eval")
def eval_group() -> None:
    """Score search modes on graded questions over a vault."""


def _load(questions: str, vault: str) -> list:  # type: ignore[type-arg]
    try:
        return load_questions(Path(questions))
    except QuestionSetError as exc:
        raise ConfigError(str(exc)) from exc


@eval_group.command("check")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--vault", required=True, type=click.Path(exists=True, file_okay=False))
@json_option
def check(questions: str, vault: str, as_json: bool) -> None:
    """Validate a question set: paths exist, quotes occur verbatim, ids are unique."""
    qs = _load(questions, vault)
    problems = check_questions(qs, Path(vault))
    if as_json:
        emit_json({"questions": len(qs), "problems": problems})
    elif problems:
        for p in problems:
            click.echo(p)
    else:
        click.echo(f"{questions}: {len(qs)} questions, all paths and quotes check out.")
    if problems:
        raise click.exceptions.Exit(1)


@eval_group.command("run")
@click.argument("questions", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--vault", required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--modes", default="hybrid,flat", show_default=True, help="Comma list of: " + ", ".join(MODES))
@click.option("--split", type=click.Choice(["dev", "test"]), help="Only this split.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Report folder (default eval-out/DATE).")
@click.option(
    "--refresh",
    "do_refresh",
    is_flag=True,
    help="Refresh the graph from --vault first (the knowledge layer from cached extractions only); "
    "a graph of another vault is cleared first.",
)
@click.option(
    "--extract-cache",
    "caches",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    help="A folder of recorded extractions to read (repeatable).",
)
@click.option(
    "--today",
    help="Read relative dates in the questions against this day, YYYY-MM-DD (default: the real "
    "today), so a run is repeatable.",
)
@embedder_option
@json_option
def run(
    questions: tuple[str, ...],
    vault: str,
    modes: str,
    split: str | None,
    out_dir: str | None,
    do_refresh: bool,
    caches: tuple[str, ...],
    today: str | None,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Run every mode on every question; write report.md, rows.json and PNG charts. With several question sets,
    each set's report goes to a folder of its own, beside a summary.md of every set and of all of them pooled."""
    names = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODES]
    if unknown or not names:
        raise ConfigError(f"--modes {modes!r}: unknown mode(s) {unknown}; choose from {', '.join(MODES)}")
    day = dt.date.fromisoformat(str(iso_date(today, "--today"))) if today else None
    sets = _question_sets(questions, vault, split)
    cfg = config(vault=vault, embedder=embedder)
    if caches:
        cfg = replace(cfg, extract_cache_dirs=(*cfg.extract_cache_dirs, *(Path(c).expanduser() for c in caches)))
    emb = make_embedder(cfg)
    results: dict[str, list[Row]] = {}
    with store(cfg) as st:
        if do_refresh:
            if st.get_meta("vault").get("path") not in (None, str(Path(vault).resolve())):
                st.clear()  # another vault: start from empty indexes, so the ranking does not depend on history
            refresh_all(
                st, cfg, Bars(quiet=as_json), EmbedStep(emb), policy_for(cfg, False, False, None), paid=False
            ).check()
        held = st.get_meta("vault").get("path")
        if held != str(Path(vault).resolve()):
            raise ConfigError(
                f"the graph holds {held or 'no vault'}, not {Path(vault).resolve()}: "
                "add --refresh (or run `kb refresh --vault` first)"
            )
        table = _modes(st, cfg, emb, names, day)
        with Bars(quiet=as_json).step("questions", sum(len(qs) for qs in sets.values())) as advance:
            for name, qs in sets.items():
                results[name] = run_modes(qs, table, advance=advance)
        counts = st.counts()
    out = Path(out_dir or f"eval-out/{dt.date.today().isoformat()}")
    header = {
        "kb version": __version__,
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "vault": f"{Path(vault).resolve()} ({counts['notes']} notes, {counts['chunks']} chunks)",
        "embedder": emb.identity,
        "modes": ", ".join(names),
        "budget": "8000 tokens",
    }
    several = len(sets) > 1
    reports = []
    for (name, rows), path in zip(results.items(), questions, strict=True):
        folder = out / name if several else out
        n = f"{len(sets[name])}{', split ' + split if split else ''}"
        reports.append(_write_report(folder, rows, names, {"questions": f"{path} ({n})", **header}))
    summary = None
    if several:
        summary = out / "summary.md"
        summary.write_text(sets_summary(results, names, {"questions": ", ".join(questions), **header}), "utf-8")
    if as_json:
        payload = reports[0] if not several else {"out": str(out), "summary": str(summary), "sets": reports}
        emit_json(payload)
    else:
        click.echo((summary or out / "report.md").read_text(encoding="utf-8"))
        files = (
            "summary.md and a folder per set"
            if several
            else "report.md, rows.json, " + ", ".join(Path(c).name for c in reports[0]["charts"])
        )
        click.echo(f"Written to {out}/ ({files})")


def _question_sets(questions: tuple[str, ...], vault: str, split: str | None) -> dict[str, list[Question]]:
    """Each set by its file's name, loaded and checked; two files of one name are refused (their reports would
    share a folder)."""
    sets: dict[str, list[Question]] = {}
    for path in questions:
        name = Path(path).stem
        if name in sets:
            raise ConfigError(f"{path}: another question set is named {name!r} too; rename one of the files")
        qs = filter_split(_load(path, vault), split)
        problems = check_questions(qs, Path(vault))
        if problems:
            raise ConfigError(f"{path}: {problems[0]} (and {len(problems) - 1} more): run `kb eval check`")
        sets[name] = qs
    return sets


def _modes(st: Store, cfg: Config, emb: Embedder, names: list[str], day: dt.date | None) -> dict[str, Mode]:
    """The named modes over the graph, each built once for every set (the naive index reads the vault once)."""
    index = SearchIndex(st)
    chats = cfg.ai_chat_folders
    builders: dict[str, Callable[[], Mode]] = {
        "hybrid": lambda: search_mode(st, emb, mode="hybrid", today=day),
        "hybrid-notime": lambda: hybrid_mode(index, emb),
        "flat": lambda: flat_mode(index, emb),
        "keyword": lambda: hybrid_mode(index, emb, FUSION_PRESETS["keyword"]),
        "vector": lambda: hybrid_mode(index, emb, FUSION_PRESETS["vector"]),
        "naive": lambda: naive_mode(NaiveIndex(cfg, emb)),
        "graph": lambda: search_mode(st, emb, today=day, ai_chat_folders=chats),
        "auto": lambda: search_mode(st, emb, mode="auto", today=day, ai_chat_folders=chats),
        "graph-notrim": lambda: search_mode(st, emb, preset="no-trim", today=day, ai_chat_folders=chats),
        "graph-nopromote": lambda: search_mode(st, emb, preset="no-promote", today=day, ai_chat_folders=chats),
        "graph-notime": lambda: search_mode(st, emb, preset="no-time", today=day, ai_chat_folders=chats),
        "graph-current": lambda: search_mode(st, emb, current=True, today=day, ai_chat_folders=chats),
    }
    return {m: builders[m]() for m in names}


def _write_report(folder: Path, rows: list[Row], names: list[str], header: dict[str, Any]) -> dict[str, Any]:
    """One set's report.md, rows.json and charts in `folder`; what --json says of them."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(markdown(rows, names, header), encoding="utf-8")
    scored = rows_json(rows)
    (folder / "rows.json").write_text(json.dumps({"header": header, "rows": scored}, indent=2), encoding="utf-8")
    pngs = charts(rows, names, folder)
    return {
        "out": str(folder),
        "report": str(folder / "report.md"),
        "charts": [str(p) for p in pngs],
        "header": header,
        "rows": scored,
    }


def register(cli: click.Group) -> None:
    cli.add_command(eval_group)
