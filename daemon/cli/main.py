"""`jupcron` entry point: global options, error handling, command registration.

A user mistake ends with one clear line on stderr and a non-zero exit, never a
traceback (``--debug`` shows it). Each command group lives in its own module
and is registered at the bottom of this file.
"""

from __future__ import annotations

import getpass
import importlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO, cast

import click

from jupcron import __version__
from jupcron.cli import interrupt
from jupcron.config import Config, load_config, load_database_config, mask_url
from jupcron.errors import JupcronError, PlanError
from jupcron.logs import configure_logging, mask_secrets

EXIT_USER = 1
EXIT_USAGE = 2


@dataclass
class Context:
    """What every command gets: the global options and a lazily loaded config."""

    config_path: str | None = None
    debug: bool = False
    _config: Config | None = field(default=None, repr=False)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config

    def database_config(self) -> Config:
        """The config for a command that needs only the database (pause, resume): a
        config with problems elsewhere is said on stderr, and its database used."""
        if self._config is not None:
            return self._config
        config, problem = load_database_config(self.config_path)
        if problem is None:
            self._config = config
            return config
        first = str(problem).splitlines()[0]
        click.echo(
            f"warning: the config does not load ({first}); using only its database "
            f"section ({mask_url(config.database.url)}): fix it before the daemon restarts",
            err=True,
        )
        return config


pass_ctx = click.make_pass_decorator(Context)


class JupcronGroup(click.Group):
    """Turns our errors into one line and an exit status, and imports a command's
    module only when that command runs: `jupcron run` does not carry the
    emulator's web server or Alembic in its resident memory."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            module = importlib.import_module(f"jupcron.cli.{COMMANDS[cmd_name]}")
            command = cast(click.Command, getattr(module, cmd_name))
            self.add_command(command, cmd_name)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except JupcronError as exc:
            obj = ctx.find_object(Context)
            if obj is not None and obj.debug:
                raise
            _fail(exc)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (`jupcron.cli.interrupt`)
            interrupt.end(exc)
        except Exception as exc:  # the last line of defence: one line, never a traceback
            behind = interrupt.interrupt_behind(exc)
            if behind is not None:  # a Ctrl-C Python wrapped (Python 3.11's __set_name__)
                interrupt.end(behind)
            obj = ctx.find_object(Context)
            if obj is not None and obj.debug:
                raise
            click.echo(f"error: {foreign_error(exc)}", err=True)
            sys.exit(EXIT_USER)


def login_name() -> str:
    """Who runs the command (the user behind sudo), for `--by` defaults."""
    for name in ("SUDO_USER", "USER", "LOGNAME"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def foreign_error(exc: Exception) -> str:
    """One line for an exception no adapter translated: the database's own words (a
    file that is not a database, say), a file system refusal, else the type and text
    with a pointer to ``--debug``. Secrets are masked as in the logs."""
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    if isinstance(exc, DBAPIError):
        said = str(exc.orig or exc).strip().splitlines()[0] if str(exc.orig or exc) else ""
        text = f"the database refused: {said or type(exc.orig).__name__} (check database.url)"
    elif isinstance(exc, SQLAlchemyError):
        text = f"database: {str(exc).splitlines()[0]} (check database.url)"
    elif isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        text = f"{where}{exc.strerror or exc}"
    else:
        text = f"unexpected {type(exc).__name__}: {exc} (run with --debug for the traceback)"
    return str(mask_secrets(None, "", {"e": text})["e"])


def _fail(exc: JupcronError) -> None:
    if isinstance(exc, PlanError):
        for problem in exc.problems:
            click.echo(str(problem), err=True)
    else:
        click.echo(f"error: {exc}", err=True)
    code = getattr(exc, "exit_code", EXIT_USER)
    sys.exit(code)


@click.group(cls=JupcronGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="jupcron")
@click.option(
    "--config",
    "config_path",
    metavar="PATH",
    envvar="JUPCRON_CONFIG",
    help="Daemon config file (default: $JUPCRON_CONFIG, else /etc/jupcron/jupcron.yaml).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, debug: bool) -> None:
    """jupcron: scheduled Jupiter orders, signed locally, audited in SQL."""
    ctx.obj = Context(config_path=config_path, debug=debug)
    if ctx.invoked_subcommand not in interrupt.OWN_SIGNALS:
        ctx.call_on_close(interrupt.terminate_as_interrupt())
    # commands print their results on stdout; log lines go to stderr (`run` logs to stdout)
    configure_logging("debug" if debug else "warning", "auto", stream=cast(TextIO, _Stderr()))


class _Stderr:
    """sys.stderr as it is when a line is written (tests swap it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


# command name -> module in jupcron.cli (the command is the module's attribute of that name)
COMMANDS = {
    "db": "db", "plans": "plans", "run": "run", "fire": "fire", "audit": "audit", "tx": "tx",
    "wallet": "wallet", "portfolio": "portfolio", "emulator": "emulator", "demo": "demo",
    "settle": "settle", "report": "report", "pause": "control", "resume": "control",
    "status": "status", "config": "configcheck",
}  # fmt: skip


if __name__ == "__main__":
    # `python -m jupcron.cli.main`: run the importable module, not this copy of it
    from jupcron.cli.main import main as _main

    _main()


def main() -> None:
    try:
        cli(prog_name="jupcron")
    finally:
        interrupt.ended()
