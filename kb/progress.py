"""Progress bars on stderr (rich); silent when asked for JSON or not on a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


class Advance(Protocol):
    def __call__(self, n: int = 1) -> None: ...


class Bars:
    """Rich progress bars, or nothing when `quiet`."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet or not sys.stderr.isatty()
        self.console = Console(stderr=True)

    @contextmanager
    def step(self, name: str, total: int) -> Iterator[Advance]:
        if self.quiet or total <= 0:
            yield lambda n=1: None
            return
        with Progress(TextColumn("{task.description:<18}"), BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn(), console=self.console, transient=False) as bar:
            task = bar.add_task(name, total=total)
            yield lambda n=1: bar.advance(task, n)

