"""`jupcron report`'s network and priority fees are decoded from each landed run's
signed transaction and kept decoded (`report.build.fees_paid`), as the status page
builds its report every few seconds. They were kept per run id, in a module-wide
dict that nothing ever emptied: a daemon that runs for months held one entry per
landed run it ever showed, and a process that reads two stores (their run ids both
start at 1) showed the first store's fee for the second's run. What is kept must be
bounded, and an answer must be the fee of the transaction asked about."""

from __future__ import annotations

import base64

from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.transaction import VersionedTransaction

from jupcron.report import build as report_build
from jupcron.report.build import fees_paid
from tests.fixtures.wallet import budget


def _signed(price: int, limit: int = 200_000) -> str:
    """A transaction our wallet signed as its fee payer, at this compute unit price."""
    me = Keypair()
    message = MessageV0.try_compile(me.pubkey(), budget(limit, price), [], Hash.new_unique())
    return base64.b64encode(bytes(VersionedTransaction(message, [me]))).decode("ascii")


def test_the_same_run_id_in_another_store_gets_its_own_fee() -> None:
    cheap, dear = _signed(price=1_000_000), _signed(price=5_000_000)
    assert fees_paid(cheap) == (5_000, 200_000)  # run 1 of one store
    # run 1 of another store (a second database read by the same process): before the
    # fix, `fees_paid(dear, 1)` answered (5000, 200000), the first store's run 1's fee
    assert fees_paid(dear) == (5_000, 1_000_000)


def test_what_is_kept_decoded_stays_bounded() -> None:
    base = _signed(price=1_000)
    shown = report_build.FEES_KEPT + 500  # months of landed runs shown by one daemon
    for index in range(shown):  # each its own transaction (the text is what is kept by)
        fees_paid(base + "A" * (index % 7) + str(index))  # unreadable: None, kept too
    kept = len(report_build._FEES)
    assert kept <= report_build.FEES_KEPT, f"{kept} decoded fees kept for {shown} landed runs"
    assert fees_paid(base) == (5_000, 200)  # a readable one still decoded right
