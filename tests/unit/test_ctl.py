"""jupcronctl's reading of the unit (`systemctl cat` text) and its command line: the
shipped unit's user, credentials and sandbox all reach systemd-run, drop-ins and resets
count as systemd counts them, the daemon's life settings stay out, bad usage is one line.
(Under a real systemd: tests/system/test_5_fire_credentials.py and test_7_keyless_fatal.py.)"""

from __future__ import annotations

import pytest

from jupcron.cli.ctl import (
    CtlError,
    Request,
    base_command,
    expand,
    parse_args,
    read_unit,
    systemd_run,
)
from tests.unit.test_systemd_unit import SERVICE, parse_unit

SHIPPED = SERVICE.read_text()
LIFE = {"Type", "NotifyAccess", "ExecStart", "ExecReload", "TimeoutStartSec", "TimeoutStopSec",
        "KillMode", "WatchdogSec", "Restart", "RestartPreventExitStatus", "RestartSec"}  # fmt: skip


def cat(*dropins: str) -> str:
    """What `systemctl cat jupcron.service` prints: the file, then each drop-in."""
    parts = [f"# /etc/systemd/system/jupcron.service\n{SHIPPED}"]
    parts += [
        f"# /etc/systemd/system/jupcron.service.d/{i}.conf\n{d}" for i, d in enumerate(dropins)
    ]
    return "\n".join(parts)


def test_every_setting_of_the_shipped_unit_but_its_life_reaches_the_command() -> None:
    service = parse_unit(SERVICE)["Service"]
    unit = read_unit(cat())
    carried = {key for key, _ in unit.properties}
    assert carried == set(service) - LIFE
    assert set(service) >= LIFE  # the list above names settings the unit really has
    for key, values in service.items():
        if key not in LIFE:
            assert [v for k, v in unit.properties if k == key] == values, key
    assert ("User", "jupcron") in unit.properties
    assert ("LoadCredential", "keypair:/etc/jupcron/keypair.json") in unit.properties
    assert ("SetCredential", "api-key:\\n") in unit.properties
    assert base_command(unit.exec_start) == [
        "/opt/jupcron/venv/bin/jupcron", "--config", "/etc/jupcron/jupcron.yaml"
    ]  # fmt: skip


def test_a_drop_in_resets_credentials_as_systemd_does() -> None:
    encrypted = (
        "[Service]\nLoadCredential=\n"
        "LoadCredentialEncrypted=keypair:/etc/jupcron/keypair.cred\n"
        "LoadCredentialEncrypted=api-key:/etc/jupcron/api-key.cred\n"
        "Environment=PGPASSFILE=%d/pgpass\n"
    )
    unit = read_unit(cat(encrypted))
    loads = [(k, v) for k, v in unit.properties if k.startswith("LoadCredential")]
    assert loads == [
        ("LoadCredentialEncrypted", "keypair:/etc/jupcron/keypair.cred"),
        ("LoadCredentialEncrypted", "api-key:/etc/jupcron/api-key.cred"),
    ]
    assert ("SetCredential", "api-key:\\n") in unit.properties  # a list of its own
    argv = systemd_run(Request("jupcron.service", ["status"]), unit, operator="alice", pid=42)
    assert "--property=Environment=PGPASSFILE=/run/credentials/jupcronctl-42.service/pgpass" in argv
    assert "--setenv=SUDO_USER=alice" in argv
    assert "--unit=jupcronctl-42.service" in argv
    assert argv[argv.index("--") + 1 :] == [
        "/opt/jupcron/venv/bin/jupcron", "--config", "/etc/jupcron/jupcron.yaml", "status"
    ]  # fmt: skip
    assert not [a for a in argv if a.startswith(("--property=Type=", "--property=ExecStart"))]


def test_continued_lines_comments_and_other_sections() -> None:
    text = (
        "[Unit]\nDescription=x\nUser=not-this-one\n"
        "[Service]\nExecStart=/opt/j/bin/jupcron \\\n  --config /etc/j.yaml \\\n"
        "# a comment inside\n  run\n; another\nSystemCallFilter=@system-service\n"
        "ProtectSystem=strict\nProtectSystem=\n"
    )
    unit = read_unit(text)
    assert base_command(unit.exec_start) == ["/opt/j/bin/jupcron", "--config", "/etc/j.yaml"]
    assert unit.properties == [("SystemCallFilter", "@system-service")]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[Service]\nUser=jupcron\n", "has no ExecStart"),
        ("[Service]\nExecStart=/bin/jupcron status\n", "does not end with 'run'"),
    ],
)
def test_a_unit_that_is_not_jupcrons_is_refused(text: str, problem: str) -> None:
    with pytest.raises(CtlError, match=problem):
        base_command(read_unit(text).exec_start)


def test_specifiers_other_than_d_are_refused() -> None:
    assert expand("a%%b %d/x", "u.service") == "a%b /run/credentials/u.service/x"
    with pytest.raises(CtlError, match=r"specifier %i"):
        expand("/etc/%i.yaml", "u.service")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "no command given"),
        (["run"], "the daemon itself runs as the service"),
        (["emulator"], "not as the service"),
        (["--config", "x.yaml", "status"], "takes the config from jupcron.service's ExecStart"),
        (["--unit"], "--unit needs a unit name"),
        (["--verbose", "status"], "unknown option '--verbose'"),
    ],
)
def test_bad_usage_is_one_line_with_exit_two(argv: list[str], said: str) -> None:
    with pytest.raises(CtlError, match=said) as raised:
        parse_args(argv)
    assert raised.value.code == 2


def test_arguments_after_the_command_are_the_commands() -> None:
    assert parse_args(["--unit", "jupcron-b", "pause", "--all", "--reason", "x"]) == Request(
        "jupcron-b.service", ["pause", "--all", "--reason", "x"]
    )
    assert parse_args(["--help"]) is None
    assert parse_args(["status", "--help"]) == Request("jupcron.service", ["status", "--help"])
