"""Incremental refresh against a real Neo4j: only what changed is written; kill -9 is survivable."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import make_config
from graphdump import dump

from kb.progress import Bars
from kb.refresh import refresh
from kb.store import Connection, Store


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def small_vault(root: Path) -> Path:
    write(
        root,
        "People/Ann.md",
        "---\ndate: 2024-01-01\naliases: [Annie]\ntags: [person]\n---\n# Ann\nWorks with [[Bob]].",
    )
    write(root, "People/Bob.md", "# Bob\nKnows [[Ann|her]] and [[Carol]] and [[Annie]]. #person/friend")
    write(root, "Notes/Plan.md", "---\ndate: 2024-02-02\n---\nSee [[People/Ann#Ann]] ![[chart.png]] ![[gone.png]]")
    write(root, "chart.png", "png")
    return root


def run(store: Store, vault: Path):  # type: ignore[no-untyped-def]
    return refresh(store, make_config(vault), Bars(quiet=True))


def targets(store: Store, source: str) -> list[str]:
    rows = store.read(
        "MATCH (:Note {path: $p})-[:LINKS_TO]->(t) RETURN coalesce(t.path, 'missing:' + t.key) AS t ORDER BY t",
        p=source,
    )
    return [r["t"] for r in rows]


def test_first_build_and_a_second_run_that_writes_nothing(store: Store, tmp_path: Path) -> None:
    vault = small_vault(tmp_path / "v")
    s = run(store, vault)
    assert sorted(s.added) == ["Notes/Plan.md", "People/Ann.md", "People/Bob.md"]
    assert targets(store, "People/Bob.md") == ["People/Ann.md", "missing:annie", "missing:carol"]
    missing = {m["key"]: m for m in s.missing}
    assert missing["annie"]["alias_of"] == ["People/Ann.md"]
    assert missing["gone.png"]["kind"] == "attachment"
    assert store.read("MATCH (:Note {path:'Notes/Plan.md'})-[:ATTACHES]->(a:Attachment) RETURN a.path AS p") == [
        {"p": "chart.png"}
    ]
    parent = store.read("MATCH (:Tag {name:'person/friend'})-[:CHILD_OF]->(t:Tag) RETURN t.name AS n")
    assert parent == [{"n": "person"}]
    assert store.read("MATCH (f:Folder {path:'People'})-[:IN_FOLDER]->(p:Folder) RETURN p.path AS p") == [{"p": ""}]
    before = dump(store)
    again = run(store, vault)
    assert again.wrote_nothing and again.unchanged == 3
    assert dump(store) == before


def test_edit_add_delete_and_rename_relink(store: Store, tmp_path: Path) -> None:
    vault = small_vault(tmp_path / "v")
    run(store, vault)
    write(vault, "People/Carol.md", "# Carol\nNew here.")
    s = run(store, vault)
    assert s.added == ["People/Carol.md"] and s.changed == []
    assert targets(store, "People/Bob.md") == ["People/Ann.md", "People/Carol.md", "missing:annie"]
    (vault / "People/Ann.md").unlink()
    s = run(store, vault)
    assert s.removed == ["People/Ann.md"]
    assert targets(store, "People/Bob.md") == ["People/Carol.md", "missing:ann", "missing:annie"]
    (vault / "People/Carol.md").rename(vault / "People/Caroline.md")
    s = run(store, vault)
    assert (s.added, s.removed) == (["People/Caroline.md"], ["People/Carol.md"])
    assert targets(store, "People/Bob.md") == ["missing:ann", "missing:annie", "missing:carol"]
    write(vault, "People/Bob.md", "# Bob\nOnly [[Caroline]] now.")
    s = run(store, vault)
    assert s.changed == ["People/Bob.md"] and s.added == []
    assert targets(store, "People/Bob.md") == ["People/Caroline.md"]
    assert store.read("MATCH (m:Missing) RETURN m.key AS k ORDER BY k") == [{"k": "gone.png"}, {"k": "people/ann"}]


def test_touch_without_change_rewrites_nothing(store: Store, tmp_path: Path) -> None:
    vault = small_vault(tmp_path / "v")
    run(store, vault)
    os.utime(vault / "People/Ann.md", (time.time() + 5, time.time() + 5))
    s = run(store, vault)
    assert s.touched == 1 and not s.changed and s.chunks_written == 0


def generated_vault(root: Path, notes: int) -> Path:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    for i in range(notes):
        links = " ".join(f"[[n{rng.randrange(notes + 20)}]]" for _ in range(4))
        body = "\n\n".join(f"## H{h}\n" + " ".join(rng.choice(words) for _ in range(180)) for h in range(5))
        write(root, f"f{i % 7}/n{i}.md", f"---\ndate: 2023-01-{1 + i % 28:02d}\ntags: [t{i % 5}]\n---\n{links}\n{body}")
    return root


def settled_count(store: Store) -> int:
    """Notes in the graph once a commit the killed client had already sent has landed."""
    last = -1
    while True:
        time.sleep(0.5)
        now = int(store.read("MATCH (n:Note) RETURN count(n) AS c")[0]["c"])
        if now == last:
            return now
        last = now


def expected_note_links(vault: Path) -> int:
    """An independent count of resolved note links in `generated_vault`: distinct [[nK]] whose nK.md exists."""
    names = {p.stem for p in vault.rglob("*.md")}
    return sum(
        len({t for t in re.findall(r"\[\[([^\]]+)\]\]", p.read_text()) if t in names}) for p in vault.rglob("*.md")
    )


def kb_refresh_proc(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", "from kb.cli import main; main()", "refresh", "--no-embed", "--no-extract", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def cli_env(tmp_path: Path, connection: Connection, vault: Path) -> dict[str, str]:
    return {
        **os.environ,
        "KB_HOME": str(tmp_path / "home"),
        "NEO4J_URI": connection.uri,
        "NEO4J_USER": connection.user,
        "NEO4J_PASSWORD": connection.password,
        "KB_VAULT": str(vault),
    }


def children_of(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def test_kill_9_at_random_moments_then_finish(store: Store, connection: Connection, tmp_path: Path) -> None:
    """kill -9 a 1,500-note build (parse workers running) at random moments; the next run is never blocked
    and ends with the same graph as a clean build, every link in place."""
    vault = generated_vault(tmp_path / "v", 1500)
    env = cli_env(tmp_path, connection, vault)
    rng = random.Random(11)
    for _ in range(3):
        proc = kb_refresh_proc(env)
        time.sleep(1.5 + rng.random() * 6)
        workers = children_of(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers), "parse workers outlived their killed parent"
    settled_count(store)
    finish = kb_refresh_proc(env)
    out, err = finish.communicate(timeout=300)  # a blocked run would hang here
    assert finish.returncode == 0, err.decode()
    resumed = dump(store)
    assert store.counts()["links"] == expected_note_links(vault)
    store.clear()
    run(store, vault)
    assert dump(store) == resumed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_two_refreshes_at_once_one_waits_its_turn(store: Store, connection: Connection, tmp_path: Path) -> None:
    """The second concurrent refresh is refused with a clear message; links are never doubled."""
    vault = generated_vault(tmp_path / "v", 400)
    env = cli_env(tmp_path, connection, vault)
    first, second = kb_refresh_proc(env), kb_refresh_proc(env)
    results = [p.communicate(timeout=300) for p in (first, second)]
    codes = sorted([first.returncode, second.returncode])
    assert codes == [0, 1], results
    refused = results[0][1] if first.returncode else results[1][1]
    assert b"is writing to the Neo4j database 'neo4j'" in refused
    assert store.counts()["links"] == expected_note_links(vault)


BOMB = (
    "---\n"
    + 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    + "---\nbody"
)

NASTY = {
    "bomb.md": BOMB,
    "baddate.md": "---\ndate: 2024-02-30\n---\nx",
    "year0.md": "---\ncreated: 0000-01-01\n---\nx",
    "badtime.md": "---\nupdated: 2024-01-01 25:61:61\n---\nx",
    "recursive.md": "---\na: &a [*a]\n---\nx",
    "hexint.md": "---\nn: 0x" + "f" * 5000 + "\n---\nx",
    "complexkey.md": "---\n? [a, b]\n: c\n---\nx",
    "backticks.md": "`" * 1500 + "\n" + "`" * 2000 + " [[good]]",
    "nested.md": ">" * 5000 + " deep\n\n" + "- " * 3000 + "x",
}


def test_each_nasty_file_alone_never_stops_a_run(store: Store, tmp_path: Path) -> None:
    """Each bad file in a vault of its own plus one good note: the run ends, names the file, keeps the good note."""
    for name, text in NASTY.items():
        vault = tmp_path / name.removesuffix(".md")
        write(vault, "good.md", "fine [[bomb]]")
        write(vault, name, text)
        started = time.monotonic()
        s = run(store, vault)
        assert time.monotonic() - started < 20, name
        notes = {r["p"] for r in store.read("MATCH (n:Note) RETURN n.path AS p")}
        assert "good.md" in notes, name
        named = [w for w in s.warnings if w.startswith(name)] + [x["reason"] for x in s.skipped if x["path"] == name]
        assert name in notes, name
        if name not in ("backticks.md", "nested.md", "hexint.md"):  # those parse as written, nothing to say
            assert named, (name, s.warnings, s.skipped)
        store.clear()
    s_fifo = tmp_path / "fifo"
    write(s_fifo, "good.md", "fine")
    os.mkfifo(s_fifo / "x.md")
    s = run(store, s_fifo)
    assert [x["path"] for x in s.skipped] == ["x.md"] and s.counts["notes"] == 1


def test_a_folder_renamed_mid_run_is_reported_not_fatal(store: Store, tmp_path: Path) -> None:
    """Files that vanish between the scan and the parse are skipped with a reason; the next run picks them up."""
    vault = tmp_path / "v"
    for i in range(30):
        write(vault, f"Sub/n{i}.md", f"note {i}")
    write(vault, "top.md", "top")
    cfg = make_config(vault)
    from kb import refresh as refresh_mod

    real_scan = refresh_mod.scan_vault

    def scan_then_rename(*args, **kwargs):  # type: ignore[no-untyped-def]
        scanned = real_scan(*args, **kwargs)
        (vault / "Sub").rename(vault / "Moved")
        return scanned

    refresh_mod.scan_vault = scan_then_rename  # type: ignore[assignment]
    try:
        s = refresh(store, cfg, Bars(quiet=True))
    finally:
        refresh_mod.scan_vault = real_scan  # type: ignore[assignment]
    assert len(s.skipped) == 30 and all("vanished" in x["reason"] for x in s.skipped)
    again = run(store, vault)
    assert len(again.added) == 30 and again.counts["notes"] == 31


def test_a_deleted_subtree_leaves_no_folder_or_tag_behind(store: Store, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "keep.md", "kept #keep")
    write(vault, "A/B/C/deep.md", "deep #x/y/z")
    run(store, vault)
    assert store.counts()["folders"] == 4
    import shutil

    shutil.rmtree(vault / "A")
    run(store, vault)
    assert [r["p"] for r in store.read("MATCH (f:Folder) RETURN f.path AS p ORDER BY p")] == [""]
    assert [r["n"] for r in store.read("MATCH (t:Tag) RETURN t.name AS n ORDER BY n")] == ["keep"]


def forms_vault(root: Path, notes: int) -> Path:
    """Short notes linking in every Obsidian form, a few targets missing, in 24 write batches."""
    rng = random.Random(5)
    for i in range(notes):
        ks = [rng.randrange(notes + notes // 30) for _ in range(5)]
        forms = [
            f"[[n{ks[0]}]]",
            f"[[n{ks[1]}|see this]]",
            f"[[f{ks[2] % 9}/n{ks[2]}]]",
            f"[[n{ks[3]}#Part]]",
            f"![[n{ks[4]}]]",
        ]
        write(root, f"f{i % 9}/n{i}.md", f"# n{i}\n" + " ".join(forms) + f"\nwords {i}")
    return root


def resolvable_links(vault: Path) -> int:
    """Independently of kb: distinct link texts per note whose target file exists (path or name)."""
    names = {p.stem for p in vault.rglob("*.md")}
    paths = {p.relative_to(vault).with_suffix("").as_posix() for p in vault.rglob("*.md")}
    total = 0
    for p in vault.rglob("*.md"):
        found = set(re.findall(r"!?\[\[[^\]]+\]\]", p.read_text()))
        targets = {f: f.lstrip("!")[2:-2].split("|")[0].split("#")[0] for f in found}
        total += sum(1 for f, t in targets.items() if t in names or t in paths)
    return total


def test_a_6000_note_vault_keeps_every_link(store: Store, tmp_path: Path) -> None:
    vault = forms_vault(tmp_path / "v", 6000)
    s = run(store, vault)
    assert s.counts["notes"] == 6000
    assert s.counts["links"] == resolvable_links(vault)
    assert run(store, vault).wrote_nothing


def test_incremental_and_clean_builds_agree_after_edits(store: Store, tmp_path: Path) -> None:
    """Deletes, renames, edits and additions across batches: the incremental graph equals a clean build's."""
    vault = forms_vault(tmp_path / "v", 1500)
    run(store, vault)
    for i in range(0, 1500, 15):
        (vault / f"f{i % 9}/n{i}.md").unlink()  # deleted
    for i in range(1, 1500, 15):
        (vault / f"f{i % 9}/n{i}.md").rename(vault / f"f{(i + 1) % 9}/n{i}.md")  # moved to another folder
    for i in range(2, 1500, 15):
        write(vault, f"f{i % 9}/n{i}.md", f"# edited\n[[n{(i * 7) % 1500}]] [[n{i + 3}|x]]")
    for i in range(1500, 1600):
        write(vault, f"new/n{i}.md", f"[[n{i - 1500}]] [[n{i - 1}]]")
    run(store, vault)
    incremental = dump(store)
    assert store.counts()["links"] == resolvable_links(vault)
    store.clear()
    run(store, vault)
    assert dump(store) == incremental
