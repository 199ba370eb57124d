"""The public view every MCP tool reads through: a transaction that hides private material, then rolls back.

Each tool call opens one explicit transaction on kb's database, runs kb.cypher.public_view() in it
(private notes, their chunks, claims, private-only entities, evidence, names, tags, folders and link
placeholders removed from this transaction's own view), runs the tool's reads, and rolls the transaction
back: nothing it did is ever committed. Neo4j's full-text and vector index procedures honour the
transaction's state, so they do not return the removed nodes either. The agent's query never sees
private data because it is not in what the query can read; no query pattern has to be recognised.

After the reads the statements run again: if they find anything to hide, a writer committed private
material while the call read (the transaction sees each statement's latest committed state), so the
answer is discarded and the call runs once more.

Calls carry a transaction metadata tag, so a call past its deadline can be found and terminated from a
second session while its own thread is still blocked on the server.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as nx

from kb import cypher
from kb.cypher import public_view
from kb.errors import KbError, StoreError
from kb.store import Connection, Store, boxed

T = TypeVar("T")
APP = "kb-mcp"
_ids = itertools.count(1)
_call = threading.local()


def new_call_tag() -> str:
    """A fresh tag for one tool call (process id and a counter)."""
    return f"{os.getpid()}-{next(_ids)}"


def set_call_tag(tag: str) -> None:
    """Tag this thread's transactions, so `PublicStore.terminate(tag)` finds them."""
    _call.tag = tag


class ViewChanged(KbError):
    """Private material was committed while a call read the view: its answer is discarded."""


def retrying(work: Callable[[], T]) -> T:
    """Run a tool body; once more if a concurrent writer changed what the view had to hide."""
    try:
        return work()
    except ViewChanged:
        return work()


class PublicStore(Store):
    """A Store whose every read sees only public material, in transactions that are always rolled back."""

    parallel_reads = False  # a call's reads share one transaction (the view), which another thread would not see
    hides_material = True

    def __init__(
        self,
        conn: Connection,
        timeout_s: float,
        private_folders: Sequence[str] = (),
        vector_dir: Path | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.folders = sorted(private_folders)
        self._local = threading.local()
        super().__init__(conn, vector_dir)

    def _metadata(self) -> dict[str, str]:
        return {"app": APP, "kb_call": getattr(_call, "tag", "")}

    @contextlib.contextmanager
    def view(self) -> Iterator[neo4j.Transaction]:
        """One transaction with private material hidden; nested uses share it; always rolled back."""
        current = getattr(self._local, "tx", None)
        if current is not None:
            yield current
            return
        with self.driver.session(database=self.conn.database, default_access_mode=neo4j.WRITE_ACCESS) as session:
            tx = session.begin_transaction(metadata=self._metadata(), timeout=self.timeout_s)
            try:
                self._hide(tx)
                self._local.tx = tx
                yield tx
                if self._hide(tx):  # a writer committed private material while the call read: discard it
                    raise ViewChanged("the graph changed while the call ran (a refresh is writing): call again")
            finally:
                self._local.tx = None
                with contextlib.suppress(Exception):
                    tx.rollback()  # never commit: what the view removed stays in the graph

    def warm(self, timeout_s: float = 120.0) -> None:
        """Plan the view's statements once (seconds on a cold server), so no call's deadline pays for it."""
        with self.driver.session(database=self.conn.database, default_access_mode=neo4j.WRITE_ACCESS) as session:
            tx = session.begin_transaction(metadata={"app": APP}, timeout=timeout_s)
            try:
                self._hide(tx)
            finally:
                tx.rollback()

    def _hide(self, tx: neo4j.Transaction) -> bool:
        """Run the view's statements; whether they found anything to hide."""
        changed = False
        for statement in public_view():
            changed |= tx.run(statement, folders=self.folders).consume().counters.contains_updates
        return changed

    def read_tx(self, work: Callable[[Any], T]) -> T:
        """Run `work` on the public view; a deadlock with a concurrent writer is retried once."""
        nested = getattr(self._local, "tx", None) is not None
        for attempt in (1, 2):
            try:
                with self.view() as tx:
                    return work(tx)
            except nx.TransientError as exc:
                if nested or attempt == 2 or "Deadlock" not in (exc.code or ""):
                    raise
            except ViewChanged:
                if nested or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def read(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        """kb's own statements on the public view, parameters boxed as Store.read's."""
        sent = boxed(statement, params)
        return self.read_tx(lambda tx: [r.data() for r in tx.run(*sent)])

    def read_maps(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        sent = boxed(statement, params)
        return self.read_tx(lambda tx: [dict(r) for r in tx.run(*sent)])

    def query_type(self, query: str, params: dict[str, Any]) -> str | None:
        """The planner's verdict on a query (EXPLAIN: nothing is read), in a read transaction of its own."""
        work = neo4j.unit_of_work(timeout=self.timeout_s, metadata=self._metadata())(
            lambda tx: tx.run("EXPLAIN " + query, params).consume().query_type
        )
        with self.driver.session(database=self.conn.database, default_access_mode=neo4j.READ_ACCESS) as session:
            return session.execute_read(work)  # type: ignore[no-any-return]

    def terminate(self, tag: str) -> int:
        """Terminate the server transactions of a call (one past its deadline); how many were found."""
        try:
            with self.driver.session(database=self.conn.database) as session:
                ids = [r["id"] for r in session.run(cypher.call_transactions(), tag=tag)]
                if ids:
                    session.run(cypher.terminate_transactions(), ids=ids).consume()
                return len(ids)
        except (nx.Neo4jError, nx.DriverError):
            return 0

    def run(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        raise StoreError("the MCP server is read-only")

    def run_batch(self, statements: Any) -> None:
        raise StoreError("the MCP server is read-only")

    def run_autocommit(self, statement: str, **params: Any) -> None:
        raise StoreError("the MCP server is read-only")
