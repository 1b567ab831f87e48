"""Accounts loaded from several address lookup tables are named as the runtime
orders them.

A v0 message's accounts are its static keys, then the *writable* entries of every
lookup table (table by table), then the *read-only* entries of every table
(solana-message `LoadedAddresses`: ``writable`` and ``readonly`` each gathered over
all the lookups). The decoder labelled them table by table (each table's writable
then its read-only entries), so with two tables or more (most genuine Jupiter
swaps load three or four) an instruction's account was shown as another table
entry than the one the runtime loads: `jupcron tx inspect`, the guard's reasons
and the run's events named the wrong account, a read-only entry for a writable
one.
"""

from __future__ import annotations

import base64

from solders.hash import Hash
from solders.instruction import CompiledInstruction
from solders.message import MessageAddressTableLookup, MessageHeader, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from jupcron.txguard import GuardPolicy, inspect
from tests.fixtures.wallet import SYSTEM, new_key


def _transfer_to_second_tables_writable_entry(me: Pubkey, t1: Pubkey, t2: Pubkey) -> str:
    header = MessageHeader(1, 0, 1)
    lookups = [MessageAddressTableLookup(t, bytes([0]), bytes([1])) for t in (t1, t2)]
    # accounts: 0 me, 1 System, then t1 w[0], t2 w[0], then t1 r[1], t2 r[1]
    data = (2).to_bytes(4, "little") + (1_000).to_bytes(8, "little")
    ix = CompiledInstruction(1, data, bytes([0, 3]))
    message = MessageV0(header, [me, SYSTEM], Hash.default(), [ix], lookups)
    tx = VersionedTransaction.populate(message, [Signature.default()])
    return base64.b64encode(bytes(tx)).decode()


def test_the_second_tables_writable_entry_is_named_as_the_runtime_loads_it() -> None:
    me, t1, t2 = new_key(), new_key(), new_key()
    verdict = inspect(_transfer_to_second_tables_writable_entry(me, t1, t2), me, GuardPolicy())
    (ix,) = verdict.summary.instructions
    assert ix.role["to"] == f"lookup:{t2}[0]", ix.role
    assert any(f"lookup:{t2}[0]" in r for r in verdict.reasons), verdict.reasons
