"""jupcron: a scheduling daemon for Jupiter (Solana) orders."""

from __future__ import annotations

from jupcron.scheduling.zones import use_tzdata_package

__version__ = "0.1.0"

# first, before any zone is read: every process that imports jupcron (the CLI, the
# daemon, spawned workers) reads zone rules from the tzdata package, not the system's
use_tzdata_package()
