"""Issue 28 item 7 on the service install. A keyless install: the README's secrets step
run with no `$JUPITER_API_KEY` writes no key file, and the shipped units (no drop-in)
start a daemon that runs keyless, stays up, and whose runs and `jupcronctl fire` land
against an API that takes no key. Then a fatal stop: that keyless daemon, restarted
against the emulator that demands a key, is refused at start; it says so once to
`notify.urls` (an HTTP receiver on host loopback, reached from inside the sandbox),
exits 78, and the unit stays failed instead of restarting into the same alert.

After the journal check (test_7_journal): a fatal start writes its one-line `error:`
to stderr too, which is not a JSON log line."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.fixtures.receivers import HttpReceiver, wait_for
from tests.system.conftest import (
    OPERATOR_DIR,
    SUDO,
    day_to_day,
    readme_blocks,
    running_emulator,
)
from tests.system.machine import Machine, wait_until
from tests.system.service import UNIT, Emulator, Service

CONFIG = "/etc/jupcron/jupcron.yaml"


@pytest.fixture(scope="module")
def keyless_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with running_emulator(tmp_path_factory.mktemp("keyless"), None, seed=23) as running:
        yield running


def install_step(number: int) -> str:
    """Step `number` of the README's Install block, as written."""
    block = readme_blocks("Install")[0]
    start = block.index(f"\n# {number}. ")
    end = block.index(f"\n# {number + 1}. ", start)
    return block[start:end]


def point_api_at(service: Service, url: str, extra: str = "") -> None:
    text = service.machine.path(CONFIG).read_text()
    text = re.sub(r"(?m)^  base_url: .*$", f"  base_url: {url}", text)
    service.write_file(CONFIG, text + extra)


def test_a_keyless_install_starts_stays_up_and_its_runs_land(
    machine: Machine, service: Service, keyless_api: Emulator
) -> None:
    # back to the shipped units (no drop-in of the checks before) and no secret files
    machine.run("rm", "-rf", "/etc/systemd/system/jupcron.service.d",
                "/etc/systemd/system/jupcron-fire@.service.d")  # fmt: skip
    machine.run("sh", "-c", "rm -f /etc/jupcron/api-key* /etc/jupcron/keypair*")
    machine.systemctl("daemon-reload")
    # the README's secrets step, as written, for an operator with no key
    done = machine.sh(
        SUDO + f"cd {OPERATOR_DIR}\n" + install_step(3), env={"JUPITER_API_KEY": ""}, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert machine.path("/etc/jupcron/keypair.json").exists()
    assert not machine.path("/etc/jupcron/api-key").exists()  # no empty key file
    point_api_at(service, keyless_api.url)
    mark = service.cursor()
    machine.systemctl("restart", UNIT)  # a manual restart: NRestarts starts again from 0
    pid = service.wait_running()
    restarts = int(service.state()["NRestarts"])
    api = service.wait_event(mark, "dependency_ok", lambda e: e["dependency"] == "api key")
    assert api["detail"].startswith("keyless, accepted by"), api
    assert service.in_service("od -An -c /run/credentials/jupcron.service/api-key").split() == [
        "\\n"
    ]
    service.write_plan("systest-keyless", 1_000_901, in_seconds=2)
    service.reload_and_wait()
    run = service.wait_final("systest-keyless", mark)
    assert run["status"] == "succeeded", run
    assert len(keyless_api.landed(1_000_901)) == 1
    # a daily command keyless too: the transient unit gets the same empty credential
    service.write_plan("systest-keyless-manual", 1_000_902, in_seconds=None)
    service.reload_and_wait()
    fire = day_to_day("sudo jupcronctl fire").replace("weekly-sol-dca", "systest-keyless-manual")
    done = machine.sh(SUDO + fire, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(keyless_api.landed(1_000_902)) == 1
    # it stayed up: the same process, never restarted
    state = service.state()
    assert (state["ActiveState"], state["SubState"]) == ("active", "running"), state
    assert service.main_pid() == pid
    assert int(state["NRestarts"]) == restarts
    assert not [e for e in service.events(mark) if e["event"] in ("daemon_fatal", "reload_failed")]


def test_a_fatal_stop_is_said_once_and_not_restarted(
    machine: Machine, service: Service, emulator: Emulator, http_receiver: HttpReceiver
) -> None:
    # still keyless, now against the API that demands the key: refused at start
    point_api_at(
        service, emulator.url,
        f"notify:\n  urls: [\"{http_receiver.url}\"]\n  batch: 0\n  min_interval: 0\n",
    )  # fmt: skip
    restarts = int(service.state()["NRestarts"])
    mark = service.cursor()
    machine.systemctl("restart", UNIT, check=False)  # the start job fails: not an error here

    def failed() -> dict[str, str] | None:
        state = machine.show(UNIT, "ActiveState", "SubState", "Result", "ExecMainStatus",
                             "NRestarts")  # fmt: skip
        return state if state["ActiveState"] == "failed" else None

    # failed, not "activating (auto-restart)": RestartPreventExitStatus=78
    state = wait_until("jupcron.service to fail", failed, 60)
    assert state["Result"] == "exit-code", state
    assert state["ExecMainStatus"] == "78", state
    assert int(state["NRestarts"]) == restarts
    fatal = service.wait_event(mark, "daemon_fatal")
    assert "refused it" in fatal["error"], fatal
    # one message, sent before the process ended, from inside the sandbox
    assert wait_for(lambda: http_receiver.bodies, timeout=5)
    assert len(http_receiver.bodies) == 1, http_receiver.bodies
    body = http_receiver.bodies[0]
    assert body["type"] == "failure", body
    assert "[daemon_fatal]" in body["message"], body
    assert "refused it" in body["message"], body
    assert "portal.jup.ag" in body["message"], body  # the fix
    assert http_receiver.url.split("//")[1] not in str(machine.journal("-u", UNIT, after=mark))
