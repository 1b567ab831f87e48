"""A withheld watchdog ping must not turn the daemon's loop into a busy spin.

The loop (daemon/service/daemon.py) waits ``min(TICK, seconds_until_due())`` between
turns, and each turn reads the store (`Status.count_plans`), keeps the leader locks
and beats. While the daemon is unhealthy (the store down, a full disk, a scheduler
that stopped answering) `tick` withholds the ping, so the ping stays due: a wait of
0 s, and the loop turned as fast as the CPU allowed, hammering a database that is
down (and logging ``watchdog_health_check_failed`` at every turn when the check
raises) until systemd's watchdog killed it a minute later.
"""

from __future__ import annotations

from structlog.testing import capture_logs

from jupcron.service.watchdog import Watchdog


class Sink:
    def __init__(self) -> None:
        self.pings = 0

    def watchdog(self) -> bool:
        self.pings += 1
        return True


def test_a_withheld_ping_lets_the_loop_wait_its_usual_turn() -> None:
    healthy = [True]
    wd = Watchdog(Sink(), interval=30.0, health=lambda: healthy[0])
    assert wd.tick(now=0.0)
    healthy[0] = False
    assert wd.tick(now=30.0) is False  # due, withheld
    # the loop would turn again at once, forever, while it stays unhealthy
    assert wd.seconds_until_due(now=30.0, default=1.0) == 1.0
    assert wd.seconds_until_due(now=45.0, default=1.0) == 1.0
    healthy[0] = True
    assert wd.tick(now=31.0) is True  # pinged at the first turn it is healthy again
    assert wd.seconds_until_due(now=31.0, default=60.0) == 30.0


def test_unhealthy_from_the_start_waits_too() -> None:
    def broken() -> bool:
        raise RuntimeError("store gone")

    wd = Watchdog(Sink(), interval=30.0, health=broken)
    with capture_logs() as logs:
        assert wd.tick(now=0.0) is False
        assert wd.seconds_until_due(now=0.0, default=1.0) == 1.0
    assert [e["event"] for e in logs].count("watchdog_health_check_failed") == 1
