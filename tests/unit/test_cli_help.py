"""Every command answers --help; the program answers --version."""

from __future__ import annotations

import click
from click.testing import CliRunner

from daemon import __version__
from daemon.cli.main import cli


def walk(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += walk(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def test_every_command_has_help() -> None:
    runner = CliRunner()
    paths = walk(cli)
    assert ("db", "upgrade") in paths
    for path in paths:
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage:" in result.output


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output
