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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
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
) -> Iterator[LoadResult]:
    """Each file read, in order, by `workers` processes (at most `AHEAD` each ahead)."""
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        pending: deque[Future[LoadResult]] = deque()
        queued = iter(files)
        try:
            for file in queued:
                pending.append(pool.submit(read_file, file, wallets))
                if len(pending) >= workers * AHEAD:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
