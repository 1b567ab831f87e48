"""`jupcron config check`: validate the config and the plans, probe every dependency."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from jupcron.cli.main import Context, pass_ctx
from jupcron.config import Config
from jupcron.errors import ConfigError

if TYPE_CHECKING:
    from jupcron.service.probe import Check


@click.group()
def config() -> None:
    """The daemon config: check it and what it points to."""


@config.command()
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format.")  # fmt: skip
@pass_ctx
def check(ctx: Context, fmt: str) -> None:
    """Validate the config and plans.dir, and probe the wallet, the database, the API
    key (one authenticated read), the RPC node (and the wallet's SOL) and the
    notification URLs. Exit 0 when nothing failed, 1 otherwise (warnings do not fail).
    """
    from jupcron.service.probe import check_all

    config = _loaded(ctx, fmt)  # a config that does not load: one error line, exit 1
    checks = check_all(config, web=lambda: web_check(config))
    failed = [c for c in checks if c.verdict == "fail"]
    if fmt == "json":
        rows = [{"check": c.name, "verdict": c.verdict, "detail": c.detail, "fix": c.fix}
                for c in checks]  # fmt: skip
        click.echo(json.dumps({"ok": not failed, "checks": rows}, indent=2))
    else:
        for c in checks:
            click.echo(c.line())
        click.echo("all good" if not failed else f"{len(failed)} check(s) failed")
    if failed:
        raise SystemExit(1)


def _loaded(ctx: Context, fmt: str) -> Config:
    """The config; one that does not load is, with ``--format json``, also the report's
    one failed check on stdout: a script reading the report gets ``"ok": false``,
    not empty input, for the very mistake the check is for."""
    try:
        return ctx.config
    except ConfigError as exc:
        if fmt == "json":
            row = {"check": "config", "verdict": "fail", "detail": str(exc),
                   "fix": "correct what the detail names, then check again"}  # fmt: skip
            click.echo(json.dumps({"ok": False, "checks": [row]}, indent=2))
        raise


def web_check(config: Config) -> Check:
    """The page's settings (``web.*``): its token, and a token in clear on the network."""
    from jupcron.service.probe import Check

    if config.web.listen is None:
        return Check("web", "ok", "off (web.listen not set)")
    from jupcron.web.serve import check_web, plain_http_warning  # only when the page is on

    token = check_web(config)
    warning = plain_http_warning(config)
    if warning is not None:
        problem, _, fix = warning.partition(" (fix: ")
        return Check("web", "warn", problem, fix.removesuffix(")"))
    return Check("web", "ok", f"{config.web.listen}, " + ("token" if token else "no token"))
