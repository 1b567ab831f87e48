"""`jupcron report --chart FILE`: the file is 0600 whatever the umask, written to a
new file renamed over the path, so a symlink planted there is replaced, not followed."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupcron.report.chart import write_chart


@pytest.fixture
def open_umask() -> Iterator[None]:
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.mark.parametrize("name", ["c.svg", "c.png"])
@pytest.mark.usefixtures("open_umask")
def test_the_chart_is_private_whatever_the_umask(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"an older chart")
    path.chmod(0o644)
    write_chart([], path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes() != b"an older chart"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temp file left


@pytest.mark.usefixtures("open_umask")
def test_a_symlink_at_the_path_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    victim.chmod(0o644)
    link = tmp_path / "chart.svg"
    link.symlink_to(victim)
    write_chart([], link)
    assert victim.read_text() == "keep me\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not link.is_symlink()
    assert stat.S_IMODE(link.lstat().st_mode) == 0o600
    assert "<svg" in link.read_text()


def test_a_folder_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):  # root writes anywhere
            pytest.skip("running as root")
        with pytest.raises(PermissionError):
            write_chart([], folder / "c.svg")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)
