"""The agent skills: valid Agent Skills, every kb command and flag they mention exists, and they install."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kb.cli import cli

SKILLS = Path(__file__).resolve().parents[1] / "skills"
NAMES = ["kb-admin", "kb-graph-search", "kb-hybrid-retrieval"]


def test_the_three_skills_exist() -> None:
    assert sorted(p.name for p in SKILLS.iterdir() if p.is_dir()) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_reference_validator_passes(name: str) -> None:
    # beside this interpreter first: the venv's bin folder need not be on PATH (scripts/test.sh does not activate it)
    exe = shutil.which("agentskills", path=str(Path(sys.executable).parent)) or shutil.which("agentskills")
    assert exe, "agentskills (PyPI skills-ref) must be installed with the test extras"
    proc = subprocess.run([exe, "validate", str(SKILLS / name)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def mentions(text: str) -> list[str]:
    """Every `kb ...` command line in code blocks and inline code."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S) + re.findall(r"`([^`\n]+)`", text)
    return [m.group(0) for b in blocks for line in b.splitlines() for m in re.finditer(r"\bkb( [^`|;]+)", line)]


def resolve(words: list[str]) -> tuple[click.Command, list[str]]:
    cmd: click.Command = cli
    rest = list(words)
    while rest and isinstance(cmd, click.Group):
        sub = cmd.get_command(click.Context(cmd), rest[0])  # kb's group loads its commands on first use
        if sub is None:
            break
        cmd, rest = sub, rest[1:]
    return cmd, rest


@pytest.mark.parametrize("name", NAMES)
def test_every_command_and_flag_mentioned_exists(name: str) -> None:
    text = (SKILLS / name / "SKILL.md").read_text(encoding="utf-8")
    found = mentions(text)
    assert found, "a skill should show the commands it runs"
    for line in found:
        words = line.split()[1:]
        cmd, rest = resolve(words)
        assert cmd is not cli and not isinstance(cmd, click.Group), f"{name}: unknown command in {line!r}"
        known = {opt for p in cmd.params for opt in getattr(p, "opts", [])}
        flags = [w for w in rest if w.startswith("--")]
        assert all(f in known for f in flags), f"{name}: {line!r} uses a flag `{cmd.name}` lacks"


def test_install_dry_run_then_install_then_protect_changes(tmp_path: Path) -> None:
    runner = CliRunner()
    dry = runner.invoke(cli, ["skills", "install", "--target", "claude", "--project", str(tmp_path), "--dry-run"])
    assert dry.exit_code == 0 and "would create" in dry.output and not (tmp_path / ".claude").exists()
    done = runner.invoke(cli, ["skills", "install", "--project", str(tmp_path)])
    assert done.exit_code == 0, done.output
    for base in (".claude/skills", ".agents/skills"):
        for skill in NAMES:
            assert (tmp_path / base / skill / "SKILL.md").read_bytes() == (SKILLS / skill / "SKILL.md").read_bytes()
    mine = tmp_path / ".agents/skills/kb-admin/SKILL.md"
    mine.write_text("my own edits\n")
    again = runner.invoke(cli, ["skills", "install", "--project", str(tmp_path)])
    assert again.exit_code == 1 and "changed by hand" in again.output and "--force" in again.output
    assert mine.read_text() == "my own edits\n"
    forced = runner.invoke(cli, ["skills", "install", "--project", str(tmp_path), "--force"])
    assert forced.exit_code == 0 and mine.read_bytes() == (SKILLS / "kb-admin/SKILL.md").read_bytes()


def test_browse_writes_style_and_queries(kb_env: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["browse", "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "Remote connection > bolt://127.0.0.1:" in result.output
    style = (tmp_path / "b" / "kb-style.grass").read_text()
    assert "node.Note" in style and "caption: '{title}'" in style and "node.HubEntity" in style
    assert "caption: '{attribute} = {value}'" in style
    assert (tmp_path / "b" / "broken-links.cypher").read_text().startswith("// Links to notes")
