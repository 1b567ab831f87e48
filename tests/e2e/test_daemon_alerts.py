"""Alerts from the real daemon and CLI (subprocesses) to a local HTTP receiver through
Apprise's json:// channel: start, fatal stop, failures, manual fires."""

from __future__ import annotations

from jupcron.emulator import Emulator
from tests.fixtures.daemon import DaemonEnvFactory, at, swap_plan
from tests.fixtures.receivers import HttpReceiver, SmtpReceiver, wait_for


def test_a_fatal_stop_is_said(daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver) -> None:
    env = daemon_env(emulator=Emulator(seed=11, api_key="the-right-key"))
    env.write_config(notify={"urls": [http_receiver.url], "batch": 0, "min_interval": 0})
    env.write_plans(swap_plan("once", {"at": at(4)}))
    env.apply(now=at(-60))
    proc = env.start({"JUPITER_API_KEY": "a-wrong-key"})
    assert proc.wait(60) == 78, env.log_of(proc)
    messages = [b["message"] for b in http_receiver.bodies]
    fatal = [m for m in messages if "[daemon_fatal]" in m]
    assert fatal, messages
    assert "stopped:" in fatal[0]
    assert "refused it" in fatal[0]  # the key is checked at start: no start message first
    assert not any("[daemon_start]" in m for m in messages)


def test_start_and_stop_are_said(daemon_env: DaemonEnvFactory, http_receiver: HttpReceiver) -> None:
    env = daemon_env()
    env.write_config(notify={"urls": [http_receiver.url], "batch": 0, "min_interval": 0})
    env.write_plans(swap_plan("later", {"every": "1d"}))
    env.apply()
    proc = env.start()
    assert wait_for(lambda: http_receiver.bodies, timeout=30), env.log_of(proc)
    assert env.stop(proc) == 0
    messages = "\n".join(b["message"] for b in http_receiver.bodies)
    assert "[daemon_start] daemon started on" in messages
    assert "[leader_change]" in messages
    assert "[daemon_stop] daemon on" in messages
    assert "a-wrong-key" not in str(http_receiver.bodies)
    assert http_receiver.url.split("//")[1] not in env.log_of(proc)  # the URL is a secret


def test_a_manual_fire_is_said_with_its_outcome(
    daemon_env: DaemonEnvFactory, smtp_receiver: SmtpReceiver, db_url: str
) -> None:
    env = daemon_env(db_url=db_url)  # on SQLite and on PostgreSQL
    env.write_config(notify={"urls": [smtp_receiver.url]})
    env.write_plans(swap_plan("now", {"every": "1d"}))
    env.apply()
    done = env.jupcron("fire", "now")
    assert done.returncode == 0, done.stderr
    assert wait_for(lambda: smtp_receiver.mails, timeout=5)
    (subject,) = smtp_receiver.subjects()
    assert "manual fire of plan now by" in subject
    assert "succeeded" in subject
