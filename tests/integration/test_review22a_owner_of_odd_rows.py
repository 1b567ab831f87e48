"""`jupcron db upgrade` over runs stored before 0013_run_owner whose signed bytes are
odd (review 22a): not base64, truncated, a legacy message, a v0 message with address
lookup tables, two signers, our signature recorded but absent. No crash, and no run
given a key that is not the one our own ``signed`` event says we signed with (a wrong
key escapes or double counts a `safety.caps` budget). Real solders transactions, on a
real SQLite file and the PostgreSQL fixture."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from jupcron.store import migrate
from tests.integration.test_caps_follow_the_keypair import BEFORE_OWNER

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def _legacy(signers: list[Keypair], sign: list[Keypair]) -> VersionedTransaction:
    """A legacy message with `signers` (the first pays), the `sign` ones signed, the
    others' slots left as an order leaves them (the default signature)."""
    moves = [transfer(TransferParams(from_pubkey=k.pubkey(), to_pubkey=signers[0].pubkey(),
                                     lamports=1)) for k in signers[1:]]  # fmt: skip
    if not moves:
        moves = [transfer(TransferParams(from_pubkey=signers[0].pubkey(),
                                         to_pubkey=Pubkey.new_unique(), lamports=1))]  # fmt: skip
    message = Message.new_with_blockhash(moves, signers[0].pubkey(), Hash.default())
    return _signed(
        VersionedTransaction.populate(message, [Signature.default()] * len(signers)), sign
    )


def _v0_with_lookup(payer: Keypair) -> VersionedTransaction:
    """A v0 message whose accounts come partly from an address lookup table."""
    table_keys = [Pubkey.new_unique() for _ in range(3)]
    table = AddressLookupTableAccount(key=Pubkey.new_unique(), addresses=table_keys)
    program = Pubkey.new_unique()
    call = Instruction(program, b"\x01",
                       [AccountMeta(payer.pubkey(), True, True),
                        *(AccountMeta(k, False, True) for k in table_keys)])  # fmt: skip
    message = MessageV0.try_compile(payer.pubkey(), [call], [table], Hash.default())
    assert message.address_table_lookups  # the keys really come from the table
    return VersionedTransaction(message, [payer])


def _signed(tx: VersionedTransaction, sign: list[Keypair]) -> VersionedTransaction:
    keys = list(tx.message.account_keys)
    signatures = list(tx.signatures)
    body = to_bytes_versioned(tx.message)
    for k in sign:
        signatures[keys.index(k.pubkey())] = k.sign_message(body)
    return VersionedTransaction.populate(tx.message, signatures)


def _b64(tx: VersionedTransaction) -> str:
    return base64.b64encode(bytes(tx)).decode("ascii")


def _at_0012(url: str) -> sa.Engine:
    migrate.downgrade(url, BEFORE_OWNER)
    return sa.create_engine(url)


def _plan(conn: sa.Connection) -> int:
    row = conn.execute(
        sa.text(
            "INSERT INTO plans (name, kind, schedule, request, settings, enabled, version, "
            "created_at, updated_at, content_hash, wallet) VALUES ('p', 'swap', '{}', '{}', "
            "'{}', :t, 1, :now, :now, 'h', 'default') RETURNING id"
        ),
        {"now": NOW, "t": True},
    )
    return int(row.scalar_one())


def _run(conn: sa.Connection, plan: int, n: int, signed_tx: str | None,
         signature: str | None, recorded: str | None) -> int:  # fmt: skip
    """A succeeded run as 0012 stored it: `signature` in runs.signature (what a settled
    run holds: the transaction's id), `recorded` in its ``signed`` event (ours)."""
    run_id = int(conn.execute(sa.text(
        "INSERT INTO runs (plan_id, plan_version, scheduled_for, status, trigger, attempts, "
        "created_at, updated_at, finished_at, wallet, signed_tx, signature, input_mint, "
        "in_amount) VALUES (:p, 1, :slot, 'succeeded', 'schedule', 1, :now, :now, :now, "
        "'default', :tx, :sig, 'So11111111111111111111111111111111111111112', '5000000') "
        "RETURNING id"),
        {"p": plan, "slot": NOW + timedelta(hours=n), "now": NOW, "tx": signed_tx,
         "sig": signature}).scalar_one())  # fmt: skip
    if recorded is not None:
        events = sa.table("run_events", sa.column("run_id"), sa.column("at"),
                          sa.column("step"), sa.column("detail", sa.JSON))  # fmt: skip
        conn.execute(events.insert(), {"run_id": run_id, "at": NOW, "step": "signed",
                                       "detail": {"signature": recorded}})  # fmt: skip
    return run_id


