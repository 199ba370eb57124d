"""Scanning and parsing files: dates, front matter, and bad input that must not stop a run."""

from __future__ import annotations

import os
from pathlib import Path

from kb.vault import is_private, parse_note, scan_vault


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def parse(root: Path, rel: str, private: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    vf = next(f for f in scan_vault(root).notes if f.path == rel)
    return parse_note(vf, private)


def test_dates_front_matter_then_file_name_then_mtime(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\ndate: 2024-03-01\nupdated: 2025-01-02\n---\nx")
    write(tmp_path, "b.md", "---\ncreated: 2023-02-03T10:00:00\n---\nx")
    write(tmp_path, "Journal/2022-05-06 Standup.md", "no front matter")
    c = write(tmp_path, "c.md", "nothing")
    os.utime(c, (1_700_000_000, 1_700_000_000))
    assert (parse(tmp_path, "a.md").date, parse(tmp_path, "a.md").updated) == ("2024-03-01", "2025-01-02")
    assert parse(tmp_path, "b.md").date_source == "front matter created"
    assert parse(tmp_path, "b.md").date == "2023-02-03"
    n = parse(tmp_path, "Journal/2022-05-06 Standup.md")
    assert (n.date, n.date_source) == ("2022-05-06", "file name")
    assert (parse(tmp_path, "c.md").date, parse(tmp_path, "c.md").date_source) == ("2023-11-14", "file mtime")


def test_tags_as_list_comma_string_and_inline(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\ntags: [Client/Active, metric]\naliases: [QM]\n---\nbody #inline")
    write(tmp_path, "b.md", "---\ntags: client, metric/revenue\n---\n")
    a, b = parse(tmp_path, "a.md"), parse(tmp_path, "b.md")
    assert a.tags == ("client", "client/active", "inline", "metric")
    assert a.aliases == ("QM",)
    assert b.tags == ("client", "metric", "metric/revenue")


def test_malformed_yaml_keeps_the_body_and_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, "bad.md", "---\ndate: 2024-04-05\ntags: [unclosed\n---\nBody with [[Link]]")
    n = parse(tmp_path, "bad.md")
    assert n.links[0].target == "Link"
    assert n.date == "2024-04-05"
    assert len(n.warnings) == 1 and n.warnings[0].startswith("bad.md: malformed YAML front matter")
    assert "fix the YAML" in n.warnings[0]


def test_not_utf8_crlf_and_empty(tmp_path: Path) -> None:
    write(tmp_path, "latin.md", b"caf\xe9 and [[Other]]\r\n# Head\r\n")
    write(tmp_path, "empty.md", b"")
    n = parse(tmp_path, "latin.md")
    assert "\ufffd" in n.body and "\r" not in n.body
    assert n.links[0].target == "Other" and n.structure.headings[0].text == "Head"
    assert "not valid UTF-8" in n.warnings[0] and "latin.md" in n.warnings[0]
    e = parse(tmp_path, "empty.md")
    assert e.body == "" and "empty file" in e.warnings[0]


def test_scan_skips_with_reasons(tmp_path: Path) -> None:
    write(tmp_path, "ok.md", "x")
    write(tmp_path, ".obsidian/app.json", "{}")
    write(tmp_path, ".trash/old.md", "x")
    write(tmp_path, "Board.canvas", "{}")
    write(tmp_path, "img/pic.png", b"\x89PNG")
    write(tmp_path, "Archive/.Draft.md.icloud", b"")
    write(tmp_path, "big.md", "x" * 2000)
    os.symlink(tmp_path, tmp_path / "img" / "loop")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text("secret")
    os.symlink(outside, tmp_path / "sneaky.md")
    scan = scan_vault(tmp_path, max_bytes=1000)
    assert [f.path for f in scan.notes] == ["ok.md"]
    assert scan.attachments == ["img/pic.png"]
    reasons = {s.path: s.reason for s in scan.skipped}
    assert "online-only" in reasons["Archive/.Draft.md.icloud"]
    assert "max_file_bytes" in reasons["big.md"]
    assert "symlink loop" in reasons["img/loop"]
    assert "outside the vault" in reasons["sneaky.md"]


def test_private_folders(tmp_path: Path) -> None:
    write(tmp_path, "Journal/a.md", "x")
    write(tmp_path, "Journalism/b.md", "x")
    assert parse(tmp_path, "Journal/a.md", ("Journal",)).private
    assert not parse(tmp_path, "Journalism/b.md", ("Journal",)).private


def test_privacy_follows_symlinks_and_ignores_case(tmp_path: Path) -> None:
    """A symlink to a private note is private; a linked private folder is not read twice; Journal = journal."""
    write(tmp_path, "Journal/x.md", "secret")
    write(tmp_path, "People/ok.md", "x")
    os.symlink(tmp_path / "Journal" / "x.md", tmp_path / "People" / "copy.md")
    os.symlink(tmp_path / "Journal", tmp_path / "AJournal")
    os.symlink(tmp_path / "missing-folder", tmp_path / "Gone")
    scan = scan_vault(tmp_path)
    assert [f.path for f in scan.notes] == ["Journal/x.md", "People/copy.md", "People/ok.md"]
    reasons = {s.path: s.reason for s in scan.skipped}
    assert "inside the vault" in reasons["AJournal"] and "Journal/" in reasons["AJournal"]
    assert "broken symlink" in reasons["Gone"]
    notes = {f.path: parse_note(f, ("Journal",)) for f in scan.notes}
    assert notes["People/copy.md"].private and notes["Journal/x.md"].private
    assert not notes["People/ok.md"].private
    (tmp_path / "Journal").rename(tmp_path / "journal")
    renamed = {f.path: parse_note(f, ("Journal",)) for f in scan_vault(tmp_path).notes}
    assert renamed["journal/x.md"].private
    assert is_private("Journal/Caf\u00e9.md", ("journal",)) and is_private("Cafe\u0301/a.md", ("Caf\u00e9",))


def test_bad_files_are_reported_never_fatal(tmp_path: Path) -> None:
    """FIFOs, broken and looping symlinks, unreadable folders and upper-case .MD: each named with a reason."""
    write(tmp_path, "ok.md", "x")
    write(tmp_path, "Upper.MD", "upper")
    os.mkfifo(tmp_path / "x.md")
    os.symlink(tmp_path / "nowhere.md", tmp_path / "dangling.md")
    os.symlink(tmp_path / "self.md", tmp_path / "self.md")
    locked = tmp_path / "Locked"
    locked.mkdir()
    write(locked, "hidden.md", "x")
    locked.chmod(0)
    try:
        scan = scan_vault(tmp_path)
    finally:
        locked.chmod(0o755)
    root_reads_all = os.geteuid() == 0
    assert [f.path for f in scan.notes] == ["Locked/hidden.md"] * root_reads_all + ["Upper.MD", "ok.md"]
    reasons = {s.path: s.reason for s in scan.skipped}
    assert "not a regular file" in reasons["x.md"]
    assert "broken symlink" in reasons["dangling.md"]
    assert "symlink loop" in reasons["self.md"]
    if not root_reads_all:
        assert "unreadable folder" in reasons["Locked"]
