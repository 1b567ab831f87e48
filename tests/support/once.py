"""A long fixture's value made once per test session, whichever xdist worker asks first.

Worksteal spreads the tests of one module over workers, and a module-scoped fixture
then runs once in each: the demo (25 s) and the short chaos run (23 s) ran twice. The
first worker to ask makes the value under a file lock in the session's shared folder
and pickles it there; the others wait on the lock and read it. Without xdist the value
is simply made. A value that failed to be made is not stored: the next asker tries.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[], T]) -> T:
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return make()
    shared = tmp_path_factory.getbasetemp().parent  # the session's, above each worker's
    stored = shared / f"{name}.pickle"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stored.exists():
            # written just now by another worker of this session, in its own temp folder
            value: T = pickle.loads(stored.read_bytes())  # noqa: S301
            return value
        value = make()
        stored.write_bytes(pickle.dumps(value))
        return value
