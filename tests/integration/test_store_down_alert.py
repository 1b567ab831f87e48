"""A database that does not answer for long is said (`store_down`), not only logged:
the real daemon (a subprocess) waiting at its start for a PostgreSQL that is not
there tells `notify.urls` (a loopback receiver) once, without the password."""

from __future__ import annotations

from tests.fixtures.daemon import DaemonEnvFactory
from tests.fixtures.receivers import HttpReceiver, free_port, wait_for

AFTER = 3  # seconds (notify.store_down_after; 30 by default)


def test_a_database_down_for_long_is_said_once(
    daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver
) -> None:
    env = daemon_env()
    env.write_config(
        notify={
            "urls": [http_receiver.url],
            "batch": 0,
            "min_interval": 0,
            "store_down_after": AFTER,
        },
        # nothing listens there: a database down for as long as the test runs
        database={"url": f"postgresql+psycopg://jupcron:s3cret-pw@127.0.0.1:{free_port()}/x"},
    )
    proc = env.start()
    assert wait_for(lambda: http_receiver.bodies, timeout=AFTER + 20), env.log_of(proc)
    assert proc.poll() is None  # still waiting for it
    # a few more tries after it was said: still said once
    env.wait_until(lambda: env.log_of(proc).count("store_unavailable_at_start") >= 4)
    assert env.stop(proc) == 0
    messages = [str(b.get("message")) for b in http_receiver.bodies]
    down = [m for m in messages if "[store_down]" in m]
    assert len(down) == 1, messages  # once, not per try
    assert "cannot reach the database" in down[0]
    assert "s3cret-pw" not in str(http_receiver.bodies)
