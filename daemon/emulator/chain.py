"""The emulator's view of the chain, for its JSON-RPC: accounts in their real
layouts, derived from the ledger, and `simulateTransaction` for what it issued.

Accounts: a wallet the ledger knows is a System account holding its SOL; its
associated token account (SPL Token) for each mint it holds is a 165-byte
token account with its balance; the mints the emulator trades are 82-byte
SPL Token mints; lookup tables of issued transactions hold their addresses.
SOL is native in the ledger, so a wallet has no standing wSOL account.

Simulation applies an issued order's effect (the fee, the input out, the
output in, a recurring order's escrow rent, a cancel's refund) to those
accounts, exactly as execute would book it. A transaction it did not issue
cannot be simulated; it answers the error a node gives for an unknown program.
An order issued with a hidden drain (fault ``hidden_drain``) also empties the
named token account of the wallet: what a hostile program would do in a CPI.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from solders.message import to_bytes_versioned
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address
from solders.transaction import VersionedTransaction

from jupcron.emulator.common import TOKENS, State, token
from jupcron.emulator.ledger import SOL_MINT, IssuedOrder, Ledger
from jupcron.txguard.decode import summarize

SYSTEM = "11111111111111111111111111111111"
TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"  # noqa: S105 (a program id)
LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111"
TOKEN_ACCOUNT_RENT = 2_039_280
MINT_RENT = 1_461_600
RECURRING_ESCROW_RENT = 4_200_000  # the DCA account and its two token accounts

Account = dict[str, Any]  # lamports, owner, data (bytes)


def _ata(owner: str, mint: str) -> str:
    return str(
        get_associated_token_address(
            Pubkey.from_string(owner), Pubkey.from_string(mint), Pubkey.from_string(TOKEN)
        )
    )


def _token_account(mint: str, owner: str, amount: int) -> bytes:
    head = bytes(Pubkey.from_string(mint)) + bytes(Pubkey.from_string(owner))
    return head + struct.pack("<Q", amount) + bytes(36) + b"\x01" + bytes(56)


def _mint_account(decimals: int) -> bytes:
    return bytes(36) + struct.pack("<QBB", 10**15, decimals, 1) + bytes(36)


class ChainView:
    """Account states from the ledger, keyed by address."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.accounts: dict[str, Account] = {}
        self.token_accounts: dict[str, tuple[str, str]] = {}  # address -> (owner, mint)
        mints = set(TOKENS)
        for (_owner, mint), _amount in ledger.balances.items():
            mints.add(mint)
        for mint in mints - {SOL_MINT}:
            self.accounts[mint] = {
                "lamports": MINT_RENT,
                "owner": token(mint).program,  # SPL Token, or Token-2022 (PYUSD)
                "data": _mint_account(token(mint).decimals),
            }
        self.accounts[SOL_MINT] = {"lamports": MINT_RENT, "owner": TOKEN, "data": _mint_account(9)}
        for owner in ledger.known_owners:
            self.accounts[owner] = {
                "lamports": ledger.balance(owner, SOL_MINT),
                "owner": SYSTEM,
                "data": b"",
            }
            for (who, mint), amount in ledger.balances.items():
                if who == owner and mint != SOL_MINT:
                    address = _ata(owner, mint)
                    self.token_accounts[address] = (owner, mint)
                    self.accounts[address] = {
                        "lamports": TOKEN_ACCOUNT_RENT,
                        "owner": TOKEN,
                        "data": _token_account(mint, owner, amount),
                    }
        for table, addresses in ledger.lookup_tables.items():
            data = struct.pack("<IQQB", 1, 2**64 - 1, 0, 0) + bytes(35)
            data += b"".join(bytes(Pubkey.from_string(a)) for a in addresses)
            self.accounts[table] = {"lamports": 10**7, "owner": LOOKUP_TABLE_PROGRAM, "data": data}

    def get(self, address: str) -> Account | None:
        return self.accounts.get(address)

    # --- applying an order's effect ----------------------------------------------
    def _sol(self, owner: str, delta: int) -> None:
        self.accounts[owner]["lamports"] += delta

    def _tokens(self, owner: str, mint: str, delta: int) -> None:
        if mint == SOL_MINT:
            self._sol(owner, delta)
            return
        address = _ata(owner, mint)
        if address not in self.accounts:  # created in the transaction, rent from the owner
            self._sol(owner, -TOKEN_ACCOUNT_RENT)
            self.accounts[address] = {
                "lamports": TOKEN_ACCOUNT_RENT,
                "owner": TOKEN,
                "data": _token_account(mint, owner, 0),
            }
        account = self.accounts[address]
        amount = struct.unpack_from("<Q", account["data"], 64)[0] + delta
        account["data"] = _token_account(mint, owner, max(amount, 0))

    def apply(self, order: IssuedOrder, fee: int) -> None:
        owner = order.owner
        self._sol(owner, -fee)
        if order.kind == "trigger_cancel":
            held = self.ledger.trigger_orders.get(order.order or "")
            if held is not None and held.status == "Open":
                self._tokens(owner, held.input_mint, held.left)  # what is left goes back
        elif order.kind == "trigger_cancel_batch":
            for name in order.extra.get("orders") or ():
                batched = self.ledger.trigger_orders.get(name)
                if batched is not None and batched.status == "Open":
                    self._tokens(owner, batched.input_mint, batched.left)
        elif order.kind == "recurring_cancel":
            dca = self.ledger.recurring_orders.get(order.order or "")
            if dca is not None and dca.status == "active":  # the input left, and the rent
                self._tokens(owner, dca.input_mint, dca.in_amount - dca.in_used)
                self._sol(owner, RECURRING_ESCROW_RENT)
        elif order.kind == "trigger_v2_withdraw":  # the vault's remainder back to us
            if not order.hostile and order.input_mint:  # a hostile one pays a stranger
                self._tokens(owner, order.input_mint, order.in_amount)
        elif order.input_mint:
            self._tokens(owner, order.input_mint, -order.in_amount)
            if order.kind == "swap" and order.output_mint:
                self._tokens(owner, order.output_mint, order.out_amount)
            elif order.kind.startswith("recurring"):
                self._sol(owner, -RECURRING_ESCROW_RENT)
        drained = order.extra.get("hidden_drain")
        if drained:
            self._tokens(owner, str(drained), -self.ledger.balance(owner, str(drained)))


