"""`jupcron run`: the daemon, in the foreground (systemd runs this)."""

from __future__ import annotations

import click

from jupcron.cli.main import Context, pass_ctx
from jupcron.service.daemon import Daemon


@click.command()
@pass_ctx
def run(ctx: Context) -> None:
    """Run the daemon in the foreground until SIGTERM or SIGINT."""
    code = Daemon(ctx.config, config_path=ctx.config_path).run()
    raise SystemExit(code)
