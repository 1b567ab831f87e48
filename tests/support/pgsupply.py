"""Test databases made ahead and dropped behind, so no test waits on the cluster's
housekeeping.

Each PostgreSQL test has a database of its own: ``CREATE DATABASE ... TEMPLATE`` of
the migrated template before it, ``DROP DATABASE ... WITH (FORCE)`` after it. Made in
the test's setup, that cost every PostgreSQL test 0.2-0.5 s of waiting (a suite has
hundreds of them), and its drop 0.05-0.2 s more. Here one thread per test worker does
both, in order: while a test runs, it makes the database the next test will take and
drops those of the tests that ended. Each test still gets a database nobody used
before it, made from the same template by the same statement, and each is still
dropped with FORCE; only the waiting is gone.

A database made ahead whose CREATE failed (a test had stopped the cluster: see
test_scheduler_late_outage) is made again when a test asks, in the test's own thread,
as before. A drop that failed is tried again by `close` (at the end of the worker's session),
and raised there if it fails again, rather than lost.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from tests.support.pgcluster import PgCluster


class DatabaseSupply:
    def __init__(self, cluster: PgCluster, template: str, names: Callable[[], str]) -> None:
        self._cluster = cluster
        self._template = template
        self._names = names
        self._work = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-supply")
        self._lock = threading.Lock()
        self._ahead: tuple[str, Future[str]] | None = None
        self._drops: list[tuple[str, Future[None]]] = []

    def _make(self, name: str) -> str:
        return self._cluster.create_database(name, template=self._template)

    def take(self) -> tuple[str, str]:
        """(name, url) of a fresh database made from the template, for one test; the
        next one is started meanwhile."""
        with self._lock:
            ahead, self._ahead = self._ahead, None
            made: tuple[str, str] | None = None
            if ahead is not None:
                name, future = ahead
                try:
                    made = (name, future.result())
                except Exception:  # the cluster was down (a test stopped it): made below
                    self._work.submit(self._drop_quietly, name)  # in case it did commit
            if made is None:
                name = self._names()
                made = (name, self._make(name))
            following = self._names()
            self._ahead = (following, self._work.submit(self._make, following))
            return made

    def _drop_quietly(self, name: str) -> None:
        with contextlib.suppress(Exception):
            self._cluster.drop_database(name)

    def drop_later(self, name: str) -> None:
        self._drops.append((name, self._work.submit(self._cluster.drop_database, name)))

    def close(self) -> None:
        """Wait for the work queued and drop the database made for no test. A drop that
        failed (the cluster was down for a moment) is tried once more, and raises if it
        fails again."""
        with self._lock:
            ahead, self._ahead = self._ahead, None
        if ahead is not None:
            name, future = ahead
            with contextlib.suppress(Exception):
                future.result()
            self._work.submit(self._drop_quietly, name)
        self._work.shutdown(wait=True)
        for name, drop in self._drops:
            if drop.exception() is not None:
                self._cluster.drop_database(name)
