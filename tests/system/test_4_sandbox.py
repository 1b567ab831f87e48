"""The sandbox is really applied to the running daemon: /proc/<main pid>/status, the
files it can write, and a keypair it can read only through its credential."""

from __future__ import annotations

from tests.system.conftest import API_KEY, Install
from tests.system.machine import Machine
from tests.system.service import Service

# places the daemon might write to, and the only ones it may
PROBED = ("/", "/etc", "/etc/jupcron", "/etc/jupcron/plans", "/opt/jupcron/venv/bin",
          "/opt/jupcron/venv/lib", "/usr/local/bin", "/var", "/var/lib", "/var/lib/private",
          "/var/log", "/root", "/home", "/run", "/run/credentials/jupcron.service", "/srv",
          "/var/lib/jupcron", "/tmp", "/var/tmp", "/dev/shm")  # fmt: skip
WRITABLE = {"/var/lib/jupcron", "/tmp", "/var/tmp", "/dev/shm"}  # the last three: private
PROBE = """
for dir in {dirs}; do
  if ( : > "$dir/.systest-probe" ) 2>/dev/null; then rm -f "$dir/.systest-probe"; echo "W $dir"
  else echo "- $dir $( ( : > "$dir/.systest-probe" ) 2>&1 | sed 's/.*: //')"; fi
done
"""


def probe(service: Service, *, as_root: bool = False) -> dict[str, str]:
    out = service.in_service(PROBE.format(dirs=" ".join(PROBED)), as_root=as_root)
    result = {}
    for line in out.splitlines():
        mark, path, *why = line.split(" ", 2)
        result[path] = "writable" if mark == "W" else (why[0] if why else "?")
    assert set(result) == set(PROBED), out
    return result


def test_no_new_privileges_seccomp_and_no_capabilities(service: Service) -> None:
    status = service.process_status(service.main_pid())
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"  # a filter is installed
    assert int(status["Seccomp_filters"]) >= 1
    for cap in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"):
        assert int(status[cap], 16) == 0, (cap, status[cap])
    uid = int(status["Uid"].split()[0])
    assert uid >= 61184  # a dynamic user, not root


def test_it_cannot_write_outside_its_state_directory(machine: Machine, service: Service) -> None:
    as_daemon = probe(service)
    assert {p for p, r in as_daemon.items() if r == "writable"} == WRITABLE, as_daemon
    # even root inside its mount namespace finds the rest read-only or hidden: that is
    # the sandbox (ProtectSystem=strict, ProtectHome, PrivateTmp…), not file modes
    as_root = probe(service, as_root=True)
    for path in ("/", "/etc/jupcron", "/opt/jupcron/venv/bin", "/usr/local/bin", "/var/lib",
                 "/run", "/root", "/home"):  # fmt: skip
        assert as_root[path] != "writable", (path, as_root[path])
    for path in ("/etc/jupcron", "/opt/jupcron/venv/bin", "/var/lib", "/run"):
        assert as_root[path] == "Read-only file system", (path, as_root[path])
    # its /tmp is its own: a file it writes there is not in the machine's /tmp
    service.in_service("echo mine > /tmp/systest-private")
    assert not machine.path("/tmp/systest-private").exists()


def test_the_keypair_is_readable_only_through_the_credential(
    service: Service, installed: Install
) -> None:
    # the files the credentials come from: not readable by the daemon's user
    for secret in ("/etc/jupcron/keypair.json", "/etc/jupcron/api-key"):
        out = service.in_service(f"cat {secret} 2>&1 || true")
        assert "Permission denied" in out, out
    # the credential is: the same bytes, in its own $CREDENTIALS_DIRECTORY
    credential = service.in_service("cat /run/credentials/jupcron.service/keypair")
    assert credential == installed.keypair_text
    mode = service.in_service("stat -c '%a %u' /run/credentials/jupcron.service/keypair")
    uid, _ = service.runner_uid()
    assert mode.split() == ["400", str(uid)]
    # and no secret in its environment or command line
    pid = service.main_pid()
    environ = service.machine.run("cat", f"/proc/{pid}/environ").stdout.split("\0")
    assert "CREDENTIALS_DIRECTORY=/run/credentials/jupcron.service" in environ
    text = "\n".join(environ) + service.machine.run("cat", f"/proc/{pid}/cmdline").stdout
    assert API_KEY not in text
    assert installed.keypair_text.strip()[:20] not in text
    config = service.machine.path("/etc/jupcron/jupcron.yaml").read_text()
    assert "keypair" not in config
    assert "key_file" not in config
