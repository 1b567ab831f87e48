"""The Jinja2 environment: templates shipped in this package, every value escaped
(HTML and SVG alike), a missing value an error rather than an empty string."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("jupcron.web", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "svg"), default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template: str, **values: object) -> str:
    return environment().get_template(template).render(**values)
