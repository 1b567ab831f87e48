"""A follower that runs for months through an API outage: every poll writes a
``follow_events`` row for each page and token call that failed (the operator's
record of what the follower could not read), and nothing ever removed one, so the
table grew by a few rows every poll for as long as the outage lasted (and
`follow.told`, which reads the table at each poll that finds an overdue order,
with it). The failures are kept for a stated time (`follow.FAILURES_KEPT_FOR`): the
rows of a 40-day outage are no more than those of a 20-day one. What the follower
saw of the orders (their closes, the held, overdue and unaccounted notices) is kept
whatever its age."""

from __future__ import annotations

import httpx

from jupcron.api.client import JupiterClient
from jupcron.follower import FollowerLoop
from tests.fixtures.follow import DAY, FollowRig, FollowRigFactory, recurring_request

EVERY = 4 * 3600  # seconds between polls


class Down(httpx.BaseTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, content=b"down for maintenance")


def _failures(f: FollowRig) -> int:
    rows = f.sql("SELECT COUNT(*) AS n FROM follow_events WHERE step IN"
                 " ('follow_page_failed', 'token_facts_failed')")  # fmt: skip
    return int(rows[0]["n"])


def test_an_outage_of_months_keeps_a_bounded_record_of_its_failures(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, days_ago=60)
    f.fire(f.rig.plan("recurring", recurring_request(2), name="dca"))
    api = JupiterClient(f.rig.url, api_key=None, transport=Down(), rate_limit=1000,
                        sleep=lambda s: None, max_attempts=1)  # fmt: skip
    loop = FollowerLoop(f.engine, api, f.rig.wallet.address, interval=EVERY, clock=f.clock)
    counts = []
    try:
        for _ in range(2):
            for _ in range(20 * DAY // EVERY):  # 20 days of polls, the API down
                loop.poll_once()
                f.clock.advance(EVERY)
            counts.append(_failures(f))
    finally:
        api.close()
    assert counts[0] > 0  # the outage is on record
    assert counts[1] <= counts[0], f"failure rows after 20 and 40 days of outage: {counts}"
