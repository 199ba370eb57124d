"""The managed server's jars: a lock file of coordinates and SHA-256, each jar verified on every start.

A missing, truncated or corrupted jar is fetched again, from the first source that has it: the local
Maven repository, a Maven-layout repository whose URL the user supplies (KB_JAR_REPOSITORY, the config's
`jar_repository`, or the mirror in ~/.m2/settings.xml), else Maven itself. kb names no repository host
of its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kb.errors import ServerError

LOCK_NAME = "neo4j-jars.lock"
REPO_ENV = "KB_JAR_REPOSITORY"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
FETCH_WORKERS = 8
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Jar:
    """One locked artifact: Maven coordinates, size and SHA-256."""

    group: str
    artifact: str
    version: str
    classifier: str | None
    size: int
    sha256: str

    @property
    def file_name(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    @property
    def repo_path(self) -> str:
        """The jar's path inside a Maven-layout repository."""
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"


@dataclass(frozen=True)
class Lock:
    """The Neo4j version a lock file is for, and its jars."""

    version: str
    jars: tuple[Jar, ...]


def parse_lock(text: str, where: str = LOCK_NAME) -> Lock:
    """Read a lock file: `neo4j VERSION`, then `sha256 size group:artifact:version[:classifier]` lines."""
    version = ""
    jars: list[Jar] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if parts[0] == "neo4j" and len(parts) == 2:
            version = parts[1]
            continue
        coord = parts[2].split(":") if len(parts) == 3 else []
        if len(coord) not in (3, 4) or len(parts[0]) != 64 or not parts[1].isdigit():
            raise ServerError(
                f"{where} line {n} is not `sha256 size group:artifact:version[:classifier]`: "
                "regenerate it with scripts/neo4j_jars_lock.py"
            )
        classifier = coord[3] if len(coord) == 4 else None
        jars.append(Jar(coord[0], coord[1], coord[2], classifier, int(parts[1]), parts[0].lower()))
    if not version or not jars:
        raise ServerError(f"{where} names no Neo4j version or no jars: regenerate it with scripts/neo4j_jars_lock.py")
    return Lock(version, tuple(jars))


def packaged_lock() -> Lock:
    """The lock file shipped in kb.data."""
    return parse_lock(resources.files("kb.data").joinpath(LOCK_NAME).read_text(encoding="utf-8"))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_good(path: Path, jar: Jar) -> bool:
    """True when `path` is exactly the locked jar (size first, then SHA-256)."""
    try:
        if path.stat().st_size != jar.size:
            return False
    except OSError:
        return False
    return sha256_of(path) == jar.sha256


def bad_jars(lib: Path, lock: Lock) -> list[Jar]:
    """The locked jars that are missing from `lib`, truncated or corrupted."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        good = list(pool.map(lambda jar: is_good(lib / jar.file_name, jar), lock.jars))
    return [jar for jar, ok in zip(lock.jars, good) if not ok]


def remove_strays(lib: Path, lock: Lock) -> list[str]:
    """Delete jars in `lib` the lock does not name (they would join the classpath)."""
    wanted = {jar.file_name for jar in lock.jars}
    strays = sorted(p.name for p in lib.glob("*.jar") if p.name not in wanted)
    for name in strays:
        (lib / name).unlink()
    return strays


def _settings_file() -> Path:
    return Path.home() / ".m2" / "settings.xml"


def _settings_values(path: Path) -> tuple[Path | None, list[str]]:
    """The localRepository and the mirror URLs (for * or central) of a Maven settings file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None, []
    local: Path | None = None
    urls: list[str] = []
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag == "localRepository" and el.text and el.text.strip():
            local = Path(el.text.strip().replace("${user.home}", str(Path.home()))).expanduser()
        if tag == "mirror":
            fields = {c.tag.rsplit("}", 1)[-1]: (c.text or "").strip() for c in el}
            scope = {s.strip() for s in fields.get("mirrorOf", "").split(",")}
            if fields.get("url") and scope & {"*", "central", "external:*"}:
                urls.append(fields["url"])
    return local, urls


def local_repository() -> Path:
    """The local Maven repository (settings.xml localRepository, else ~/.m2/repository)."""
    local, _ = _settings_values(_settings_file())
    return local or Path.home() / ".m2" / "repository"


def repository_urls(configured: str | None) -> list[str]:
    """Repository base URLs to try, in order: KB_JAR_REPOSITORY, the config's jar_repository, Maven mirrors."""
    urls = [u.strip() for u in (os.environ.get(REPO_ENV) or "").split(",") if u.strip()]
    urls += [u.strip() for u in (configured or "").split(",") if u.strip()]
    urls += _settings_values(_settings_file())[1]
    return list(dict.fromkeys(u.rstrip("/") for u in urls))


def check_url(base: str) -> None:
    """HTTPS, or plain HTTP to this machine only; anything else is a one-line error."""
    parts = urllib.parse.urlsplit(base)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK):
        return
    raise ServerError(
        f"jar repository {base!r} is not an https:// URL: set {REPO_ENV} (or jar_repository in "
        "the kb config) to the https URL of a Maven-layout repository"
    )


