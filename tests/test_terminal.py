"""Names with escape sequences are shown, never obeyed, on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from kb.terminal import visible

EVIL = "\x1b]0;pwned\x07\x1b[2J\x08\x08\x9b31m"


def test_visible_escapes_every_control_but_newline_and_tab() -> None:
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible(EVIL) == "\\u001b]0;pwned\\u0007\\u001b[2J\\u0008\\u0008\\u009b31m"


def on_a_tty(args: list[str], env: dict[str, str], cwd: Path) -> bytes:
    """Run the kb command with stdout on a pseudo-terminal and return what the terminal received."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from kb.cli import main; main()", *args],
        stdout=slave,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=120)
    os.close(master)
    return out


def test_refresh_and_status_on_a_tty_print_no_raw_escapes(kb_env: Path, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    # a warning names the file; a missing link names its target (no brackets, or it would not be a link)
    (vault / f"x{EVIL}.md").write_text("---\ndate: [unclosed\n---\n[[gone\x1bc\x08\x9b]]\n", encoding="utf-8")
    (vault / "fine.md").write_text("fine", encoding="utf-8")
    env = {**os.environ, "KB_VAULT": str(vault)}
    for args in (["refresh", "--no-embed", "--no-extract"], ["status"]):
        out = on_a_tty(args, env, tmp_path)
        for raw in (b"\x1b]0;", b"\x1b[2J", b"\x1bc", b"\x08", b"\xc2\x9b"):
            assert raw not in out, (raw, out[-600:])
        assert b"\\u001b" in out or b"\\u0008" in out, out[-600:]
