"""Incremental refresh against a real Neo4j: only what changed is written; kill -9 is survivable."""

from __future__ import annotations

import os
import random
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
    write(root, "People/Ann.md", "---\ndate: 2024-01-01\naliases: [Annie]\ntags: [person]\n---\n# Ann\nWorks with [[Bob]].")
    write(root, "People/Bob.md", "# Bob\nKnows [[Ann|her]] and [[Carol]] and [[Annie]]. #person/friend")
    write(root, "Notes/Plan.md", "---\ndate: 2024-02-02\n---\nSee [[People/Ann#Ann]] ![[chart.png]] ![[gone.png]]")
    write(root, "chart.png", "png")
    return root


def run(store: Store, vault: Path):  # type: ignore[no-untyped-def]
    return refresh(store, make_config(vault), Bars(quiet=True))


def targets(store: Store, source: str) -> list[str]:
    rows = store.read("MATCH (:Note {path: $p})-[:LINKS_TO]->(t) RETURN coalesce(t.path, 'missing:' + t.key) AS t "
                      "ORDER BY t", p=source)
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
        {"p": "chart.png"}]
    assert store.read("MATCH (:Tag {name:'person/friend'})-[:CHILD_OF]->(t:Tag) RETURN t.name AS n") == [{"n": "person"}]
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
    assert store.read("MATCH (m:Missing) RETURN m.key AS k ORDER BY k") == [
        {"k": "gone.png"}, {"k": "people/ann"}]


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


def test_kill_9_mid_refresh_then_finish(store: Store, connection: Connection, tmp_path: Path) -> None:
    vault = generated_vault(tmp_path / "v", 1500)
    env = {**os.environ, "KB_HOME": str(tmp_path / "home"), "NEO4J_URI": connection.uri,
           "NEO4J_USER": connection.user, "NEO4J_PASSWORD": connection.password, "KB_VAULT": str(vault)}
    proc = subprocess.Popen([sys.executable, "-c", "from kb.cli import main; main()", "refresh", "--no-embed", "--json"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if store.read("MATCH (n:Note) RETURN count(n) AS c")[0]["c"] >= 250:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "refresh finished before it could be killed: make the vault bigger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = settled_count(store)
    assert 0 < partial < 1500
    s = run(store, vault)
    assert len(s.added) == 1500 - partial
    resumed = dump(store)
    store.clear()
    run(store, vault)
    assert dump(store) == resumed
