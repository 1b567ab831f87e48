"""jupcron: a scheduling daemon for Jupiter (Solana) orders."""

from __future__ import annotations

__version__ = "0.1.0"
