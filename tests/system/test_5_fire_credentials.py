"""Daily commands on the service install (issue 14 items 3–5, issue 28 item 7): `jupcronctl`
status, pause, resume, fire and audit, and jupcron-fire@PLAN.service, as systemd/README.md's
"Day to day" shows, beside the running daemon. Then the encrypted credentials of
docs/operations.md (systemd-creds), for the service, manual fires and jupcronctl."""

from __future__ import annotations

import re
from pathlib import Path

from tests.system.conftest import API_KEY, OPERATOR_DIR, ROOT, SUDO, day_to_day
from tests.system.machine import Machine
from tests.system.service import Service


def test_a_manual_fire_runs_beside_the_daemon_as_documented(
    machine: Machine, service: Service
) -> None:
    service.write_plan("systest-manual", 1_000_601, in_seconds=None)  # never due by itself
    service.reload_and_wait()
    fire = day_to_day("sudo systemctl start jupcron-fire@").replace(
        "weekly-sol-dca", "systest-manual"
    )
    done = machine.sh(SUDO + fire, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = machine.sh(SUDO + day_to_day("journalctl -u jupcron-fire@").replace(
        "weekly-sol-dca", "systest-manual")).stdout  # fmt: skip
    assert re.search(r"run \d+\s+systest-manual\s+succeeded", shown), shown
    assert len(service.emulator.landed(1_000_601)) == 1
    # the documented read-only command sees it, as the service's user
    audit = machine.sh(SUDO + ctl("audit").replace("weekly-sol-dca", "systest-manual")).stdout
    assert "manual" in audit, audit
    assert "succeeded" in audit, audit
    # a plan that does not exist: exit 1, the reason in its journal, nothing ordered
    done = machine.sh(SUDO + fire.replace("systest-manual", "no-such-plan"), check=False)
    assert done.returncode != 0
    journal = machine.run("journalctl", "-u", "jupcron-fire@no-such-plan.service", "-o", "cat")
    assert "no plan named 'no-such-plan'" in journal.stdout
    # the daemon shares the files (same dynamic user) and goes on writing them
    uid, _ = service.runner_uid()
    for name in ("jupcron.db", "jupcron.db-wal", "jupcron.db-shm"):
        assert machine.path(f"/var/lib/private/jupcron/{name}").stat().st_uid == uid, name
    mark = service.cursor()
    service.write_plan("systest-after-fire", 1_000_602, in_seconds=2)
    service.reload_and_wait()
    assert service.wait_final("systest-after-fire", mark)["status"] == "succeeded"


def ctl(command: str) -> str:
    """The README's "Day to day" `sudo jupcronctl COMMAND …` line."""
    return day_to_day(f"sudo jupcronctl {command}")


def test_jupcronctl_is_installed_and_refuses_bad_usage_in_one_line(machine: Machine) -> None:
    # the install linked it onto sudo's PATH
    assert machine.path("/usr/local/sbin/jupcronctl").readlink() == Path(
        "/opt/jupcron/venv/bin/jupcronctl"
    )
    for args, said in (
        ("", "no command given"),
        ("run", "the daemon itself runs as the service"),
        ("--config /tmp/x.yaml status", "takes the config from jupcron.service's ExecStart"),
        ("--unit nope status", "nope.service is not installed"),
    ):
        done = machine.sh(SUDO + f"sudo jupcronctl {args}", check=False)
        assert done.returncode in (1, 2), (args, done.returncode)
        assert done.stderr.startswith("jupcronctl: "), done.stderr
        assert said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr + done.stdout
    # a bad command line of jupcron itself: its own message and exit status, through
    done = machine.sh(SUDO + "sudo jupcronctl pause no-such-plan --reason x", check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no plan named 'no-such-plan'" in done.stderr
    assert "nothing changed" in done.stderr


PROBE = (
    """/usr/bin/python3 -c "import os; print(open('/proc/self/status').read()); """
    """print('creds', *sorted(os.listdir(os.environ['CREDENTIALS_DIRECTORY']))); """
    """print('writable', *[p for p in ('/etc/jupcron', '/opt/jupcron', '/var/lib/jupcron', """
    """'/usr/local/sbin') if os.access(p, os.W_OK)])" run"""
)


def test_jupcronctl_runs_its_command_in_the_daemons_sandbox(
    machine: Machine, service: Service
) -> None:
    """A unit that is jupcron.service as installed, but whose ExecStart prints what its
    process is: `jupcronctl --unit` runs that under the settings it carries over."""
    unit = machine.path("/etc/systemd/system/jupcron.service").read_text()
    probe = re.sub(r"(?m)^ExecStart=.*$", lambda _: f"ExecStart={PROBE}", unit)
    service.write_file("/etc/systemd/system/jupcron-probe.service", probe)
    machine.systemctl("daemon-reload")
    try:
        done = machine.sh(SUDO + "sudo jupcronctl --unit jupcron-probe status", check=False)
    finally:
        service.remove_file("/etc/systemd/system/jupcron-probe.service")
        machine.systemctl("daemon-reload")
    assert done.returncode == 0, done.stdout + done.stderr
    status = dict(
        (key, value.strip())
        for key, _, value in (line.partition(":") for line in done.stdout.splitlines())
    )
    daemon = service.process_status(service.main_pid())
    assert status["Uid"] == daemon["Uid"]  # the daemon's dynamic user, beside it
    for key in ("NoNewPrivs", "Seccomp", "CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"):
        assert status[key] == daemon[key], (key, status[key], daemon[key])
    assert int(status["CapBnd"], 16) == 0
    lines = done.stdout.splitlines()
    assert "creds api-key keypair" in lines, done.stdout
    assert "writable /var/lib/jupcron" in lines, done.stdout  # and nothing else


def test_pause_status_resume_and_fire_with_jupcronctl_as_documented(
    machine: Machine, service: Service
) -> None:
    """Issue 14, items 3 and 4, issue 28 item 7, on the service install: the "Day to day"
    `jupcronctl` lines, as the service's user, beside the running daemon (no restart)."""
    status, pause, resume = ctl("status"), ctl("pause --all"), ctl("resume --all")
    shown = machine.sh(SUDO + status).stdout
    assert re.search(r":\d+  leader since ", shown), shown
    done = machine.sh(SUDO + pause, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "paused all plans: incident" in done.stdout
    pid = service.main_pid()
    mark = service.cursor()
    service.write_plan("systest-paused", 1_000_611, in_seconds=3)
    service.reload_and_wait()
    final = service.wait_final("systest-paused", mark)
    assert final["status"] == "skipped", final
    assert final["error"].startswith("all plans paused: incident (by "), final
    assert "(by operator;" in final["error"], final  # the user behind sudo, not the service's
    assert service.emulator.issued(1_000_611) == []  # nothing ordered
    shown = machine.sh(SUDO + status).stdout
    assert "all plans since " in shown, shown
    done = machine.sh(SUDO + resume, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resumed all plans" in done.stdout
    mark = service.cursor()
    service.write_plan("systest-resumed", 1_000_612, in_seconds=3)
    service.reload_and_wait()
    assert service.wait_final("systest-resumed", mark)["status"] == "succeeded"
    # fire: the command's own exit status, 0 when the run succeeded
    done = machine.sh(SUDO + ctl("fire").replace("weekly-sol-dca", "systest-paused"), check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"run \d+\s+systest-paused\s+succeeded", done.stdout), done.stdout
    assert len(service.emulator.landed(1_000_611)) == 1
    done = machine.sh(SUDO + ctl("fire").replace("weekly-sol-dca", "no-such-plan"), check=False)
    assert done.returncode == 1
    assert "no plan named 'no-such-plan'" in done.stderr
    done = machine.sh(SUDO + ctl("report"), check=False)  # read-only, as the service's user
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip(), done.stderr
    assert service.main_pid() == pid


def credentials_block() -> str:
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text[text.index("## Credentials with `systemd-creds`") :]
    section = section[: section.index("\n## ")]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)[0]


def test_encrypted_credentials_as_operations_md_says(machine: Machine, service: Service) -> None:
    block = credentials_block()
    # `systemctl edit` with an "editor" that writes the lines the guide shows
    dropin = "\n".join(
        line.removeprefix("#   ") for line in block.splitlines() if line.startswith("#   ")
    )
    assert dropin.startswith("[Service]\nLoadCredential=\n"), dropin
    service.write_file(f"{OPERATOR_DIR}/credentials.conf", dropin + "\n")
    mark = service.cursor()
    pid = service.main_pid()
    service.write_file(f"{OPERATOR_DIR}/credentials.sh", SUDO + f"cd {OPERATOR_DIR}\n" + block)
    # `systemctl edit` wants a terminal: `script` gives the block one
    done = machine.run(
        "script", "--quiet", "--return", "--command",
        f"bash -euo pipefail {OPERATOR_DIR}/credentials.sh", "/dev/null",
        env={"SYSTEMD_EDITOR": f"cp {OPERATOR_DIR}/credentials.conf"}, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("ok"), done.stdout
    for unit in ("jupcron.service", "jupcron-fire@.service"):
        override = machine.path(f"/etc/systemd/system/{unit}.d/override.conf").read_text()
        assert "LoadCredentialEncrypted=keypair:/etc/jupcron/keypair.cred" in override, unit
    new_pid = service.wait_running(not_pid=pid)
    # the plain files are gone: what the daemon uses can only come from the .cred files
    assert not machine.path("/etc/jupcron/keypair.json").exists()
    assert not machine.path("/etc/jupcron/api-key").exists()
    assert service.in_service("cat /run/credentials/jupcron.service/api-key") == API_KEY
    service.write_plan("systest-encrypted", 1_000_701, in_seconds=2)
    service.reload_and_wait()
    run = service.wait_final("systest-encrypted", mark)
    assert run["status"] == "succeeded", run
    assert run["_pid"] == str(new_pid)
    # manual fires got the same drop-in
    fire = day_to_day("sudo systemctl start jupcron-fire@").replace(
        "weekly-sol-dca", "systest-manual"
    )
    service.write_plan("systest-manual", 1_000_702, in_seconds=None)
    service.reload_and_wait()
    done = machine.sh(SUDO + fire, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(service.emulator.landed(1_000_702)) == 1
    # jupcronctl reads the drop-in from `systemctl cat`: it signs with the encrypted keypair
    # and is let in with the encrypted key (the plain files are gone)
    fire = ctl("fire").replace("weekly-sol-dca", "systest-manual")
    done = machine.sh(SUDO + fire, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(service.emulator.landed(1_000_702)) == 2
