"""A write as steps: a generator that yields each statement it sends (a `Send`)
and is given back that statement's rows.

Written so, one write runs as before, each statement executed when it is
yielded (`run`). Many writes can also be stepped side by side (`interleave`):
each round sends every write's next statement in one batch, so on PostgreSQL a
group commit of eight writes makes a round trip a round instead of one a
statement (`jupcron.store.runbatch`). The writes of one batch are calls of
different threads about different runs (a run's own writes are never in one
batch): nothing ordered them among themselves but their arrival, so their
statements may mix. Within one write the order is kept; a write of plain
statements (`at_once`) runs them at its turn in the round.

A `Send` with ``wait=False`` is one whose rows the write does not need: the write
goes on at once, and the statement goes with the round that comes next (at the
latest with the batch's end). A write that reads the database itself after such a
statement must wait for it instead, or it would not see it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from functools import wraps
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection

from jupcron.store.prepared import Prepared

P = ParamSpec("P")
T = TypeVar("T")
Rows = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Send:
    """One statement of a write: `stmt` with `params`; `wait`: the write needs its rows."""

    stmt: Prepared
    params: Mapping[str, Any]
    wait: bool = True


Steps = Generator[Send, Rows, T]
Round = Callable[[Sequence[Send]], list[Rows]]  # executes sends in order: their rows


def run(conn: Connection, steps: Steps[T]) -> T:
    """One write, each statement executed as it is yielded; its result."""
    try:
        send = next(steps)
        while True:
            send = steps.send(send.stmt.run(conn, send.params))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def executed(
    steps: Callable[Concatenate[Connection, P], Steps[T]],
) -> Callable[Concatenate[Connection, P], T]:
    """A write of steps as a plain function: its statements executed as they are
    yielded (`run`)."""

    @wraps(steps)
    def write(conn: Connection, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return run(conn, steps(conn, *args, **kwargs))

    return write


def at_once(fn: Callable[[Connection], T], conn: Connection) -> Steps[T]:
    """A write of plain statements as a write of steps: `fn` runs whole at its first
    step (its statements executed at once, as in `run`)."""
    yield from ()
    return fn(conn)


def interleave(writes: Sequence[Steps[Any]], execute: Round) -> tuple[list[Any], list[Send]]:
    """Step `writes` side by side until each has finished: a round takes every
    unfinished write's next statement (with the ones it sent before it without
    waiting) and executes them together. The writes' results, in order, and the
    sends still to execute (no write waits for them)."""
    results: list[Any] = [None] * len(writes)
    answers: dict[int, Rows | None] = dict.fromkeys(range(len(writes)))
    queue: list[Send] = []
    while True:
        waiting: list[tuple[int, int]] = []  # (write, its send's place in the round)
        for index, answer in answers.items():
            steps = writes[index]
            try:
                send = next(steps) if answer is None else steps.send(answer)
                while not send.wait:
                    queue.append(send)
                    send = next(steps)
            except StopIteration as stop:
                results[index] = stop.value
                continue
            waiting.append((index, len(queue)))
            queue.append(send)
        if not waiting:
            return results, queue
        rows = execute(queue)
        queue = []
        answers = {index: rows[place] for index, place in waiting}
