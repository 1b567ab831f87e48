"""`jupcron.store.steps.interleave`: writes stepped side by side, a round per step.

The rounds here are executed by a recorder standing for the database round trip
(`interleave` takes it as a parameter: the seam `runbatch` fills with libpq)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import column, table

from jupcron.store.prepared import Prepared
from jupcron.store.steps import Rows, Send, Steps, interleave

STMT = Prepared(table("t", column("a")).delete())


def send(name: str, *, wait: bool = True) -> Send:
    return Send(STMT, {"name": name}, wait=wait)


class Server:
    """Answers each send with one row naming it; keeps each round's sends."""

    def __init__(self) -> None:
        self.rounds: list[list[str]] = []

    def __call__(self, sends: Sequence[Send]) -> list[Rows]:
        names = [str(s.params["name"]) for s in sends]
        self.rounds.append(names)
        return [[{"answer": name}] for name in names]


def write(prefix: str, waits: int, *, then: int = 0) -> Steps[list[str]]:
    """`waits` statements it reads, each after one it does not; `then` more at its end."""
    seen = []
    for n in range(waits):
        yield send(f"{prefix}-ff{n}", wait=False)
        rows = yield send(f"{prefix}-{n}")
        seen.append(rows[0]["answer"])
    for n in range(then):
        yield send(f"{prefix}-tail{n}", wait=False)
    return seen


def test_a_round_per_step_in_order_within_each_write() -> None:
    server = Server()
    results, rest = interleave([write("a", 2), write("b", 1, then=2), write("c", 0)], server)
    assert results == [["a-0", "a-1"], ["b-0"], []]
    assert server.rounds == [
        ["a-ff0", "a-0", "b-ff0", "b-0"],
        ["a-ff1", "a-1", "b-tail0", "b-tail1"],  # b's tail rides with a's next step
    ]
    assert rest == []


def test_what_no_write_waits_for_is_left_for_the_caller() -> None:
    server = Server()
    results, rest = interleave([write("a", 1, then=1), write("b", 0, then=2)], server)
    assert results == [["a-0"], []]
    assert server.rounds == [["a-ff0", "a-0", "b-tail0", "b-tail1"]]
    assert [s.params["name"] for s in rest] == ["a-tail0"]


def test_writes_that_wait_for_nothing_make_no_round() -> None:
    server = Server()
    results, rest = interleave([write("a", 0, then=1)], server)
    assert (results, server.rounds) == ([[]], [])
    assert [s.params["name"] for s in rest] == ["a-tail0"]
