"""Progress bars on stderr (rich); silent when asked for JSON or not on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Advance(Protocol):
    def __call__(self, n: int = 1) -> None: ...


class Bars:
    """Rich progress bars, or nothing when `quiet`."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet or not sys.stderr.isatty()
        self._console: Any = None

    @property
    def console(self) -> Any:
        """rich's stderr console, made (and rich imported) only when a bar or message is shown."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    @contextmanager
    def step(self, name: str, total: int) -> Iterator[Advance]:
        if self.quiet or total <= 0:
            yield lambda n=1: None
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(
            TextColumn("{task.description:<18}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        ) as bar:
            task = bar.add_task(name, total=total)
            yield lambda n=1: bar.advance(task, n)
