"""Plan files read on other processes: `plans apply --jobs N` of many files.

Reading a file (YAML with line marks, then the checks of every plan in it) is
most of what a large apply costs, and each file stands alone: worker processes
read the files while the caller compares and writes the ones already read, in
file order. What a file gives back is what reading it in the caller would
have given (its valid plans, its problems, warnings and suggestions), so the
results do not depend on where a file was read; what spans files (a name used
twice, the order of the problems) stays with the caller.

Workers are started with ``spawn`` (the caller holds a store connection and
perhaps threads: nothing of it is inherited) and read at most `AHEAD` files
past the one the caller is at, so memory stays flat in the file count (each
worker adds ~100 MB: one file's YAML nodes and the checks' imports; hence not the
default).

An interrupt is the caller's alone (`_quiet_worker`): a worker ignores Ctrl-C, which
the terminal sends its whole process group (each worker printed its own traceback
beside the caller's one line), and is started with SIGINT blocked, so that it cannot
be caught in its start-up imports either, as the standard library starts its resource
tracker. The caller, interrupted, shuts the pool down. A worker whose caller is gone
(killed: a wrapper's SIGTERM to it alone, SIGKILL, a crash) ends itself: it was left
waiting on its queue forever, ~100 MB each, adopted by init.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context, parent_process
from multiprocessing.connection import wait
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jupcron.plans.load import LoadResult

MIN_FILES = 4  # fewer files are read in the caller: starting a worker costs ~0.5 s
MAX_WORKERS = 4
AHEAD = 2  # files read ahead per worker


def workers_for(files: int, wanted: int) -> int:
    """How many worker processes read `files` files: none (all read in the caller)
    for a few files, else `wanted` (at most `MAX_WORKERS`)."""
    return 0 if files < MIN_FILES else max(0, min(wanted, MAX_WORKERS))


def read_file(file: Path, wallets: tuple[str, ...] | None) -> LoadResult:
    """Read one file as `jupcron.plans.load` does (a worker's task): its valid plans,
    and its problems, warnings and suggestions."""
    from jupcron.plans.load import LoadResult, load_file

    found = LoadResult()
    found.plans = load_file(file, found, wallets)
    return found


def read_all(
    files: Sequence[Path], wallets: tuple[str, ...] | None, workers: int
) -> Generator[LoadResult, None, None]:
    """Each file read, in order, by `workers` processes (at most `AHEAD` each ahead).
    Left before the last file (an interrupt, an error, the caller closing it), the
    files not yet begun are not read; those under way are finished (a moment), not
    cut off: a worker ended mid-answer would leave the pool's thread waiting for the
    rest of it, and the exit with it."""
    context = get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_quiet_worker)
    pending: deque[Future[LoadResult]] = deque()
    read = False
    try:
        for file in files:
            # the pool starts its workers in `submit`: they inherit SIGINT blocked (one
            # that comes meanwhile is the caller's once it is unblocked)
            with _sigint_blocked():
                future = pool.submit(read_file, file, wallets)
            pending.append(future)
            if len(pending) >= workers * AHEAD:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
        read = True
    finally:
        pool.shutdown(wait=True, cancel_futures=not read)


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT held back on this thread, and so in the processes it starts, inside."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


PARENT_GONE = 70  # a worker's exit status once its caller is gone (sysexits' EX_SOFTWARE)


def _quiet_worker() -> None:
    """A worker's start (the pool's initializer): Ctrl-C is the caller's to handle, and
    the worker ends once its caller is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # ignored from now on
    parent = parent_process()
    if parent is None:
        return
    sentinel = parent.sentinel  # readable (end of file) once the caller has ended

    def watch() -> None:
        wait([sentinel])
        os._exit(PARENT_GONE)  # nothing of its own to keep: the files are only read

    threading.Thread(target=watch, name="caller-gone", daemon=True).start()
