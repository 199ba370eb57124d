"""Configuration: file, then environment, then flags; secrets kept private."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from kb.config import DEFAULT_EXTRACTOR, KEYS, Config, load_config, toml_value, write_config_values
from kb.errors import ConfigError
from kb.extract.backends import extractor_spec
from kb.extract.step import cache_for, policy_for
from kb.readonly import HARD_TIMEOUT_S, Limits, limits_for

REPO = Path(__file__).resolve().parents[1]


def test_precedence_file_env_flags(tmp_path: Path) -> None:
    write_config_values(tmp_path, {"neo4j_uri": "bolt://file:1", "embedder": "onnx:minilm", "neo4j_user": "f"})
    env = {"NEO4J_URI": "bolt://env:2", "NEO4J_USER": "e"}
    cfg = load_config(home=tmp_path, env=env, flags={"neo4j_user": "flag"})
    assert (cfg.neo4j_uri, cfg.neo4j_user, cfg.embedder) == ("bolt://env:2", "flag", "onnx:minilm")


def test_config_file_is_owner_only(tmp_path: Path) -> None:
    path = write_config_values(tmp_path, {"neo4j_password": "s3cret"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_config(home=tmp_path, env={}).neo4j_password == "s3cret"


def test_private_folders_from_overrides(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "overrides.yaml").write_text("private_folders: [Journal, Health/]\n")
    cfg = load_config(home=tmp_path, env={}, flags={"vault": str(vault), "private_folders": "Therapy"})
    assert cfg.private_folders == ("Health", "Journal", "Therapy")


def test_bad_values_name_the_value_and_fix(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("server_port = 'abc'\n")
    with pytest.raises(ConfigError, match="server_port = 'abc' is not a whole number"):
        load_config(home=tmp_path, env={})
    (tmp_path / "config.toml").write_text("x = [\n")
    with pytest.raises(ConfigError, match="config.toml: not valid TOML"):
        load_config(home=tmp_path, env={})
    with pytest.raises(ConfigError, match="no vault set"):
        load_config(home=tmp_path / "other", env={}).require_vault()


def test_every_key_is_typed_with_one_default(tmp_path: Path) -> None:
    """Documented keys reach the consumers as typed fields: the policy, the cache folders, the MCP limits."""
    (tmp_path / "config.toml").write_text(
        'cost_threshold_usd = 2.5\nextract_workers = 100\nai_chat_folders = ["Chats"]\n'
        'remote_private_optin = ["Journal"]\nextract_cache_dirs = ["~/rec"]\nmcp_max_tokens = 2000\n'
        'mcp_timeout_s = 300\nindex_obsidian_excluded = true\nextractor = "ollama:qwen2.5:7b"\n'
    )
    cfg = load_config(home=tmp_path, env={})
    policy = policy_for(cfg, yes=False, dry_run=False, confirm=None)
    assert (policy.threshold_usd, policy.workers, policy.ai_chat_folders, policy.private_optin) == (
        2.5,
        64,
        ("Chats",),
        ("Journal",),
    )
    assert cfg.extract_cache_dirs == (Path("~/rec").expanduser(),)
    assert Path("~/rec").expanduser() in cache_for(cfg).read_only
    assert limits_for(cfg.mcp_max_tokens, cfg.mcp_timeout_s) == Limits(2000, HARD_TIMEOUT_S)
    assert cfg.index_obsidian_excluded is True and extractor_spec(cfg) == ("ollama", "qwen2.5:7b")
    default = load_config(home=tmp_path / "none", env={})
    assert (default.cost_threshold_usd, default.extract_workers, default.ai_chat_folders) == (0.5, 16, ("ChatGPT",))
    assert extractor_spec(default) == ("anthropic", "claude-haiku-5-5") and default.extractor == DEFAULT_EXTRACTOR


@pytest.mark.parametrize(
    "line, message",
    [
        ('cost_threshold_usd = "fifty cents"', "cost_threshold_usd = 'fifty cents' is not a number (in "),
        ("cost_threshold_usd = -1", "cost_threshold_usd = -1 must be 0 or more"),
        ("extract_workers = 2.5", "extract_workers = 2.5 is not a whole number"),
        ("extract_workers = 0", "extract_workers = 0 must be at least 1"),
        ("mcp_timeout_s = 0", "mcp_timeout_s = 0 must be greater than 0"),
        ('index_obsidian_excluded = "maybe"', "index_obsidian_excluded = 'maybe' is not true or false"),
        ('ai_chat_folders = "ChatGPT"', None),  # a single folder as text is a one-item list
        ("ai_chat_folders = [1, 2]", "ai_chat_folders = [1, 2] is not a list of text values"),
        ("embedder = [1]", "embedder = [1] is not a text value"),
        ("server_port = 70000", "server_port = 70000 must be a port from 1 to 65535"),
    ],
)
def test_a_bad_value_is_one_line_naming_key_and_fix(tmp_path: Path, line: str, message: str | None) -> None:
    (tmp_path / "config.toml").write_text(line + "\n")
    if message is None:
        assert load_config(home=tmp_path, env={}).ai_chat_folders == ("ChatGPT",)
        return
    with pytest.raises(ConfigError) as err:
        load_config(home=tmp_path, env={})
    text = str(err.value)
    key = line.split(" =")[0]
    assert message in text and "\n" not in text and f"write it like {key} = " in text
    assert str(tmp_path / "config.toml") in text


def test_a_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"server_port = 'abc' is not a whole number \(from KB_SERVER_PORT\): "
        r"write it like server_port = 7687",
    ):
        load_config(home=tmp_path, env={"KB_SERVER_PORT": "abc"})


def test_an_unknown_key_suggests_the_nearest(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("cost_treshold_usd = 1.0\n")
    with pytest.raises(
        ConfigError,
        match=r"config.toml: unknown key 'cost_treshold_usd': did you mean "
        r"'cost_threshold_usd'\?",
    ):
        load_config(home=tmp_path, env={})
    (tmp_path / "config.toml").write_text("zzz = 1\n")
    with pytest.raises(ConfigError, match=r"unknown key 'zzz': remove it"):
        load_config(home=tmp_path, env={})
    with pytest.raises(ConfigError, match=r"a flag: unknown key 'embeder': did you mean 'embedder'\?"):
        load_config(home=tmp_path / "x", env={}, flags={"embeder": "onnx:minilm"})


def test_a_bad_config_is_one_line_from_the_cli(tmp_path: Path) -> None:
    """Through `kb`: exit 1, one line naming the key and the fix, no traceback."""
    (tmp_path / "config.toml").write_text('cost_threshold_usd = "fifty cents"\n')
    env = {**os.environ, "KB_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", "from kb.cli import main; main()", "status", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"Error: cost_threshold_usd = 'fifty cents' is not a number (in {tmp_path / 'config.toml'}): "
        "write it like cost_threshold_usd = 0.5"
    ]


def readme_keys() -> dict[str, str]:
    """The Configuration table of the README: key -> default as written."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \|", section, flags=re.M)
    return dict(rows)


def test_readme_lists_every_config_key_with_its_default() -> None:
    documented = readme_keys()
    assert sorted(documented) == sorted(KEYS)
    for f in fields(Config):
        if f.name != "home":
            shown = "none" if f.default is None else f"`{toml_value(f.default)}`"
            assert documented[f.name] == shown, f.name


def test_the_default_extractor_is_written_once() -> None:
    sources = [p for folder in ("kb", "extract", "search", "eval") for p in (REPO / folder).rglob("*.py")]
    holders = sorted(str(p.relative_to(REPO)) for p in sources if DEFAULT_EXTRACTOR in p.read_text(encoding="utf-8"))
    assert holders == ["kb/config.py"]


def test_a_folder_is_in_the_configured_folders_or_below_one() -> None:
    from kb.config import in_folder

    assert in_folder("ChatGPT", ("ChatGPT",)) and in_folder("ChatGPT/2024", ("ChatGPT",))
    assert in_folder("ChatGPT", ("ChatGPT/",))  # a trailing slash in the config does not matter
    assert not in_folder("ChatGPTs", ("ChatGPT",)) and not in_folder("Notes/ChatGPT", ("ChatGPT",))
    assert not in_folder("Journal", ())
