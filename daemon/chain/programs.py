"""The SPL token programs' ids: who owns a token mint's account. A leaf (no imports),
so a plan check can tell a mint's program without loading the transaction guard."""

from __future__ import annotations

TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"  # noqa: S105 (a program id, not a secret)
TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"  # noqa: S105 (a program id, not a secret)
TOKEN_PROGRAMS = (TOKEN, TOKEN_2022)
