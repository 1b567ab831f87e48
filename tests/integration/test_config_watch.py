"""The config file watch (daemon/config/watch.py) on real files: what counts as a
change, an editor's half-written file, a rename over the old file, a missing file,
and the change line a reload logs (secrets masked)."""

from __future__ import annotations

import os
from pathlib import Path

from jupcron.config import Config, config_digest, load_config
from jupcron.config.changes import config_changes, restart_only
from jupcron.config.watch import UNREADABLE, ConfigWatch

FAR = 0  # a wall clock far from every file's mtime: no file counts as just written

BASE = "safety:\n  dry_run: true\n"


def watch_of(path: Path) -> ConfigWatch:
    return ConfigWatch(path, config_digest(path.read_bytes()), wall_ns=lambda: FAR)


def looks(watch: ConfigWatch, n: int) -> list[bool]:
    return [watch.due() for _ in range(n)]


def test_an_unchanged_or_touched_file_is_no_change(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(BASE)
    watch = watch_of(path)
    assert looks(watch, 3) == [False, False, False]
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # touch: new times, same bytes
    assert looks(watch, 3) == [False, False, False]
    assert watch.seen == watch.current


def test_an_edit_in_place_is_due_once_it_held_still_for_a_look(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(BASE)
    watch = watch_of(path)
    path.write_text("safety:\n  dry_run: false\n")
    assert watch.due() is False  # changed since the last look: maybe still being written
    assert watch.due() is True
    assert watch.seen == config_digest(path.read_bytes())


def test_a_half_written_file_is_not_read_until_it_stops_changing(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(BASE)
    watch = watch_of(path)
    path.write_text("safety:\n")  # the editor wrote part of it
    assert watch.due() is False
    with path.open("a") as rest:
        rest.write("  dry_run: false\n")  # and the rest, before the next look
    assert watch.due() is False
    assert watch.due() is True
    assert watch.seen == config_digest(b"safety:\n  dry_run: false\n")


def test_a_new_file_renamed_over_the_old_is_a_change(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(BASE)
    watch = watch_of(path)
    fresh = tmp_path / ".jupcron.yaml.swp"
    fresh.write_text("safety:\n  dry_run: false\n")
    os.replace(fresh, path)
    assert looks(watch, 2) == [False, True]
    # the same bytes renamed back over it: a new inode, and the content in effect
    watch.current = watch.seen
    back = tmp_path / ".back"
    back.write_text("safety:\n  dry_run: false\n")
    os.replace(back, path)
    assert looks(watch, 3) == [False, False, False]


def test_a_missing_or_refused_file_is_due_once_per_content(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(BASE)
    watch = watch_of(path)
    path.unlink()
    assert looks(watch, 2) == [False, True]
    assert watch.seen == UNREADABLE
    watch.refused = watch.seen  # what the daemon does when it does not load
    assert looks(watch, 3) == [False, False, False]
    path.write_text("safety: [broken\n")
    assert looks(watch, 2) == [False, True]
    watch.refused = watch.seen
    assert looks(watch, 3) == [False, False, False]
    path.write_text(BASE)  # back as it was: the config in effect, nothing to do
    assert looks(watch, 3) == [False, False, False]


def test_a_file_written_a_moment_ago_is_read_at_each_look(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(BASE)
    reads: list[str] = []
    mtime = path.stat().st_mtime_ns
    watch = ConfigWatch(path, config_digest(path.read_bytes()), wall_ns=lambda: mtime)
    for _ in range(3):
        watch.seen = ""
        watch.due()
        reads.append(watch.seen)
    # the first look only notes the stat; each later one reads it while it is this fresh
    assert reads[1:] == [watch.current, watch.current]


def test_the_change_line_names_keys_and_masks_secrets(tmp_path: Path) -> None:
    path = tmp_path / "jupcron.yaml"
    path.write_text(BASE + "rpc:\n  url: https://rpc.example/?api-key=s3cr3t-old\n")
    old = load_config(path, {})
    path.write_text(
        "safety:\n  dry_run: false\nrpc:\n  url: https://rpc.example/?api-key=s3cr3t-new\n"
    )
    new = load_config(path, {})
    changes = config_changes(old, new)
    assert changes[1] == "safety.dry_run: true -> false"
    assert changes[0].startswith("rpc.url: ")
    assert "s3cr3t" not in " ".join(changes)
    assert restart_only(changes) == ["rpc.url"]
    assert config_changes(new, new) == []
    assert config_changes(Config(), Config(runner={"workers": 3})) == [  # type: ignore[arg-type]
        "runner.workers: 8 -> 3"
    ]
    assert restart_only(["runner.workers: 8 -> 3", "runner.recovery_interval: 30 -> 5"]) == [
        "runner.workers"
    ]
