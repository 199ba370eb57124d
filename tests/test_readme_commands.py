"""The README's command list against `kb --help`: every command exists, every command is listed, with its flags."""

from __future__ import annotations

import re
from pathlib import Path

import click

from kb.cli import cli

REPO = Path(__file__).resolve().parents[1]


def readme_lines() -> list[str]:
    """The lines of the code block under "### Commands" (each `kb ...`, its description cut off)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("\n### Commands\n", 1)[1].split("```", 2)[1]
    return [re.split(r"\s{3,}", line.strip())[0] for line in block.splitlines() if line.startswith("kb ")]


def sub(group: click.Command, name: str) -> click.Command | None:
    if not isinstance(group, click.Group):
        return None
    return group.get_command(click.Context(group), name)


def leaves(cmd: click.Command = cli, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    """Every runnable command of `kb` by its words, e.g. ("db", "start")."""
    if not isinstance(cmd, click.Group):
        return {path: cmd}
    out: dict[tuple[str, ...], click.Command] = {}
    for name in cmd.list_commands(click.Context(cmd)):
        child = sub(cmd, name)
        assert child is not None
        out.update(leaves(child, (*path, name)))
    return out


def resolve(words: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """The longest command path at the start of `words`, and the rest."""
    cmd: click.Command = cli
    path: tuple[str, ...] = ()
    while words and (child := sub(cmd, words[0])) is not None:
        cmd, path, words = child, (*path, words[0]), words[1:]
    return path, words


def documented() -> dict[tuple[str, ...], set[str]]:
    """Each command path the README shows, with the flags shown for it. `kb db start | stop` lists two
    commands; `kb extract ... | status` an argument value of the same command."""
    found: dict[tuple[str, ...], set[str]] = {}
    for line in readme_lines():
        first, *alternatives = line[len("kb ") :].split(" | ")
        path, rest = resolve(first.split())
        assert path, f"README lists an unknown command: {line!r}"
        found.setdefault(path, set()).update(re.findall(r"--[a-z][a-z-]*", " ".join(rest)))
        for alt in alternatives:
            word, *more = alt.split()
            sibling, _ = resolve([*path[:-1], word])
            target = sibling if sibling == (*path[:-1], word) else path
            if target == path:
                cmd = leaves()[path]
                choices = {c for p in cmd.params if isinstance(p.type, click.Choice) for c in p.type.choices}
                assert word in choices, f"README: {word!r} in {line!r} is neither a command nor an argument value"
            found.setdefault(target, set()).update(re.findall(r"--[a-z][a-z-]*", " ".join(more)))
    return found


def test_every_listed_command_exists_with_its_flags() -> None:
    real = leaves()
    for path, flags in documented().items():
        assert path in real, f"README lists `kb {' '.join(path)}`, which kb --help does not have"
        known = {opt for p in real[path].params for opt in getattr(p, "opts", [])}
        assert flags <= known, f"`kb {' '.join(path)}`: README shows {sorted(flags - known)}, which it lacks"


def test_every_command_and_flag_is_listed() -> None:
    shown = documented()
    for path, cmd in leaves().items():
        assert path in shown, f"`kb {' '.join(path)}` is missing from the README's command list"
        flags = {p.opts[0] for p in cmd.params if isinstance(p, click.Option) and p.opts[0].startswith("--")}
        missing = sorted(flags - shown[path] - {"--help"})
        assert missing == [], f"`kb {' '.join(path)}`: README's command list lacks {missing}"


def test_listed_choices_are_the_real_ones() -> None:
    """`[--mode hybrid|graph|auto]` and `--modes a,b,...` name exactly the values kb accepts."""
    from kb.cli.eval import MODES

    real = leaves()
    for line in readme_lines():
        path, _ = resolve(line[len("kb ") :].split(" | ")[0].split())
        options = {o: p for p in real[path].params if isinstance(p, click.Option) for o in p.opts}
        for flag, values in re.findall(r"\[(--[a-z-]+) ([a-z-]+(?:\|[a-z-]+)+)\]", line):
            choice = options[flag].type
            assert isinstance(choice, click.Choice) and sorted(values.split("|")) == sorted(choice.choices), line
        for values in re.findall(r"--modes ([a-z,-]+)", line):
            assert values.split(",") == list(MODES), "README's --modes list differs from kb.cli.eval.MODES"
