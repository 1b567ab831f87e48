"""`python -m jupcron` is `jupcron`."""

from __future__ import annotations

from jupcron.cli.entry import main

main()
