"""The followers' notices: what they found that leaves money waiting (a held,
overdue or unaccounted order, each one ``follow_events`` row written once), claimed
for the operator once. Which rows were handed over is in ``store_meta`` (`NOTICED_KEY`:
the highest event id handed over), moved by a compare-and-set committed before the
hand-over, so a row is said once: not again at the next poll, after a restart, or by
a new leader, and not by two leaders at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, insert, select, update

from jupcron.store import tokens
from jupcron.store.engine import begin
from jupcron.store.models import FollowedOrder, FollowEvent, Plan, Run, StoreMeta
from jupcron.store.tokens import Token

# what the followers find that leaves money waiting on someone (their event names)
NOTICE_STEPS = ("order_held", "order_overdue", "order_unaccounted")
NOTICED_KEY = "follow_noticed_upto"  # store_meta: the last follow_events id handed over
NOTICE_BATCH = 200  # rows handed over per poll at most (the rest at the next)


@dataclass(frozen=True)
class OrderNotice:
    """One held, overdue or unaccounted order, as the operator is told of it."""

    step: str  # one of NOTICE_STEPS
    at: datetime
    order: str | None
    source: str | None  # recurring | trigger (the fills view's names)
    run_id: int | None
    plan: str | None
    detail: Mapping[str, Any]
    mint: str | None = None  # the deposit's mint, when the followed order says it
    token: Token | None = None  # that mint's facts (decimals, symbol), when known

    @property
    def input_mint(self) -> str | None:
        """The mint whose money waits: the event's own word, else the followed order's."""
        said = self.detail.get("input_mint")
        return str(said) if said else self.mint

    def amount(self, base_units: object) -> str:
        """What waits, as the operator reads it: ``0.2 SOL (200000000 base units)`` when
        the mint's decimals are known (a bare ``200000000`` of a mint address reads as
        a fortune), else the base units of the mint as they are."""
        raw = str(base_units) if base_units not in (None, "") else "?"
        if self.token is None or not raw.isdigit():
            return f"{raw} of {self.input_mint or 'its input mint'}"
        return f"{self.token.show(int(raw))} ({raw} base units)"


def claim_notices(engine: Engine, limit: int = NOTICE_BATCH) -> list[OrderNotice]:
    """The notice rows not handed over yet, claimed (the mark moved past them, compare
    and set, committed) before they are returned: [] when another took them first."""
    with begin(engine) as conn:
        mark = conn.execute(
            select(StoreMeta.value).where(StoreMeta.key == NOTICED_KEY)
        ).scalar_one_or_none()
        upto = int(mark) if mark else 0
        rows = list(conn.execute(
            select(FollowEvent.id, FollowEvent.at, FollowEvent.step, FollowEvent.source,
                   FollowEvent.order_account, FollowEvent.run_id, FollowEvent.detail,
                   Plan.name, FollowedOrder.input_mint)
            .outerjoin(Run, Run.id == FollowEvent.run_id)
            .outerjoin(Plan, Plan.id == Run.plan_id)
            .outerjoin(FollowedOrder, FollowedOrder.order_account == FollowEvent.order_account)
            .where(FollowEvent.step.in_(NOTICE_STEPS), FollowEvent.id > upto)
            .order_by(FollowEvent.id).limit(limit)
        ))  # fmt: skip
        if not rows:
            return []
        top = str(rows[-1].id)
        if mark is None:  # a racing first claim fails on the key: this one is not said
            conn.execute(insert(StoreMeta).values(key=NOTICED_KEY, value=top))
        else:
            moved = conn.execute(
                update(StoreMeta)
                .where(StoreMeta.key == NOTICED_KEY, StoreMeta.value == mark)
                .values(value=top)
            )
            if moved.rowcount != 1:
                return []  # another leader claimed them
        known = tokens.known(conn)
    found = []
    for r in rows:
        notice = OrderNotice(step=r.step, at=r.at, order=r.order_account, source=r.source,
                             run_id=r.run_id, plan=r.name, mint=r.input_mint,
                             detail=r.detail if isinstance(r.detail, dict) else {})  # fmt: skip
        mint = notice.input_mint
        found.append(replace(notice, token=known.get(mint)) if mint else notice)
    return found
