"""A Trigger V2 order of ours that no history list shows costs a bounded number of reads.

A `trigger-v2-cancel` plan naming an order that is not the wallet's (a typo) fails
("not in this wallet's dca history"), yet a failed cancel keeps its order followed
(it may have left a real order mid-cancel). The follower read both history lists of
the wallet to their end at every poll, for ever, looking for it, and never said
why. As v1 does (`jupcron.follower.unexplained`): once an order has been in neither
list for `LOST_AFTER` past its run's end, it is looked for only every `SWEEP_EVERY`,
and told once (``order_unaccounted``, a warning and a notice) when a sweep read both
lists through without it. Another order of ours is read as before at every poll.
On SQLite and PostgreSQL, against the emulator over loopback."""

from __future__ import annotations

from solders.keypair import Keypair

from jupcron.api.client import SPARE_WAIT
from jupcron.domain import RunStatus
from jupcron.follower import unexplained
from jupcron.products.trigger_v2.follower import TriggerV2Follower
from jupcron.runner.core import trigger_v2_session
from tests.fixtures.follow import FollowRig, FollowRigFactory
from tests.fixtures.runner import outcome_of
from tests.fixtures.trigger_v2 import DCA_REQUEST, requests

MINUTES = 60
POLL = 5 * MINUTES


def _reads(f: FollowRig) -> int:
    return requests(f.rig, "trigger_v2_history_dca")


def _told(f: FollowRig, order_id: str) -> list[dict[str, object]]:
    return f.sql("SELECT step, run_id, detail FROM follow_events WHERE order_account = :o",
                 o=order_id)  # fmt: skip


def test_a_cancel_of_an_order_not_the_wallets_is_swept_hourly_and_told_once(
    make_follow_rig: FollowRigFactory, db_url: str
) -> None:
    f = make_follow_rig(db_url, loopback=True)
    session = trigger_v2_session(f.client(), f.rig.wallet, f.clock)
    follower = TriggerV2Follower(f.engine, session, f.clock, spare=SPARE_WAIT)
    f.fire(f.rig.plan("trigger-v2-dca", DCA_REQUEST, name="v2-dca"))  # ours, open
    typo = str(Keypair().pubkey())
    cancel = f.rig.plan("trigger-v2-cancel", {"order": typo, "family": "dca"}, name="v2-typo")
    failed = outcome_of(f.rig.runner().fire(cancel, f.clock.now.replace(microsecond=0)))
    assert failed.status is RunStatus.FAILED, failed

    def poll() -> int:
        """One poll, POLL after the last; how many history pages it read."""
        f.clock.advance(POLL)
        before = _reads(f)
        follower.poll()
        return _reads(f) - before

    # within LOST_AFTER of its run: the index may lag, so looked for at every poll
    assert poll() == 2  # active (our DCA is there), then past
    f.clock.advance(unexplained.LOST_AFTER.total_seconds())
    swept = poll()  # lost: swept, both lists read through
    # until the next sweep: only what our open DCA needs, the first active page
    within = int(unexplained.SWEEP_EVERY.total_seconds() // POLL) - 1
    assert (swept, [poll() for _ in range(within)]) == (2, [1] * within)
    told = [(t["step"], t["run_id"]) for t in _told(f, typo)]
    assert told == [("order_unaccounted", failed.run_id)]
    assert poll() == 2  # an hour on: swept again
    assert len(_told(f, typo)) == 1  # said once
    assert f.sql("SELECT state FROM followed_orders") == [{"state": "open"}]  # our DCA's
