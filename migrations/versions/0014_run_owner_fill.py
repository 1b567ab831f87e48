"""runs.owner for the runs stored before 0013_run_owner: the keypair their own
signature names (the key whose signature ``runs.signature`` is among the signed
transaction's signatures: the fee payer, unless another party pays, as for a gasless
order, so the position of a key never makes it ours).

0013 left them NULL, counted under their wallet's name only, so the rename 0013 made
harmless still restarted a `safety.caps` window for the runs of the days before the
upgrade: 5 USDC signed as `default`, `db upgrade`, the same keypair renamed `main`, and
5 more were signed under a 7 USDC/day cap. Left NULL (counted under their name) are
runs that signed nothing: they spent nothing, or are still unsigned and are ordered
afresh under their name (a transaction only ordered names a key the guard may have
refused). No schema change; a downgrade leaves the owners written (they are true).

Revision ID: 0014_run_owner_fill
Revises: 0013_run_owner
Create Date: 2026-11-28 10:00:00
"""

from __future__ import annotations

import base64
import binascii
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0014_run_owner_fill"
down_revision = "0013_run_owner"
branch_labels = None
depends_on = None

PAGE = 1000  # runs read (and their transactions decoded) at a time

_RUNS = sa.table(
    "runs",
    sa.column("id", sa.Integer), sa.column("owner", sa.String),
    sa.column("signature", sa.String), sa.column("signed_tx", sa.Text),
)  # fmt: skip
_TO_FILL = (
    sa.select(_RUNS.c.id, _RUNS.c.signature, _RUNS.c.signed_tx)
    .where(
        _RUNS.c.owner.is_(None),
        _RUNS.c.signed_tx.is_not(None),
        _RUNS.c.signature.is_not(None),
        _RUNS.c.id > sa.bindparam("after"),
    )
    .order_by(_RUNS.c.id)
    .limit(PAGE)
)
_FILL = (
    _RUNS.update()
    .where(_RUNS.c.id.in_(sa.bindparam("ids", expanding=True)))
    .values(owner=sa.bindparam("key"))
)


def upgrade() -> None:
    _fill_owners(op.get_bind())


def downgrade() -> None:
    pass  # the owners written are true at 0013 too


def _fill_owners(conn: sa.Connection) -> None:
    """Each stored run's keypair, where its signature tells it (a page at a time)."""
    after = 0
    while True:
        page = conn.execute(_TO_FILL, {"after": after}).all()
        if not page:
            return
        by_key: defaultdict[str, list[int]] = defaultdict(list)
        for run_id, signature, signed_tx in page:
            key = _signer(signed_tx, signature)
            if key is not None:
                by_key[key].append(run_id)
        for key, ids in by_key.items():
            conn.execute(_FILL, {"ids": ids, "key": key})
        after = page[-1][0]


_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _signer(tx_b64: str, signature: str) -> str | None:
    """The key our signature (`signature`) stands for in the signed transaction
    `tx_b64`; None when the bytes do not tell it. Read from Solana's wire format here
    (the standard library only: a migration is history, and imports nothing that may
    change under it): the signatures, then the message, whose first keys are its
    signers, in the signatures' order."""
    try:
        raw = base64.b64decode(tx_b64, validate=True)
        count, at = _short_vec(raw, 0)
        signatures = [_base58(raw[at + 64 * i : at + 64 * (i + 1)]) for i in range(count)]
        at += 64 * count
        if raw[at] & 0x80:  # a versioned message: its version byte first
            at += 1
        required = raw[at]
        keys, at = _short_vec(raw, at + 3)  # after the header's three counts
        if signature not in signatures or len(raw) < at + 32 * keys:
            return None
        index = signatures.index(signature)
        if index >= min(required, keys):
            return None
        return _base58(raw[at + 32 * index : at + 32 * (index + 1)])
    except (binascii.Error, ValueError, IndexError):
        return None


def _short_vec(raw: bytes, at: int) -> tuple[int, int]:
    """A compact-u16 length at `at`: its value and the offset after it."""
    value = 0
    for shift in (0, 7, 14):
        byte = raw[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
    raise ValueError("a compact-u16 longer than three bytes")


def _base58(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    text = ""
    while number:
        number, digit = divmod(number, 58)
        text = _ALPHABET[digit] + text
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + text
