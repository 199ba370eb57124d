"""`kb skills install`: copy kb's agent skills to where Claude Code and Codex look for them."""

from __future__ import annotations

from pathlib import Path

import click

from kb.cli.common import emit_json, json_option
from kb.errors import ConfigError

TARGETS = {"claude": ".claude/skills", "codex": ".agents/skills"}


def skills_root() -> Path:
    """The repository's skills/ folder (kb is installed from its source tree)."""
    root = Path(__file__).resolve().parents[2] / "skills"
    if not root.is_dir():
        raise ConfigError(f"kb's skills folder is missing ({root}): reinstall kb from its source tree")
    return root


def skill_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def plan(target: str, project: Path | None) -> list[tuple[Path, Path, str]]:
    """(source, destination, action) for every file; action is create, update, unchanged or conflict."""
    base = (project if project else Path.home()) / TARGETS[target]
    out = []
    root = skills_root()
    for src in skill_files(root):
        dest = base / src.relative_to(root)
        if not dest.exists():
            action = "create"
        elif dest.read_bytes() == src.read_bytes():
            action = "unchanged"
        else:
            action = "conflict"
        out.append((src, dest, action))
    return out


@click.group("skills")
def skills() -> None:
    """kb's agent skills (kb-admin, kb-hybrid-retrieval, kb-graph-search)."""


@skills.command("install")
@click.option("--target", type=click.Choice(["claude", "codex", "both"]), default="both", show_default=True)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="Install into this project (.claude/skills or .agents/skills) instead of your home folder.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
@click.option("--force", is_flag=True, help="Overwrite skill files you have changed.")
@json_option
def install(target: str, project: Path | None, dry_run: bool, force: bool, as_json: bool) -> None:
    """Copy the skills for Claude Code (~/.claude/skills) and/or Codex (~/.agents/skills)."""
    targets = ["claude", "codex"] if target == "both" else [target]
    report = []
    for name in targets:
        for src, dest, action in plan(name, project):
            if action == "conflict" and force:
                action = "overwrite"
            if action in ("create", "overwrite") and not dry_run:
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(src.read_bytes())
            report.append({"target": name, "path": str(dest), "action": action})
    conflicts = [r for r in report if r["action"] == "conflict"]
    if as_json:
        emit_json({"dry_run": dry_run, "files": report})
    else:
        for r in report:
            verb = ("would " + r["action"]) if dry_run and r["action"] in ("create", "overwrite") else r["action"]
            click.echo(f"{verb:>16}  {r['path']}")
    if conflicts:
        raise ConfigError(
            f"{len(conflicts)} skill file(s) were changed by hand and left as they are "
            f"(first: {conflicts[0]['path']}): rerun with --force to overwrite"
        )


def register(cli: click.Group) -> None:
    cli.add_command(skills)
