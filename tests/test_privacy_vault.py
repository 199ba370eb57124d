"""Privacy that belongs to the vault: not lost by the working folder, a symlink, a rename; Obsidian's exclusions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_config

from kb.errors import ConfigError
from kb.progress import Bars
from kb.refresh import refresh
from kb.store import Store


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def private_paths(store: Store) -> list[str]:
    return [r["p"] for r in store.read("MATCH (n:Note) WHERE n.private RETURN n.path AS p ORDER BY p")]


def private_vault(root: Path) -> Path:
    write(root, "overrides.yaml", "private_folders: [Journal]\n")
    write(root, "Journal/2024-01-01.md", "Secret diary entry about [[Ann]].")
    write(root, "People/Ann.md", "# Ann\nPublic note.")
    return root


def test_privacy_does_not_depend_on_the_working_folder(kb_env: Path, store: Store, tmp_path: Path) -> None:
    """`cd /tmp && kb refresh --vault V` reads V's own overrides.yaml, not the folder it was started in."""
    vault = private_vault(tmp_path / "v")
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, "overrides.yaml", "private_folders: []\n")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from kb.cli import main; main()",
            "refresh",
            "--vault",
            str(vault),
            "--no-embed",
            "--no-extract",
            "--json",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert out.returncode == 0, out.stderr
    assert private_paths(store) == ["Journal/2024-01-01.md"]


def test_a_refresh_that_would_unmark_private_notes_is_refused(store: Store, tmp_path: Path) -> None:
    vault = private_vault(tmp_path / "v")
    refresh(store, make_config(vault), Bars(quiet=True))
    assert private_paths(store) == ["Journal/2024-01-01.md"]
    lost = make_config(vault, overrides=str(tmp_path / "none.yaml"))
    with pytest.raises(ConfigError, match="would make 1 private notes public \\(in Journal\\)"):
        refresh(store, lost, Bars(quiet=True))
    assert private_paths(store) == ["Journal/2024-01-01.md"]
    refresh(store, lost, Bars(quiet=True), unmark_private=True)
    assert private_paths(store) == []


def test_switching_to_another_vault_is_not_unmarking(store: Store, tmp_path: Path) -> None:
    """Private notes that leave with their vault make nothing public: no refusal."""
    refresh(store, make_config(private_vault(tmp_path / "a")), Bars(quiet=True))
    other = tmp_path / "b"
    write(other, "Note.md", "another vault, no private folders")
    s = refresh(store, make_config(other), Bars(quiet=True))
    assert s.added == ["Note.md"] and private_paths(store) == []


def test_symlinks_and_case_renames_keep_notes_private(store: Store, tmp_path: Path) -> None:
    """A symlink to a private note is private (also when the private folders change later); Journal -> journal
    stays private; a symlinked private folder is not indexed a second time."""
    vault = private_vault(tmp_path / "v")
    os.symlink(vault / "Journal" / "2024-01-01.md", vault / "People" / "copy.md")
    os.symlink(vault / "Journal", vault / "AJournal")
    s = refresh(store, make_config(vault), Bars(quiet=True))
    assert private_paths(store) == ["Journal/2024-01-01.md", "People/copy.md"]
    assert any(x["path"] == "AJournal" for x in s.skipped)
    write(vault, "overrides.yaml", "private_folders: [Journal, Health]\n")
    refresh(store, make_config(vault), Bars(quiet=True))  # the folder list changed: every note is re-marked
    assert private_paths(store) == ["Journal/2024-01-01.md", "People/copy.md"]
    (vault / "People" / "copy.md").unlink()
    (vault / "Journal").rename(vault / "journal")
    os.symlink(vault / "journal" / "2024-01-01.md", vault / "People" / "copy.md")
    refresh(store, make_config(vault), Bars(quiet=True))
    assert private_paths(store) == ["People/copy.md", "journal/2024-01-01.md"]


def test_obsidian_excluded_files_are_left_out_unless_asked(store: Store, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, ".obsidian/app.json", json.dumps({"userIgnoreFilters": ["Archive/old-exports/", "/draft\\d/"]}))
    write(vault, "Archive/old-exports/dump.md", "old")
    write(vault, "Archive/kept.md", "kept, links [[dump]]")
    write(vault, "Inbox/draft1 idea.md", "draft")
    write(vault, "Inbox/final.md", "final")
    s = refresh(store, make_config(vault), Bars(quiet=True))
    assert sorted(r["p"] for r in store.read("MATCH (n:Note) RETURN n.path AS p")) == [
        "Archive/kept.md",
        "Inbox/final.md",
    ]
    assert s.excluded["notes"] == 2 and "userIgnoreFilters" in s.excluded["reason"]
    every = refresh(store, make_config(vault, index_obsidian_excluded=True), Bars(quiet=True))
    assert sorted(every.added) == ["Archive/old-exports/dump.md", "Inbox/draft1 idea.md"] and not every.excluded
    back = refresh(store, make_config(vault), Bars(quiet=True))
    assert sorted(back.removed) == ["Archive/old-exports/dump.md", "Inbox/draft1 idea.md"]
