"""The CLI's `--format` option; the listings themselves are `jupcron.report.listing`."""

from __future__ import annotations

import click

from jupcron.report.listing import FORMATS

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format.",
)