def _finish(part: Path, dest: Path, jar: Jar) -> bool:
    if is_good(part, jar):
        os.replace(part, dest)
        return True
    part.unlink(missing_ok=True)
    return False


def download(url: str, dest: Path, jar: Jar, timeout: float = TIMEOUT_S) -> bool:
    """Fetch `url` into `dest` via `dest.part`, resuming a partial file; True when the SHA-256 matches."""
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    if have >= jar.size:
        if _finish(part, dest, jar):
            return True
        have = 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as resp:
        mode = "ab" if have and resp.status == 206 else "wb"
        with open(part, mode) as fh:
            shutil.copyfileobj(resp, fh, 1 << 20)
    return _finish(part, dest, jar)


def _from_url(base: str, lib: Path, jar: Jar) -> str | None:
    """Fetch one jar from a repository (two tries: a resumed file whose hash fails is fetched whole); None if done."""
    url = f"{base}/{jar.repo_path}"
    try:
        for _ in range(2):
            if download(url, lib / jar.file_name, jar):
                return None
        return f"{url}: SHA-256 differs from the lock file"
    except urllib.error.HTTPError as exc:
        return f"{url}: HTTP {exc.code}"
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"{url}: {reason}"


def _copy_verified(src: Path, dest: Path, jar: Jar) -> bool:
    if not is_good(src, jar):
        return False
    part = dest.with_name(dest.name + ".part")
    shutil.copyfile(src, part)
    return _finish(part, dest, jar)


def maven_copy(version: str, work: Path) -> str | None:
    """Let Maven resolve Neo4j `version`'s runtime jars into `work`/lib (`work` made afresh); None when it
    did, else the last lines of what mvn said. Needs mvn on PATH."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pom = resources.files("kb.data").joinpath("neo4j-pom.xml").read_text(encoding="utf-8")
    (work / "pom.xml").write_text(pom.replace("@NEO4J_VERSION@", version), encoding="utf-8")
    cmd = [
        "mvn",
        "-B",
        "-q",
        "-f",
        str(work / "pom.xml"),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={work / 'lib'}",
        "-DincludeScope=runtime",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return None if proc.returncode == 0 else " ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])


def _maven_fetch(lib: Path, version: str, jars: Sequence[Jar], work: Path) -> str | None:
    """Let Maven resolve the set into `work`, then take the verified jars; None when all were found."""
    if shutil.which("mvn") is None:
        return "mvn is not installed"
    try:
        failed = maven_copy(version, work)
        if failed is not None:
            return "mvn failed: " + failed
        missing = [j for j in jars if not _copy_verified(work / "lib" / j.file_name, lib / j.file_name, j)]
        return f"mvn gave no jar matching the lock for {missing[0].file_name}" if missing else None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fetch(
    lib: Path,
    lock: Lock,
    jars: Sequence[Jar],
    configured_repo: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Put every jar of `jars` into `lib`, verified, from the local repository, a repository URL, or Maven."""
    lib.mkdir(parents=True, exist_ok=True)
    local = local_repository()
    todo = [j for j in jars if not _copy_verified(local / j.repo_path, lib / j.file_name, j)]
    errors: list[str] = []
    for base in repository_urls(configured_repo):
        if not todo:
            break
        check_url(base)
        if progress:
            progress(f"fetching {len(todo)} Neo4j jars from {base}")
        with ThreadPoolExecutor(max_workers=FETCH_WORKERS) as pool:
            results = list(pool.map(lambda j: _from_url(base, lib, j), todo))  # noqa: B023 - done in this pass
        errors += [r for r in results if r]
        todo = [j for j, r in zip(todo, results) if r]
    if todo:
        if progress:
            progress(f"fetching {len(todo)} Neo4j jars with Maven")
        problem = _maven_fetch(lib, lock.version, todo, lib.parent / f"fetch-{lock.version}")
        todo = bad_jars(lib, Lock(lock.version, tuple(todo)))
        if problem and todo:
            errors.append(problem)
    if todo:
        raise ServerError(_fetch_error(todo, errors))


def _fetch_error(todo: Iterable[Jar], errors: Sequence[str]) -> str:
    missing = list(todo)
    why = errors[0] if errors else "no source has them"
    return (
        f"cannot fetch {len(missing)} Neo4j jars ({missing[0].file_name}, ...; {why}): set {REPO_ENV} "
        "(or jar_repository in the kb config) to the https URL of a Maven-layout repository or mirror, "
        "set HTTPS_PROXY if you need a proxy, install Maven, or set NEO4J_URI to use your own server"
    )


def ensure(
    lib: Path, lock: Lock, configured_repo: str | None = None, progress: Callable[[str], None] | None = None
) -> list[Jar]:
    """Verify every locked jar in `lib` (on every start), fetch the bad ones; returns those fetched."""
    lib.mkdir(parents=True, exist_ok=True)
    remove_strays(lib, lock)
    bad = bad_jars(lib, lock)
    if bad:
        (lib / ".complete").unlink(missing_ok=True)
        fetch(lib, lock, bad, configured_repo, progress)
    (lib / ".complete").write_text(lock.version)
    return bad
