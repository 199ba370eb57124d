"""The lazy `kb` group: its static table matches the real commands, and `kb --help` imports none of them."""

from __future__ import annotations

import json
import subprocess
import sys

import click
from click.testing import CliRunner

from kb import __version__
from kb.cli import COMMANDS, cli, load_command

HEAVY = (
    "neo4j",
    "onnxruntime",
    "anthropic",
    "ollama",
    "matplotlib",
    "numpy",
    "extract",
    "search",
    "eval",
    "kb.store",
    "kb.cli.search",
    "kb.mcp_server",
    "yaml",
    "tiktoken",
    "rich",
)


def eager_group() -> click.Group:
    """Every command module registered the old, eager way."""
    group = click.Group("kb", help=cli.help)
    group = click.version_option(__version__, prog_name="kb")(group)
    for module in sorted({m for m, _ in COMMANDS.values()}):
        __import__(module, fromlist=["register"]).register(group)
    return group


def test_table_names_every_command_with_its_help() -> None:
    real = eager_group().commands
    assert sorted(real) == sorted(COMMANDS)
    for name, (module, text) in COMMANDS.items():
        cmd = load_command(name)
        assert cmd is real[name] and cmd.callback is not None and cmd.callback.__module__ == module
        first = " ".join((cmd.help or "").split("\n\n")[0].split())
        assert text == first, f"{name}: the table's help differs from the command's docstring"


def test_help_is_the_same_as_the_eager_group() -> None:
    for width in (80, 200):
        lazy = CliRunner().invoke(cli, ["--help"], terminal_width=width, prog_name="kb")
        eager = CliRunner().invoke(eager_group(), ["--help"], terminal_width=width, prog_name="kb")
        assert lazy.exit_code == eager.exit_code == 0 and lazy.output == eager.output


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys; sys.argv = ['kb', '--help']\nfrom kb.cli import main\ntry:\n    main()\n"
        "except SystemExit:\n    pass\nimport json\nprint(json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(proc.stdout.splitlines()[-1])
    assert "Commands:" in proc.stdout
    heavy = [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY or m.startswith("kb.cli.")]
    assert heavy == []


def test_unknown_command_is_still_an_error() -> None:
    result = CliRunner().invoke(cli, ["serach", "x"])
    assert result.exit_code == 2 and "No such command 'serach'" in result.output


def loaded_by(name: str) -> set[str]:
    """Top-level packages a fresh process has imported after loading command `name`."""
    code = f"import sys\nfrom kb.cli import load_command\nload_command({name!r})\nprint(' '.join(sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return {m.split(".")[0] for m in proc.stdout.split()}


def test_commands_load_only_what_they_use() -> None:
    """The SDKs, charts, the extractor and the progress bars wait for the commands that use them."""
    assert (
        loaded_by("search") & {"anthropic", "ollama", "matplotlib", "extract", "eval", "rich", "onnxruntime"} == set()
    )
    assert loaded_by("skills") & {"neo4j", "numpy", "anthropic", "ollama", "search", "extract"} == set()
    assert loaded_by("mcp") & {"mcp", "neo4j", "anthropic", "ollama", "extract"} == set()
