"""`systemctl reload` (SIGHUP): a changed plan is picked up; a broken plan leaves the
daemon running on the old plans, with `reload_failed` in the journal."""

from __future__ import annotations

import pytest

from tests.support.wait import wait_until
from tests.system.conftest import day_to_day
from tests.system.machine import Machine
from tests.system.service import PLANS, Service


@pytest.fixture(scope="module", autouse=True)
def explicit_reloads_only(machine: Machine, service: Service) -> None:
    """From here on the checks reload by hand: the optional .path unit is stopped."""
    machine.systemctl("stop", "jupcron-plans.path")


def test_reload_picks_up_a_changed_plan(service: Service) -> None:
    service.write_plan("systest-change", 1_000_201, in_seconds=600)
    service.reload_and_wait()
    mark = service.cursor()
    # new amount, due soon: after the reload that applies it, which a loaded machine took
    # 2 s to do (a plan whose moment passed before it was applied never runs)
    service.write_plan("systest-change", 1_000_202, in_seconds=5)
    pid = service.main_pid()
    service.reload_and_wait()
    assert service.main_pid() == pid  # a reload, not a restart
    diff = service.wait_event(mark, "plans_applied")["diff"]
    assert diff == ["~ systest-change (version 2)"], diff
    run = service.wait_final("systest-change", mark)
    assert run["status"] == "succeeded", run
    assert len(service.emulator.landed(1_000_202)) == 1
    assert service.emulator.issued(1_000_201) == []  # the old version never ran


def test_a_broken_plan_keeps_the_daemon_and_the_old_plans(
    machine: Machine, service: Service
) -> None:
    service.write_plan("systest-kept", 1_000_301, in_seconds=6)
    service.reload_and_wait()
    pid = service.main_pid()
    mark = service.cursor()
    broken = f"{PLANS}/systest-broken.yaml"
    service.write_file(
        broken, "name: systest-broken\nkind: swap\nschedule: {every: 1h}\nrequets: {}\n"
    )
    try:
        service.reload()
        failed = service.wait_event(mark, "reload_failed")
        assert failed["what"] == "plans"
        assert "systest-broken.yaml" in failed["error"]
        # the failure is logged, then READY=1 ends the reload: systemd says "reloading"
        # for that moment, then "active" (never "failed")
        states: list[str] = []

        def active() -> bool:
            states.append(machine.systemctl("is-active", "jupcron.service").stdout.strip())
            return states[-1] == "active"

        assert wait_until(active, timeout=10), states
        assert set(states) <= {"reloading", "active"}, states
        assert service.main_pid() == pid
        assert not [e for e in service.events(mark) if e["event"] in ("reloaded", "plans_applied")]
        # the plans loaded before the broken file still fire
        run = service.wait_final("systest-kept", mark)
        assert run["status"] == "succeeded", run
        assert len(service.emulator.landed(1_000_301)) == 1
    finally:
        service.remove_file(broken)
    service.reload_and_wait()


def test_an_edited_config_is_followed_without_a_reload(service: Service) -> None:
    """Issue 14 item 1: `safety.dry_run` in /etc/jupcron/jupcron.yaml (read-only to the
    service), edited both ways; the daemon follows the file with no reload or restart."""
    config = "/etc/jupcron/jupcron.yaml"
    plain = service.machine.path(config).read_text()
    pid = service.main_pid()
    mark = service.cursor()
    service.write_file(config, plain + "safety:\n  dry_run: true\n")
    try:
        dry = service.wait_event(mark, "config_reloaded")
        assert dry["trigger"] == "file"
        assert dry["changed"] == ["safety.dry_run: false -> true"], dry
        service.write_plan("systest-dry", 1_000_251, in_seconds=5)
        service.reload_and_wait()  # the plan (a config change needs none)
        run = service.wait_final("systest-dry", mark)
        assert run["status"] == "dry_run", run
        assert service.emulator.issued(1_000_251) != []  # ordered and checked
        assert service.emulator.landed(1_000_251) == []  # never signed
    finally:
        back = service.cursor()
        service.write_file(config, plain)
    live = service.wait_event(back, "config_reloaded")
    assert live["changed"] == ["safety.dry_run: true -> false"], live
    assert live["previous"] == dry["config"]
    service.write_plan("systest-live", 1_000_252, in_seconds=5)
    service.reload_and_wait()
    assert service.wait_final("systest-live", back)["status"] == "succeeded"
    assert len(service.emulator.landed(1_000_252)) == 1
    assert service.main_pid() == pid  # followed, not restarted
    # the check systemd/README.md's "Day to day" shows
    shown = service.machine.sh(
        day_to_day("journalctl -u jupcron -o cat | grep -E '\"(config")
    ).stdout
    assert shown.count('"config_reloaded"') >= 2, shown
