"""Fixtures of the system suite: a booted machine (tests/system/machine.py), the emulator
as the API on host loopback, and jupcron installed in the machine exactly as
systemd/README.md's Install section tells an operator."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.system.machine import Machine, cannot_boot_reason, python_for_venv_reason
from tests.system.service import Emulator, Service, plan_yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "systemd" / "README.md"
JUPCRON = Path(sys.executable).with_name("jupcron")
API_KEY = "systest-api-key-5f0c2d9e7b"
OPERATOR_DIR = "/tmp/operator"  # the operator's folder inside the machine (its own tmpfs)
# the operator's shell: root, sudo's secure PATH and SUDO_USER (sudo itself is not
# installed here)
SUDO = 'sudo() { SUDO_USER=operator "$@"; }\n'
# `make systemd-test` sets this: there, a machine that cannot boot is a failure, not a skip
REQUIRED = os.environ.get("JUPCRON_SYSTEMD_TEST") == "required"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # the first check installs jupcron (pip) and waits out restarts: more than the default
    for item in items:
        if item.nodeid.startswith("tests/system/"):
            item.add_marker(pytest.mark.timeout(600))


def readme_blocks(section: str) -> list[str]:
    """The ```sh blocks of a `## section` of systemd/README.md, as written."""
    text = README.read_text()
    start = text.index(f"## {section}\n")
    end = text.find("\n## ", start + 1)
    body = text[start : end if end != -1 else len(text)]
    return re.findall(r"```sh\n(.*?)```", body, flags=re.DOTALL)


def day_to_day_all(prefix: str) -> list[str]:
    """The README's "Day to day" commands starting with `prefix` (continuations joined)."""
    text = "\n".join(readme_blocks("Day to day")).replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command.startswith(prefix):
            found.append(re.sub(r"\s+", " ", command))
    return found


def day_to_day(prefix: str) -> str:
    """The README's first "Day to day" command starting with `prefix`."""
    found = day_to_day_all(prefix)
    if not found:
        raise AssertionError(f"no command starting with {prefix!r} in the README's Day to day")
    return found[0]


@pytest.fixture(scope="session")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    reason = cannot_boot_reason() or python_for_venv_reason()
    if reason:
        message = f"cannot boot systemd in a namespace on this machine: {reason}"
        if REQUIRED:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    console = tmp_path_factory.mktemp("machine") / "systemd-console.log"
    booted = Machine.boot(console)
    try:
        yield booted
    finally:
        booted.shutdown()


@contextlib.contextmanager
def running_emulator(folder: Path, api_key: str | None, seed: int) -> Iterator[Emulator]:
    """`jupcron emulator` on host loopback (the machine shares the host's network);
    with `api_key` it demands that key, without it it takes calls with no key."""
    argv = [str(JUPCRON), "emulator", "--listen", "127.0.0.1:0", "--seed", str(seed)]
    if api_key is not None:
        key_file = folder / "api-key"
        key_file.write_text(api_key)
        argv += ["--api-key-file", str(key_file)]
    with (folder / "emulator.log").open("wb") as log:
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL
        )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:"), f"emulator did not start: {url!r}"
        yield Emulator(url, process)
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(20)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with running_emulator(tmp_path_factory.mktemp("emulator"), API_KEY, seed=17) as running:
        yield running


LATER = "2099-01-01T00:00:00Z"  # a plan loaded at install that never fires during the suite


@dataclass
class Install:
    seconds: float  # wall time of the README's install steps
    output: str
    keypair_text: str


@pytest.fixture(scope="session")
def installed(machine: Machine, emulator: Emulator) -> Install:
    """The operator's folder (a checkout as jupcron/, jupcron.yaml, plans/, keypair.json),
    then every ```sh block of the README's Install section, as root, in that folder."""
    folder = machine.path(OPERATOR_DIR)
    folder.mkdir(mode=0o755)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = folder / "jupcron" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    (folder / "jupcron.yaml").write_text(
        f"api:\n  base_url: {emulator.url}\n"
        "database:\n  url: sqlite:////var/lib/jupcron/jupcron.db\n"
        "plans:\n  dir: /etc/jupcron/plans\n"
    )
    (folder / "plans").mkdir()
    (folder / "plans" / "systest-later.yaml").write_text(
        plan_yaml("systest-later", 1_000_000, LATER)
    )
    subprocess.run(
        [str(JUPCRON), "wallet", "new", str(folder / "keypair.json")],
        check=True, capture_output=True,
    )  # fmt: skip
    keypair_text = (folder / "keypair.json").read_text()
    blocks = readme_blocks("Install")
    assert blocks, "systemd/README.md has no ```sh block under ## Install"
    started = time.monotonic()
    done = machine.sh(
        SUDO + f"cd {OPERATOR_DIR}\n" + "\n".join(blocks),
        env={"JUPITER_API_KEY": API_KEY}, timeout=900, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    if done.returncode != 0:
        journal = machine.run("journalctl", "-u", "jupcron*", "--no-pager", "-n", "60", check=False)
        pytest.fail(
            f"the README's install steps failed:\n{output[-3000:]}\n{journal.stdout}",
            pytrace=False,
        )
    return Install(seconds=seconds, output=output, keypair_text=keypair_text)


@pytest.fixture(scope="session")
def service(machine: Machine, emulator: Emulator, installed: Install) -> Service:
    """jupcron.service, installed and started as the README says."""
    return Service(machine, emulator)
