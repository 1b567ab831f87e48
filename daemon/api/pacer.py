"""Keeps our request rate under the limit, shared by every thread of a client.

Slots are handed out at most ``rate`` per second (keyless: 0.5), 1% under it. The API's
``x-ratelimit-remaining``/``x-ratelimit-reset`` headers and 429 answers block every
caller until the reset (or ``Retry-After``); the reset is read on the API's clock (the
answer's ``Date``), not ours, which may be minutes off. Time comes from the
``clock``/``wall`` seams and waits go through ``sleep``, so tests never sleep.

Fires first: `acquire` is for runs. Background work (the order follower)
asks with `acquire_spare`, which takes a slot only when it is free right now,
no run is waiting for one, and the background's own share (``spare_share`` of
the rate) has room; otherwise it waits, and gives up at its deadline. A run
that arrives just after a spare slot was taken waits at most one interval.

Shared budget (PostgreSQL, several daemons on one key): with a ``budget`` every
request also needs a token of the key's budget in the database
(`jupcron.store.ratebudget`). The pacer draws a batch (one token per request
waiting, as many as the bucket holds) in one statement and spends it locally;
tokens kept longer than ``TOKEN_TTL`` are dropped (a token is a right to send
now, not later). A busy process draws ahead: what it spent in the last
``DRAW_AHEAD`` seconds at its rate of the last ``SPEND_WINDOW`` (at most ``DRAW_AHEAD``
of the key's rate), so that a burst at hundreds of requests a second costs a
database round trip every few dozen requests, not one each; a process sending a
few a second still draws one token at a time. With none left, it sleeps until
the next one is due (at least `MIN_DRAW_WAIT`, at most `MAX_BLOCK`): no busy
loop. The seconds waited are part of what `acquire` returns, recorded with each
attempt. A 429 blocks the whole key, through the budget, for every daemon.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Protocol

MAX_BLOCK = 120.0  # never trust a header into waiting longer than this
# seconds our clock may differ from an answer's Date second and still be taken as right:
# the answer is read a moment after it was made; counting every reset from the Date's
# second start held the key off up to a second too long (9.1 of 10 requests/s at the limit)
CLOCK_SLACK = 1.0
# pace 1% under the limit: requests spaced exactly 1/rate apart arrive with jitter,
# and the limit's sliding window then sees one too many now and then (a 429)
HEADROOM = 0.99
SPARE_SHARE = 0.25  # at most this part of the rate goes to background work
TOKEN_TTL = 1.0  # seconds a drawn token may wait to be spent
MIN_DRAW_WAIT = 0.05  # never draw again sooner than this after an empty draw
DRAW_AHEAD = 0.1  # seconds of this process's recent spending drawn in one go
SPEND_WINDOW = 0.25  # seconds over which that spending is measured (a burst's first)


class Grant(Protocol):
    @property
    def tokens(self) -> int: ...
    @property
    def wait(self) -> float: ...


class Budget(Protocol):
    """A rate budget shared with other processes (`jupcron.store.ratebudget`)."""

    def draw(self, want: int) -> Grant:
        """Up to ``want`` tokens now; with none, the seconds until one is due."""
        ...

    def block(self, seconds: float) -> None:
        """Nobody sharing the budget sends for ``seconds``."""
        ...


def server_now(headers: Mapping[str, str], wall: float) -> float:
    """The API's clock as an answer's ``Date`` header shows it (whole seconds): our
    ``wall`` where it is within `CLOCK_SLACK` of that second (the header's second is
    when the answer was made, our reading a little later: an honest clock), else the
    header's second (its start: a wait counted from it errs long, never short). A
    reset time (unix seconds, the API's clock) read against a clock minutes behind
    held every daemon on the key off for `MAX_BLOCK` through the shared budget;
    minutes ahead, not at all (the next request met a 429). No readable ``Date``: our
    ``wall``."""
    value = headers.get("date")
    at = None if value is None else _date_seconds(value)
    if at is None:
        return wall
    return wall if at - CLOCK_SLACK <= wall <= at + 1.0 + CLOCK_SLACK else at


@lru_cache(maxsize=16)
def _date_seconds(value: str) -> float | None:
    """An HTTP ``Date`` as unix seconds (None: unreadable). Every answer is read (the
    standard library's parser is pure Python, ~40 us) and its header changes once a
    second: the answers of a busy second share one parse."""
    try:
        said = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if said.tzinfo is None:  # "-0000": UTC, as HTTP dates always are
        said = said.replace(tzinfo=UTC)
    return said.timestamp()


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.strip())
    except ValueError:
        return None


class Pacer:
    def __init__(
        self,
        rate: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        spare_share: float = SPARE_SHARE,
        budget: Budget | None = None,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        if not 0 < spare_share <= 1:
            raise ValueError("spare_share must be in (0, 1]")
        self.rate = rate
        self.interval = 1.0 / (rate * HEADROOM)
        self._sleep, self._clock, self._wall = sleep, clock, wall
        self._next = float("-inf")
        self._blocked_until = float("-inf")
        self._lock = threading.Lock()
        self.spare_interval = self.interval / spare_share
        self._next_spare = float("-inf")
        self._waiting = 0  # runs sleeping until their slot
        self.budget = budget
        self._tokens = 0  # drawn from the shared budget, not yet spent
        self._tokens_at = float("-inf")
        self._draw_lock = threading.Lock()  # one draw at a time per process
        self._spent = 0  # shared tokens spent since `_spent_since`
        self._spent_since = clock()
        self._spend_rate = 0.0  # shared tokens a second spent over the last window

    def acquire(self) -> float:
        """Wait for our slot; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next, self._blocked_until)
            self._next = start + self.interval
            wait = start - now
            if wait > 0:
                self._waiting += 1
        if wait > 0:
            try:
                self._sleep(wait)
            finally:
                with self._lock:
                    self._waiting -= 1
        waited = max(wait, 0.0)
        if self.budget is not None:
            waited += self._shared_token(self.budget)
        return waited

    # -- the shared budget (several daemons on one key) ---------------------------
    def _take_local(self) -> bool:
        """Spend a drawn token, if one is left and still fresh (under ``_lock``)."""
        if self._tokens > 0 and self._clock() - self._tokens_at <= TOKEN_TTL:
            self._tokens -= 1
            self._spent += 1
            return True
        self._tokens = 0
        return False

    def _ahead(self) -> int:
        """Tokens to draw beyond the waiters' (under ``_lock``): this process's spending
        over ``DRAW_AHEAD`` at its rate of the last ``SPEND_WINDOW``, at most
        ``DRAW_AHEAD`` of the key's rate. Those it does not spend within
        ``TOKEN_TTL`` are dropped, so what it may waste is bounded by its own recent
        spending, and a process sending a few a second draws none ahead."""
        now = self._clock()
        elapsed = now - self._spent_since
        if elapsed >= SPEND_WINDOW:
            self._spend_rate = self._spent / elapsed
            self._spent, self._spent_since = 0, now
        return int(min(self._spend_rate, self.rate) * DRAW_AHEAD)

    def _draw(self, budget: Budget, want: int) -> float:
        """One draw (under ``_draw_lock``): 0.0 when a token is ours (kept in stock),
        else the seconds to wait before asking again."""
        grant = budget.draw(want)
        if grant.tokens > 0:
            with self._lock:
                self._tokens += grant.tokens
                self._tokens_at = self._clock()
            return 0.0
        return min(max(grant.wait, MIN_DRAW_WAIT), MAX_BLOCK)

    def _shared_token(self, budget: Budget) -> float:
        """Wait for a token of the shared budget; the seconds waited."""
        waited = 0.0
        with self._lock:
            if self._take_local():
                return waited
            self._waiting += 1
        try:
            while True:
                with self._draw_lock:
                    with self._lock:
                        if self._take_local():
                            return waited
                        want = max(self._waiting, self._ahead())
                    pause = self._draw(budget, want)
                    if pause == 0.0:
                        with self._lock:
                            if self._take_local():
                                return waited
                        continue  # drawn, but taken by a waiter first (or aged): again
                self._sleep(pause)
                waited += pause
        finally:
            with self._lock:
                self._waiting -= 1

    def _spare_token(self) -> bool:
        """A token for background work: a drawn one, or one draw; never a wait."""
        budget = self.budget
        if budget is None:
            return True
        with self._lock:
            if self._take_local():
                return True
        if not self._draw_lock.acquire(blocking=False):
            return False  # a run is drawing: it comes first
        try:
            if self._draw(budget, 1) > 0:
                return False
        finally:
            self._draw_lock.release()
        with self._lock:
            return self._take_local()

    def _give_back(self) -> None:
        with self._lock:
            self._tokens += 1

    def _spare_free(self) -> bool:
        now = self._clock()
        free_at = max(self._next, self._blocked_until, self._next_spare)
        return not self._waiting and now >= free_at

    def try_spare(self) -> bool:
        """Take a slot for background work if one is free now and no run waits."""
        with self._lock:
            if not self._spare_free():
                return False
        if not self._spare_token():
            return False
        with self._lock:
            if self._spare_free():
                now = self._clock()
                self._next = now + self.interval
                self._next_spare = now + self.spare_interval
                return True
        self._give_back()  # a run came meanwhile: the token is its
        return False

    def acquire_spare(self, timeout: float) -> float | None:
        """Wait (up to `timeout` seconds) for a spare slot; the seconds waited, or
        ``None`` when there was none in time."""
        waited = 0.0
        while not self.try_spare():
            if waited >= timeout:
                return None
            with self._lock:
                free_at = max(self._next, self._blocked_until, self._next_spare)
                step = min(max(free_at - self._clock(), 0.0) + self.interval / 4, timeout)
            self._sleep(step)
            waited += step
        return waited

    def block_for(self, seconds: float) -> None:
        """Nobody sends for `seconds` from now (429, exhausted window)."""
        seconds = min(max(seconds, 0.0), MAX_BLOCK)
        with self._lock:
            self._blocked_until = max(self._blocked_until, self._clock() + seconds)
        if self.budget is not None and seconds > 0:
            self.budget.block(seconds)  # the whole key holds off, every daemon on it

    def reset_in(self, headers: Mapping[str, str]) -> float | None:
        """Seconds until ``x-ratelimit-reset`` (unix seconds), if sent: counted from the
        API's own clock (`server_now`), not ours, which may be minutes off."""
        reset = _number(headers.get("x-ratelimit-reset"))
        return None if reset is None else max(reset - server_now(headers, self._wall()), 0.0)

    def observe(self, headers: Mapping[str, str]) -> None:
        """Adapt to the rate-limit headers of an answer."""
        remaining = _number(headers.get("x-ratelimit-remaining"))
        if remaining is not None and remaining <= 0:
            wait = self.reset_in(headers)
            if wait is not None:
                self.block_for(wait)


@dataclass(frozen=True)
class Buckets:
    """The pacer of each rate bucket: `main`, and operations with a bucket of their own."""

    main: Pacer
    own: Mapping[str, Pacer] = field(default_factory=dict)

    def for_operation(self, operation: str) -> Pacer:
        return self.own.get(operation, self.main)
