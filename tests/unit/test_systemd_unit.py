"""The systemd unit: required settings present, exposure score ≤ 2.0, stack runs under MDWE."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

UNITS = Path(__file__).resolve().parents[2] / "systemd"
SERVICE = UNITS / "jupcron.service"
MAX_EXPOSURE = 2.0


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """``{section: {key: [values...]}}`` (systemd keys may repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{path}: setting outside a section: {line}"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


@pytest.fixture(scope="module")
def service() -> dict[str, list[str]]:
    return parse_unit(SERVICE)["Service"]


def test_start_command_type_and_reload(service: dict[str, list[str]]) -> None:
    assert service["ExecStart"] == [
        "/opt/jupcron/venv/bin/jupcron --config /etc/jupcron/jupcron.yaml run"
    ]
    assert service["Type"] == ["notify"]
    assert service["ExecReload"] == ["/bin/kill -HUP $MAINPID"]
    assert int(service["WatchdogSec"][0]) > 0
    assert service["Restart"] == ["on-failure"]


def test_start_limits_are_in_the_unit_section() -> None:
    unit = parse_unit(SERVICE)["Unit"]
    assert int(unit["StartLimitIntervalSec"][0]) > 0
    assert int(unit["StartLimitBurst"][0]) > 0


def test_user_state_and_credentials(service: dict[str, list[str]]) -> None:
    assert service["DynamicUser"] == ["yes"]
    assert service["StateDirectory"] == ["jupcron"]
    names = {value.split(":", 1)[0] for value in service["LoadCredential"]}
    assert names == {"keypair", "api-key"}
    # secrets never in the environment of the unit
    assert "EnvironmentFile" not in service
    for value in service.get("Environment", []):
        assert not re.search(r"(?i)key|secret|password|token", value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("NoNewPrivileges", "yes"),
        ("CapabilityBoundingSet", ""),
        ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
        ("SystemCallArchitectures", "native"),
        ("UMask", "0077"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectKernelModules", "yes"),
        ("ProtectKernelLogs", "yes"),
        ("ProtectControlGroups", "yes"),
        ("ProtectClock", "yes"),
        ("ProtectHostname", "yes"),
        ("RestrictNamespaces", "yes"),
        ("RestrictRealtime", "yes"),
        ("RestrictSUIDSGID", "yes"),
        ("LockPersonality", "yes"),
        ("MemoryDenyWriteExecute", "yes"),
    ],
)
def test_hardening_setting(service: dict[str, list[str]], key: str, value: str) -> None:
    assert service[key] == [value]


def test_system_call_filter_starts_from_system_service(service: dict[str, list[str]]) -> None:
    assert service["SystemCallFilter"][0] == "@system-service"


def exposure(unit: Path) -> float:
    done = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", done.stdout)
    assert match, f"no exposure figure in systemd-analyze output:\n{done.stdout}\n{done.stderr}"
    return float(match.group(1))


needs_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed"
)


@needs_analyze
def test_exposure_is_at_most_two() -> None:
    assert exposure(SERVICE) <= MAX_EXPOSURE


@needs_analyze
def test_exposure_parser_sees_a_weak_unit_as_worse(tmp_path: Path) -> None:
    weak = tmp_path / "weak.service"
    weak.write_text("[Service]\nType=notify\nExecStart=/bin/true\n")
    assert exposure(weak) > MAX_EXPOSURE


@needs_analyze
def test_units_verify_cleanly() -> None:
    units = [str(UNITS / "jupcron-plans.path"), str(UNITS / "jupcron-plans.service")]
    done = subprocess.run(
        ["systemd-analyze", "verify", *units], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # the main unit's only complaint on a dev machine is the missing /opt/jupcron binary
    done = subprocess.run(
        ["systemd-analyze", "verify", str(SERVICE)], capture_output=True, text=True, timeout=60
    )
    problems = [
        line
        for line in done.stderr.splitlines()
        if line.strip() and "/opt/jupcron/venv/bin/jupcron is not executable" not in line
    ]
    assert problems == []


# PR_SET_MDWE (Linux ≥ 6.3) is what MemoryDenyWriteExecute=yes asks of the kernel
MDWE_PROBE = textwrap.dedent(
    """
    import ctypes, mmap, sys
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN
        sys.exit(77)
    try:
        mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        sys.exit(78)  # not enforced: the probe would prove nothing
    except OSError:
        pass
    import apscheduler.schedulers.background, alembic, click, httpx, prometheus_client
    import psycopg, pydantic, ruamel.yaml, sqlalchemy, structlog
    import jupcron.cli.main, jupcron.config, jupcron.logs, jupcron.store.engine
    from solders.keypair import Keypair
    from sqlalchemy import text
    keypair = Keypair()
    signature = keypair.sign_message(b"jupcron")
    assert signature.verify(keypair.pubkey(), b"jupcron")
    engine = jupcron.store.engine.make_engine("sqlite://")
    with engine.connect() as conn:
        assert conn.execute(text("select 1")).scalar() == 1
    print("mdwe-ok")
    """
)


def test_stack_runs_under_memory_deny_write_execute() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_MDWE is Linux only")
    done = subprocess.run(
        [sys.executable, "-c", MDWE_PROBE], capture_output=True, text=True, timeout=60
    )
    if done.returncode == 77:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux < 6.3)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("mdwe-ok")
