"""A config file its group may write is accepted only when that group is its owner's
own (`jupcron.config.trust`): "a user private group, no other member". A group that
is the primary group of other users too (SUSE's ``users`` for every account, Debian's
``nogroup`` for nobody, _apt and sync) lists none of them in ``gr_mem``: each of them
may write the file (and so turn dry run off, raise the caps, change a swap's
receiver), and it must be refused like any group-writable file. Real users and a real
process running as one of them; needs root to start it."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest


def _shared_primary_group() -> pwd.struct_passwd:
    """A user whose primary group is the primary group of another user too."""
    users = pwd.getpwall()
    shared = Counter(u.pw_gid for u in users)
    for user in users:
        if user.pw_uid != 0 and shared[user.pw_gid] > 1:
            return user
    pytest.skip("no two users here share a primary group")


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary folder another user may reach (pytest's are root's 0700)."""
    with tempfile.TemporaryDirectory(prefix="review27t-") as name:
        folder = Path(name)
        folder.chmod(0o755)
        yield folder


def test_a_group_writable_config_whose_group_others_hold_as_primary_is_refused(
    open_tmp: Path,
) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("running as another user needs root and setpriv")
    tmp_path = open_tmp
    owner = _shared_primary_group()
    others = [u.pw_name for u in pwd.getpwall()
              if u.pw_gid == owner.pw_gid and u.pw_uid != owner.pw_uid]  # fmt: skip
    folder = tmp_path / "etc"
    folder.mkdir()
    config = folder / "jupcron.yaml"
    config.write_text("safety:\n  dry_run: true\n")
    os.chown(folder, owner.pw_uid, owner.pw_gid)
    os.chown(config, owner.pw_uid, owner.pw_gid)
    config.chmod(0o664)
    code = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from jupcron.config.trust import check_file
        from jupcron.errors import ConfigError
        path = Path({str(config)!r})
        try:
            check_file(path, os.stat(path))
        except ConfigError as exc:
            print("refused:", exc)
        else:
            print("accepted")
    """)
    as_owner = ["setpriv", f"--reuid={owner.pw_uid}", f"--regid={owner.pw_gid}",
                "--clear-groups"]  # fmt: skip
    done = subprocess.run(
        [*as_owner, sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        cwd="/",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:"), (
        f"{config} (0664, group {owner.pw_gid}, also the primary group of {others}) was "
        f"{done.stdout.strip()}"
    )
    assert f"chmod go-w {config}" in done.stdout