def fee_of(tx: VersionedTransaction) -> int:
    """The fee the runtime charges: 5,000 lamports a signature plus the priority fee,
    with the runtime's default compute limit when the message sets none (the rule
    txguard computes too: `jupcron.txguard.decode.compute_budget`)."""
    return summarize(tx, {}).compute_budget.total_fee_lamports


def encode(account: Account | None) -> dict[str, Any] | None:
    if account is None:
        return None
    return {
        "lamports": account["lamports"],
        "owner": account["owner"],
        "data": [base64.b64encode(account["data"]).decode("ascii"), "base64"],
        "executable": False,
        "rentEpoch": 18446744073709551615,
        "space": len(account["data"]),
    }


def _issued_for(ledger: Ledger, tx: VersionedTransaction) -> IssuedOrder | None:
    message = to_bytes_versioned(tx.message)
    for order in ledger.issued.values():
        if order.message == message:
            return order
    return None


def multiple_accounts(state: State, addresses: Sequence[str]) -> dict[str, Any]:
    view = ChainView(state.ledger)
    now, slot = state.clock(), state.ledger.slot
    return {
        "context": {"slot": slot},
        "value": [encode(state.oracle.account(a, now, slot) or view.get(a)) for a in addresses],
    }


def simulate(state: State, tx_b64: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `simulateTransaction` result, or None when the input is not a transaction."""
    try:
        tx = VersionedTransaction.from_bytes(base64.b64decode(tx_b64, validate=True))
    except ValueError:
        return None
    wanted = options.get("accounts") or {}
    addresses = [str(a) for a in wanted.get("addresses") or []]
    slot = {"slot": state.ledger.slot}
    order = _issued_for(state.ledger, tx)
    if order is None:
        err = {"InstructionError": [0, "UnsupportedProgramId"]}
        return {"context": slot, "value": {"err": err, "logs": [], "accounts": None}}
    state.ledger.balance(order.owner, SOL_MINT)  # the wallet's first appearance: its holdings
    view = ChainView(state.ledger)
    # the fee is the fee payer's (account 0): a JupiterZ fill's maker pays it, not us
    payer = str(tx.message.account_keys[0])
    view.apply(order, fee_of(tx) if payer == order.owner else 0)
    logs = [f"Program log: emulator simulated {order.kind} {order.request_id}"]
    value = {
        "err": None,
        "logs": logs,
        "accounts": [encode(view.get(a)) for a in addresses] if addresses else None,
        "unitsConsumed": 120_000,
        "returnData": None,
    }
    return {"context": slot, "value": value}
