"""The runway of a wallet's balance: how many upcoming runs it covers, per wallet and
input mint. Pure functions; time and balances are parameters.

Every enabled plan of the wallet that spends the mint (a swap's ``amount``, a
trigger order's ``inputAmount``, a recurring plan's deposit: `in_amount_of`)
contributes its fire times within ``(now, now + horizon]``; the runs are taken in
time order (two at one instant: the larger first) and counted while the balance
covers their sum. A plan that is paused, disabled or in dry run spends nothing and
is left out. At most `MAX_RUNS` runs are looked at: a balance that covers them all
covers the horizon as far as anyone needs to know.

A runway is *low* when the balance does not cover every run in the horizon and
covers fewer than the threshold; a balance that covers every run of the horizon is
never low, however few runs there are. An unknown balance (the API did not answer)
has an unknown runway: neither 0, nor endless, nor low.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from jupcron.plans.rules import in_amount_of
from jupcron.scheduling.schedule import Schedule, next_fire_times
from jupcron.store.records import PlanRecord

MAX_RUNS = 10_000  # runs looked at per wallet and mint
CHUNK = 32  # fire times computed at a time per plan


@dataclass(frozen=True)
class Need:
    """One plan's spending of one mint: `amount` base units at each fire time."""

    plan: str
    wallet: str
    mint: str
    amount: int
    schedule: Schedule
    count: int = 1  # plans of the same content (the first by name is `plan`)


def needs_of(
    plans: Iterable[PlanRecord | tuple[PlanRecord, int]],
    wallet: str,
    *,
    paused: Callable[[str], bool] = lambda name: False,
    dry_run: bool = False,
) -> list[Need]:
    """What each active plan of `wallet` spends per run (plans that spend nothing,
    paused ones and dry runs are left out). One wallet today: every plan is its.
    A (plan, count) stands for `count` plans of that content (the store groups them)."""
    out = []
    for item in plans:
        plan, count = item if isinstance(item, tuple) else (item, 1)
        if not plan.enabled or plan.settings.dry_run or dry_run or paused(plan.name):
            continue
        spent = in_amount_of(plan.request)
        if spent is None or spent[1] <= 0:
            continue
        out.append(Need(plan.name, wallet, spent[0], spent[1], plan.schedule, count))
    return out


@dataclass(frozen=True)
class Runway:
    """What the balance of one mint in one wallet covers."""

    wallet: str
    mint: str
    balance: int | None  # base units; None: unknown (the API did not answer)
    runs: int | None  # upcoming runs covered, in time order; None when the balance is unknown
    upcoming: int  # runs in the horizon (at most MAX_RUNS)
    needed: int  # base units all of them take
    short_at: datetime | None  # the first run the balance does not cover
    plans: tuple[str, ...]  # the plans spending this mint, by name
    problem: str | None = None  # why the balance is unknown

    @property
    def known(self) -> bool:
        return self.balance is not None and self.runs is not None

    @property
    def covers_all(self) -> bool | None:
        """Every run in the horizon is covered (None: unknown)."""
        return None if not self.known else self.short_at is None

    def low(self, threshold: int) -> bool | None:
        """Under the threshold (None: unknown); a threshold of 0 is never low."""
        if not self.known or self.runs is None:
            return None
        return self.short_at is not None and self.runs < threshold


PLANS_NAMED = 50  # plans a runway names (by name); more are counted in a last entry


def _fires(
    need: Need, count: int, now: datetime, end: datetime
) -> Iterator[tuple[datetime, int, str, int]]:
    """The runs in ``(now, end]`` of `count` plans sharing `need`'s schedule and amount,
    lazily (one fire time first, then a few at a time: a merge of thousands of plans
    computes only what it takes)."""
    after, size = now, 1
    while True:
        chunk = next_fire_times(need.schedule, after, size)
        for instant in chunk:
            if instant > end:
                return
            yield instant, -need.amount, need.plan, count
        if len(chunk) < size:
            return
        after, size = chunk[-1], CHUNK


def _grouped(needs: Iterable[Need]) -> list[tuple[Need, int]]:
    """Needs with the same schedule and amount fire together: one stream of runs each,
    with how many plans it stands for (100,000 plans on 1,440 daily times: 1,440)."""
    groups: dict[object, tuple[Need, int]] = {}
    for need in needs:
        try:
            key: object = (need.schedule, need.amount)
            hash(key)
        except TypeError:
            key = (id(need.schedule), need.amount)
        first, count = groups.get(key, (need, 0))
        groups[key] = (min(first, need, key=lambda n: n.plan), count + need.count)
    return list(groups.values())


def runway(
    wallet: str,
    mint: str,
    balance: int | None,
    needs: Iterable[Need],
    now: datetime,
    horizon: timedelta,
    *,
    problem: str | None = None,
    max_runs: int = MAX_RUNS,
) -> Runway:
    """The runway of `balance` (base units of `mint`) against the needs that spend it."""
    mine = [n for n in needs if n.wallet == wallet and n.mint == mint]
    end = now + horizon
    merged = heapq.merge(*(_fires(n, k, now, end) for n, k in _grouped(mine)))
    runs, upcoming, needed, short_at = 0, 0, 0, None
    for instant, minus_amount, _plan, count in merged:
        for _ in range(min(count, max_runs - upcoming)):
            upcoming += 1
            needed -= minus_amount
            if short_at is None:
                if balance is not None and needed <= balance:
                    runs += 1
                else:
                    short_at = instant
        if upcoming >= max_runs:
            break
    plans = _named(sorted({n.plan for n in mine}), sum(n.count for n in mine))
    if balance is None:
        return Runway(wallet, mint, None, None, upcoming, needed, None, plans, problem or "?")
    return Runway(wallet, mint, balance, runs, upcoming, needed, short_at, plans)


def _named(names: list[str], count: int) -> tuple[str, ...]:
    """The first names (of plans, or of groups of plans alike), and how many more."""
    shown = names[:PLANS_NAMED]
    more = count - len(shown)
    return (*shown, f"… and {more:,} more") if more > 0 else tuple(shown)


def runways(
    wallet: str,
    balances: Callable[[str], int | None],
    needs: Iterable[Need],
    now: datetime,
    horizon: timedelta,
    *,
    problem: str | None = None,
) -> list[Runway]:
    """One `Runway` per mint the wallet's plans spend, by mint (`balances(mint)`:
    base units, None when unknown; `problem`: why)."""
    mine = [n for n in needs if n.wallet == wallet]
    out = []
    for mint in sorted({n.mint for n in mine}):
        have = balances(mint)
        out.append(runway(wallet, mint, have, mine, now, horizon,
                          problem=problem if have is None else None))  # fmt: skip
    return out


def ui(base_units: int, decimals: int) -> Decimal:
    """Base units as token units (exact)."""
    return Decimal(base_units).scaleb(-decimals)
