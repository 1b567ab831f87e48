"""`python -m daemon` is `jupcron`."""

from __future__ import annotations

from daemon.cli.main import main

main()
