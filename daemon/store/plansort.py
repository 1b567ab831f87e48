"""What `plans apply` learns of its plans before it takes the write lock, and how it
reads plans by name in bounded statements.

`sort_out` tells, for a batch of plans read from their files, which the store holds
already as they are (nothing to write) and which it must write; it reads on the
database's reader, with no lock. `jupcron.store.plansync.PlanSync` then writes those,
under the lock, comparing them again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, any_, bindparam, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from jupcron.store.models import Plan

PLANS = cast(Table, Plan.__table__)
READ_CHUNK = 500  # names per SELECT … WHERE name IN (…)


def among(session: Session, column: ColumnElement[Any], values: list[Any]) -> ColumnElement[bool]:
    """`column` holds one of `values`. On PostgreSQL one array parameter (``= ANY``): a
    statement of `READ_CHUNK` parameters cost psycopg ~5 ms of Python to convert (it
    keeps no conversion of so long a text), each time, and the server its parse."""
    if session.get_bind().dialect.name == "postgresql":
        return column == any_(bindparam(column.key, values, type_=ARRAY(column.type)))
    return column.in_(values)


@dataclass
class Sorted:
    """A batch's plans: to write (added, changed or moved), and the names of the rest."""

    written: list[Any] = field(default_factory=list)
    fresh: set[str] = field(default_factory=set)  # the added or changed, by name
    unchanged: list[str] = field(default_factory=list)


def sort_out(session: Session, plans: Sequence[Any]) -> Sorted:
    """What an apply learns of a batch of `PlanInput`s before it takes the write lock:
    which the store holds already in the same content and file (nothing to write),
    and which it must write (added, changed, or moved to another file), told apart
    as `PlanSync` does (by content hash, then by file). Read on the database's reader
    (`jupcron.store.engine.reader_of`: on SQLite no write lock, and under WAL no wait
    for the daemon's writers), so reading 100,000 plans from their files holds up no
    claim of a due run; `PlanSync` compares the plans to write again, under the lock."""
    out = Sorted()
    for start in range(0, len(plans), READ_CHUNK):
        chunk = plans[start : start + READ_CHUNK]
        stored = {
            name: (digest, source)
            for name, digest, source in session.execute(
                select(PLANS.c.name, PLANS.c.content_hash, PLANS.c.source).where(
                    among(session, PLANS.c.name, [p.name for p in chunk])
                )
            )
        }
        for plan in chunk:
            row = stored.get(plan.name)
            if row is None or row[0] != plan.content_hash():
                out.written.append(plan)
                out.fresh.add(plan.name)
            elif plan.source and row[1] != plan.source:
                out.written.append(plan)  # moved to another file: same plan, same version
            else:
                out.unchanged.append(plan.name)
    return out


def in_chunks(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
