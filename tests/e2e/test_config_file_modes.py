"""Who may change the daemon's config file (review 20g). The file sets
`safety.dry_run`, the caps and the guard's limits, and a running daemon follows it
within seconds: like sshd's StrictModes, a config file that group or others may
write, that belongs to a user other than jupcron's or root, or whose folder others
may write (no sticky bit) is refused, with one line naming the file and the fix:
at `jupcron run` (nothing starts, exit 78), at `jupcron config check`, and on a
reload or when the daemon follows the file (the old config stays in effect)."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from tests.fixtures.daemon import DaemonEnv, DaemonEnvFactory
from tests.support.owners import NOBODY, own_private_group

EXIT_FATAL = 78


def run_to_exit(env: DaemonEnv) -> tuple[int, str]:
    """`jupcron run` expected to stop at once: its exit status and output. A daemon
    that starts instead is stopped and the test fails."""
    proc = env.start()
    try:
        code = proc.wait(20)
    except subprocess.TimeoutExpired:
        env.stop(proc)
        pytest.fail(f"the daemon started on a config others may change:\n{env.log_of(proc)}")
    return code, env.log_of(proc)


def no_daemon_ran(env: DaemonEnv) -> bool:
    return bool(env.status()["daemons"] == [])


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602], ids=["0666", "0620", "0602"])
def test_a_config_group_or_others_may_write_stops_the_daemon_at_start(
    daemon_env: DaemonEnvFactory, mode: int
) -> None:
    env = daemon_env()
    os.chown(env.config, -1, NOBODY)  # a group other than its owner's own
    env.config.chmod(mode)
    code, output = run_to_exit(env)
    assert code == EXIT_FATAL, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output  # one line, no traceback
    assert lines[0].startswith(f"error: {env.config}: "), output
    assert f"{mode:04o}" in lines[0], output
    assert f"chmod go-w {env.config}" in lines[0], output
    assert no_daemon_ran(env)


def test_config_check_says_the_config_others_may_write_is_refused(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    ok = env.jupcron("config", "check")
    assert "config file" not in ok.stdout + ok.stderr
    env.config.chmod(0o666)
    done = env.jupcron("config", "check")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "all good" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {env.config}: "), done.stderr
    assert "0666" in lines[0], done.stderr
    assert f"chmod go-w {env.config}" in lines[0], done.stderr


def test_a_config_of_another_user_is_refused(daemon_env: DaemonEnvFactory) -> None:
    env = daemon_env()
    me = os.geteuid()
    if me != 0:
        pytest.skip("only root can give the config file to another user")
    os.chown(env.config, NOBODY, NOBODY)  # mode 0644 still: only its owner may write it
    code, output = run_to_exit(env)
    assert code == EXIT_FATAL, output
    line = output.strip()
    assert "\n" not in line, output
    assert line.startswith(f"error: {env.config}: "), output
    assert f"uid {NOBODY}" in line, output
    assert f"chown {me} {env.config}" in line, output
    assert no_daemon_ran(env)
    os.chown(env.config, 0, 0)  # root's: accepted whoever jupcron runs as
    assert env.jupcron("db", "current").returncode == 0


def test_a_config_in_a_folder_others_may_write_is_refused_unless_sticky(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.root.chmod(0o777)  # anyone may rename another file over the config
    refused = env.jupcron("db", "current")
    assert refused.returncode != 0
    line = refused.stderr.strip()
    assert "\n" not in line, refused.stderr
    assert line.startswith(f"error: {env.config}: "), refused.stderr
    assert f"its folder {env.root} has permissions 0777" in line, line
    assert f"chmod go-w {env.root}" in line, line
    env.root.chmod(0o1777)  # as /tmp: only the file's owner may replace it
    sticky = env.jupcron("db", "current")
    assert sticky.returncode == 0, sticky.stderr


def test_an_edit_others_could_have_made_is_not_followed_nor_reloaded(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    env.write_config(safety={"dry_run": True})
    proc = env.start()
    try:
        assert env.wait_until(lambda: bool(env.events(proc, "daemon_started")), 30), env.log_of(
            proc
        )
        started = env.events(proc, "daemon_started")[0]["config"]
        # a file mode 0666 (say, written by a process with umask 0) turns dry run off
        body = env.config.read_text().replace('"dry_run": true', '"dry_run": false')
        fresh = env.root / "jupcron.yaml.new"
        fresh.write_text(body)
        fresh.chmod(0o666)
        os.replace(fresh, env.config)

        def said() -> bool:
            return bool(env.events(proc, "reload_failed") or env.events(proc, "config_reloaded"))

        assert env.wait_until(said, 30), env.log_of(proc)
        assert env.events(proc, "config_reloaded") == [], env.log_of(proc)
        failed = env.events(proc, "reload_failed")[0]
        assert failed["trigger"] == "file", failed
        assert failed["kept"] == started, failed
        assert failed["dry_run"] is True
        assert "0666" in failed["error"], failed
        assert f"chmod go-w {env.config}" in failed["error"], failed
        assert env.status()["dry_run"] is True

        # SIGHUP reads it again: refused again, the old config still in effect
        proc.send_signal(signal.SIGHUP)
        assert env.wait_until(lambda: len(env.events(proc, "reload_failed")) >= 2, 30)
        hup = env.events(proc, "reload_failed")[1]
        assert hup["trigger"] == "signal", hup
        assert hup["kept"] == started, hup
        assert env.events(proc, "config_reloaded") == []
        assert env.status()["dry_run"] is True

        # the fix the line names: the file is then followed, with no edit nor signal
        env.config.chmod(0o644)
        assert env.wait_until(lambda: bool(env.events(proc, "config_reloaded")), 30), env.log_of(
            proc
        )
        live = env.events(proc, "config_reloaded")[0]
        assert live["changed"] == ["safety.dry_run: true -> false"], live
        assert len(env.events(proc, "reload_failed")) == 2, env.log_of(proc)  # said once each
    finally:
        env.stop(proc)


def test_a_config_named_by_a_link_is_refused_when_its_real_folder_is_open(
    daemon_env: DaemonEnvFactory,
) -> None:
    env = daemon_env()
    shared = env.root / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # the link's folder is fine; the file's own folder is not
    real = shared / "jupcron.yaml"
    os.replace(env.config, real)
    env.config.symlink_to(real)
    refused = env.jupcron("db", "current")
    assert refused.returncode != 0
    assert f"its folder {shared} has permissions 0777" in refused.stderr, refused.stderr
    shared.chmod(0o755)
    done = env.jupcron("db", "current")
    assert done.returncode == 0, done.stderr


def test_group_write_is_fine_for_the_owners_own_group(daemon_env: DaemonEnvFactory) -> None:
    """A umask of 0002 (Debian's user private groups) makes a config 0664 of the
    owner's own group, which no one else is in: accepted, as Debian's ssh accepts it."""
    env = daemon_env()
    os.chown(env.config, -1, own_private_group())
    env.config.chmod(0o664)
    done = env.jupcron("config", "check")
    assert "permissions" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "config file" not in done.stdout + done.stderr
