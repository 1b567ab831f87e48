"""The tests' CLI runner (tests/support/clifork.py) behaves as a fresh `python -m jupcron`
would: the same status, stdout and stderr for success, usage errors, user errors and
stdin input; the caller's environment, folder and umask; a timeout that kills."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import clifork
from tests.support.wait import wait_until


def fresh(args: list[str], env: dict[str, str], cwd: Path, input: str | None = None) -> tuple:
    done = subprocess.run(
        [sys.executable, "-m", "jupcron", *args], env=env, cwd=cwd, input=input,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def forked(args: list[str], env: dict[str, str], cwd: Path, input: str | None = None) -> tuple:
    done = clifork.run(args, env=env, cwd=cwd, input=input)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("args", "input"),
    [
        (["--version"], None),
        (["no-such-command"], None),
        (["--config", "missing.yaml", "status"], None),
        (["tx", "inspect", "-"], "this is not base64\n"),
        (["wallet", "new", "key.json"], None),
        (["wallet", "new", "no/such/folder/key.json"], None),
    ],
)
def test_a_forked_command_says_what_a_fresh_interpreter_says(
    tmp_path: Path, args: list[str], input: str | None
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG",)}
    one, two = tmp_path / "fresh", tmp_path / "forked"
    one.mkdir()
    two.mkdir()
    want = fresh(args, env, one, input)
    got = forked(args, env, two, input)
    # a new keypair's public key differs between the two runs; the rest must not
    if args[:2] == ["wallet", "new"] and want[0] == 0:
        assert got[0] == 0
        assert sorted(p.name for p in one.iterdir()) == sorted(p.name for p in two.iterdir())
        assert oct((two / "key.json").stat().st_mode & 0o777) == oct(
            (one / "key.json").stat().st_mode & 0o777
        )
    else:
        assert got == want


def test_the_callers_arguments_environment_folder_umask_and_stdin_reach_the_process(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PROCINFO": "from the caller", "PROCINFO_EXIT": "3"}
    old = os.umask(0o027)
    try:
        done = clifork.run(["a", "b c"], env=env, cwd=tmp_path, input="typed\n",
                           module="tests.support.procinfo")  # fmt: skip
    finally:
        os.umask(old)
    assert done.returncode == 3
    assert done.stderr == "to stderr\n"
    assert json.loads(done.stdout) == {
        "argv": ["a", "b c"], "cwd": str(tmp_path), "umask": 0o027,
        "env": "from the caller", "stdin": "typed\n", "own_group": True,
    }  # fmt: skip


def test_a_command_past_its_timeout_is_killed(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG",)}
    with pytest.raises(subprocess.TimeoutExpired):
        clifork.run(["emulator", "--listen", "127.0.0.1:0"], env=env, cwd=tmp_path, timeout=3)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_started_command_is_polled_signalled_and_waited_for_as_popen_does(
    tmp_path: Path, sig: int
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JUPCRON_CONFIG",)}
    args = ["emulator", "--listen", "127.0.0.1:0"]
    real = subprocess.Popen([sys.executable, "-m", "jupcron", *args], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    log = tmp_path / "forked.log"
    log.write_text("")
    forked = clifork.start(args, env=env, stdout=log, cwd=tmp_path)
    try:
        assert real.stdout is not None
        assert real.stdout.readline().startswith("http://")  # serving
        assert wait_until(lambda: "\nhttp://" in f"\n{log.read_text()}", 30)
        assert forked.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            forked.wait(0.2)
    finally:
        forked.send_signal(sig)
        real.send_signal(sig)
    assert forked.wait(30) == real.wait(30)
    real.stdout.close()
    assert forked.returncode == real.returncode
    assert forked.poll() == real.returncode