def _owners(url: str) -> dict[int, str | None]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id, owner FROM runs")).all()
    finally:
        engine.dispose()
    return {int(i): o for i, o in rows}


def test_odd_stored_transactions_give_only_our_key_or_none(db_url: str) -> None:
    ours, maker, stranger = Keypair(), Keypair(), Keypair()
    engine = _at_0012(db_url)
    single = _legacy([ours], [ours])
    rfq = _legacy([maker, ours], [ours])  # the maker's slot as the order left it
    both = _legacy([maker, ours], [maker, ours])  # the maker's signature there too
    v0 = _v0_with_lookup(ours)
    mine = {
        "single": str(single.signatures[0]), "rfq": str(rfq.signatures[1]),
        "both": str(both.signatures[1]), "v0": str(v0.signatures[0]),
    }  # fmt: skip
    truncated = _b64(single)[: len(_b64(single)) // 2]
    cases: dict[str, tuple[str | None, str | None, str | None, str | None]] = {
        # name: signed_tx, runs.signature, the signed event's signature, owner wanted
        "single": (_b64(single), mine["single"], mine["single"], str(ours.pubkey())),
        "rfq": (_b64(rfq), str(both.signatures[0]), mine["rfq"], str(ours.pubkey())),
        "both": (_b64(both), str(both.signatures[0]), mine["both"], str(ours.pubkey())),
        "v0": (_b64(v0), mine["v0"], mine["v0"], str(ours.pubkey())),
        "not_base64": ("%%% not base64 %%%", mine["single"], mine["single"], None),
        "non_ascii": ("é" * 12, mine["single"], mine["single"], None),
        "truncated": (truncated, mine["single"], mine["single"], None),
        "empty": ("", mine["single"], mine["single"], None),
        # a stranger's transaction whose only signature is not one we recorded
        "not_ours": (_b64(_legacy([stranger], [stranger])), None, mine["single"], None),
        # no event recorded (every signing records one): 0014's fill by runs.signature
        # (ours: the run paid its own fee) is kept
        "no_event": (_b64(single), mine["single"], None, str(ours.pubkey())),
    }
    ids: dict[str, int] = {}
    with engine.begin() as conn:
        plan = _plan(conn)
        for n, (name, (tx, signature, recorded, _)) in enumerate(cases.items()):
            ids[name] = _run(conn, plan, n, tx, signature, recorded)
    engine.dispose()

    migrate.upgrade(db_url)

    owners = _owners(db_url)
    got = {name: owners[ids[name]] for name in cases}
    assert got == {name: case[3] for name, case in cases.items()}


@pytest.mark.parametrize("claimed", ["ours", "someone_else"])
def test_an_owner_a_claim_wrote_is_left_as_it_is(db_url: str, claimed: str) -> None:
    """At 0014, a run whose owner its claim wrote: the upgrade keeps it, even when the
    key that signed (a recovery under another key of its name) is not that owner."""
    ours, other = Keypair(), Keypair()
    tx = _legacy([ours], [ours])
    engine = sa.create_engine(db_url)
    migrate.downgrade(db_url, "0014_run_owner_fill")
    with engine.begin() as conn:
        plan = _plan(conn)
        run_id = _run(conn, plan, 0, _b64(tx), str(tx.signatures[0]), str(tx.signatures[0]))
        owner = str((ours if claimed == "ours" else other).pubkey())
        conn.execute(sa.text("UPDATE runs SET owner = :o WHERE id = :id"),
                     {"o": owner, "id": run_id})  # fmt: skip
    engine.dispose()

    migrate.upgrade(db_url)

    assert _owners(db_url)[run_id] == owner
