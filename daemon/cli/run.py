"""`jupcron run`: the daemon, in the foreground (systemd runs this).

Exit 0 after a stop asked for (SIGTERM, SIGINT); `EXIT_FATAL` (78, sysexits'
EX_CONFIG) after a stop only a human can end (a config that does not load, an
unmigrated database, a key the API refuses): jupcron.service names it in
``RestartPreventExitStatus=``, so systemd does not restart into the same wall
(and the same alert) again and again; anything else (a crash) exits 1 and is
restarted.
"""

from __future__ import annotations

import click

from jupcron.cli.main import Context, pass_ctx
from jupcron.errors import JupcronError
from jupcron.service.daemon import Daemon
from jupcron.web.serve import StatusPage

EXIT_FATAL = 78


@click.command()
@pass_ctx
def run(ctx: Context) -> None:
    """Run the daemon in the foreground until SIGTERM or SIGINT."""
    try:
        code = Daemon(ctx.config, config_path=ctx.config_path, page=StatusPage()).run()
    except JupcronError as exc:
        if ctx.debug:
            raise
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_FATAL) from None
    raise SystemExit(EXIT_FATAL if code else 0)
