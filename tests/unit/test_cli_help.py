"""Every command answers --help; the program answers --version."""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from jupcron import __version__
from jupcron.cli.main import cli


def walk(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
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


def test_the_daemon_command_does_not_import_what_it_does_not_use() -> None:
    """`jupcron run` keeps Alembic, the emulator's server and the demo out of memory,
    and the PostgreSQL driver until a store on PostgreSQL needs it (an install for
    SQLite has none)."""
    probe = (
        "import sys; from jupcron.cli.main import cli; import jupcron.cli.run, jupcron.app; "
        "import jupcron.service.daemon; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'alembic', 'mako', 'uvicorn', 'starlette', 'jupcron.emulator', 'psycopg'}), "
        "'jupcron.emulator' in sys.modules, 'jupcron.demo' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "False", "False"], done.stdout + done.stderr
