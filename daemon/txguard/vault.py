"""Trigger V2: the vault, the one stranger a deposit may pay, and only so.

A Trigger V2 order is funded by a deposit from our wallet into the wallet's
custodial vault (docs/products.md). So for a deposit (plans ``trigger-v2-dca``
and ``trigger-v2-order``) the vault's token accounts for the plan's input mint
count as ours, where the transaction itself proves them the vault's: the
vault's associated token account of the mint, or an account the transaction
initialises with the vault as owner. Everything else the deposit pays stays
refused by the value rules; `trigger_v2` then holds the deposit to the plan:

- the vault is the one ``GET /vault`` named, and the craft's ``receiverAddress``;
  the craft's mint and amount are the plan's;
- what goes into the vault's accounts is the plan's input mint, at most the
  plan's amount (native SOL: its lamports, besides the accounts' rent), and more
  than nothing;
- the rent our wallet pays for the vault's accounts is each one's exact rent, of a
  token account's size (`ours.token_account_space`), and all of it together at most
  `guard.order_rent_allowance_lamports`;
- only the programs the flow legitimately uses, each named below with why.

A withdrawal (the cancel, ``trigger-v2-cancel``) moves the vault's funds: an
instruction with the vault as authority acts for us (`acts_for_vault`), so the
value rules hold it as they hold our own: it may pay only our accounts. The
vault's own lamports likewise (`_vault_pays`, either flow): a System instruction
may use the vault only to pay its own proven accounts or our wallet, and the ATA
program may charge it only for its own token account or ours.

Co-signers: the vault, and the read-only co-signer of the docs' one withdrawal
example, may be required besides our wallet (a co-signer cannot move anything
of ours: the value rules apply whoever else signs). Any other is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from jupcron.txguard.decode import Instruction, TxSummary
from jupcron.txguard.expect import Expectation
from jupcron.txguard.instructions import (
    ASSOCIATED_TOKEN,
    COMPUTE_BUDGET,
    SYSTEM,
    TOKEN,
    TOKEN_2022,
    TOKEN_PROGRAMS,
    WRAPPED_SOL,
)
from jupcron.txguard.ours import (
    KNOWN_MINT_PROGRAMS,
    TOKEN_2022_ACCOUNT_MAX_SPACE,
    Ours,
    ata,
    rent_exempt,
    token_account_space,
)

DEPOSIT_KINDS = frozenset({"trigger-v2-dca", "trigger-v2-order"})
WITHDRAW_KINDS = frozenset({"trigger-v2-cancel"})
KINDS = DEPOSIT_KINDS | WITHDRAW_KINDS
# the read-only co-signer of the docs' withdrawal example (openapi-spec/trigger/v2/
# trigger.yaml, the 200 answer of POST /orders/dca/cancel/{id}); its role is not documented
DOCUMENTED_COSIGNER = "trfb53BmkHNeoqaa3REgqnrbwUZqAFYdjTkivkJ6aWg"

# The programs each flow may call, and why (docs/products.md, "The programs ...").
DEPOSIT_PROGRAMS: dict[str, str] = {
    COMPUTE_BUDGET: "every Jupiter transaction sets its compute budget",
    SYSTEM: "native SOL is wrapped (lamports into the vault's account) and the vault's "
    "per-order account may be created with our rent (trigger/deposit.mdx)",
    TOKEN: "the deposit moves tokens from our wallet into the vault (trigger/deposit.mdx)",
    TOKEN_2022: "Token-2022 input mints are supported (trigger/index.mdx)",
    ASSOCIATED_TOKEN: "the vault's token account may be its associated one, created here",
}
WITHDRAW_PROGRAMS: dict[str, str] = {
    COMPUTE_BUDGET: "the documented withdrawal sets its compute budget",
    TOKEN: "the documented withdrawal: Transfer from the vault's account to ours, "
    "CloseAccount with its rent to us (openapi-spec/trigger/v2/trigger.yaml)",
    TOKEN_2022: "the same for a Token-2022 input mint (trigger/index.mdx)",
}


def cosigners(expect: Expectation | None) -> frozenset[str]:
    """Who may be required to sign besides our wallet, for this plan's transaction."""
    if expect is None or expect.kind not in KINDS or not expect.vault:
        return frozenset()
    return frozenset({expect.vault, DOCUMENTED_COSIGNER})


def acts_for_vault(ix: Instruction, expect: Expectation | None) -> bool:
    """A token instruction the vault authorises: in a Trigger V2 transaction, the
    vault's funds are ours in custody, held to the same rules."""
    vault = expect.vault if expect is not None and expect.kind in KINDS else None
    return bool(vault) and (ix.role.get("authority") == vault or vault in ix.cosigners)


def _owner(ix: Instruction) -> str | None:
    return ix.role.get("owner") or dict(ix.fields).get("owner")


def vault_accounts(summary: TxSummary, expect: Expectation) -> tuple[set[str], set[str]]:
    """(the vault's accounts of the input mint this transaction proves, those it creates)."""
    vault, mint = expect.vault or "", expect.input_mint or ""
    programs = [KNOWN_MINT_PROGRAMS[mint]] if mint in KNOWN_MINT_PROGRAMS else list(TOKEN_PROGRAMS)
    found = {a for p in programs if (a := ata(vault, mint, p)) is not None}
    created: set[str] = set()
    for ix in summary.instructions:
        if ix.program in TOKEN_PROGRAMS and ix.name.startswith("initialize_account"):
            account = ix.role.get("account")
            if account and _owner(ix) == vault and ix.role.get("mint") == mint:
                found.add(account)
                created.add(account)
        elif ix.program == ASSOCIATED_TOKEN and ix.name in ("create", "create_idempotent"):
            role = ix.role
            if role.get("wallet") == vault and role.get("account") in found:
                created.add(role["account"])
    return found, created


def created_for_vault(summary: TxSummary, expect: Expectation | None) -> set[str]:
    """For a deposit, the vault's accounts of the input mint this transaction creates
    (so proven of the plan's input mint); nothing for any other plan."""
    if expect is None or expect.kind not in DEPOSIT_KINDS or not expect.vault:
        return set()
    return vault_accounts(summary, expect)[1] if expect.input_mint else set()


def deposit_accounts(summary: TxSummary, expect: Expectation | None) -> set[str]:
    """For a deposit, the vault's accounts of the input mint this transaction proves
    (what goes into them is the deposit, `_deposit`'s to hold); nothing otherwise."""
    if expect is None or expect.kind not in DEPOSIT_KINDS or not expect.vault:
        return set()
    return vault_accounts(summary, expect)[0] if expect.input_mint else set()


def extend(ours: Ours, summary: TxSummary, expect: Expectation | None) -> Ours:
    """`ours` plus, for a deposit, the vault's proven accounts of the input mint."""
    if expect is None or expect.kind not in DEPOSIT_KINDS or not expect.vault:
        return ours
    if not expect.input_mint:
        return ours
    found, created = vault_accounts(summary, expect)
    return replace(
        ours,
        tokens=ours.tokens | found,
        lamports=ours.lamports | found,
        created=ours.created | created,
        receiver=ours.receiver | {expect.vault},
    )


@dataclass
class _Into:
    """What our wallet's instructions put into the vault's accounts: tokens, lamports
    besides rent, the rent of the accounts created for it, and what cannot be counted."""

    tokens: int = 0
    lamports: int = 0
    rent: int = 0
    reasons: list[str] = field(default_factory=list)


def _into_vault(summary: TxSummary, vault: set[str], wallet: str, mint: str) -> _Into:
    """What goes into the vault's accounts (`_Into`). The rent of an account created
    here is its exact rent-exempt minimum, at most that of a token account
    (`token_account_space`); an account any larger is refused, never counted."""
    into = _Into()
    ours_source = {a for p in TOKEN_PROGRAMS if (a := ata(wallet, mint, p)) is not None}
    for ix in summary.instructions:
        role, fields, where = ix.role, dict(ix.fields), f"instruction #{ix.index}: {ix.title}"
        if ix.program == SYSTEM and role.get("to") in vault:
            amount, space = fields.get("lamports", ""), fields.get("space", "")
            if not amount.isdigit():
                into.reasons.append(f"{where} moves an amount of lamports that cannot be read")
                continue
            rent = 0
            if ix.name.startswith("create_account"):
                largest = token_account_space(fields.get("owner", ""))
                if largest is None:
                    owner = fields.get("owner")
                    into.reasons.append(
                        f"{where} creates a vault account for {owner}, not a token program"
                    )
                    continue
                if not space.isdigit() or int(space) > largest:
                    into.reasons.append(
                        f"{where} creates a vault account of {space or '?'} bytes; a token "
                        f"account takes at most {largest}"
                    )
                    continue
                rent = min(int(amount), rent_exempt(int(space)))
            into.rent += rent
            into.lamports += int(amount) - rent
        elif ix.program == ASSOCIATED_TOKEN and ix.name in ("create", "create_idempotent"):
            if role.get("funder") == wallet and role.get("account") in vault:
                largest = token_account_space(role.get("token_program", ""))
                into.rent += rent_exempt(largest or TOKEN_2022_ACCOUNT_MAX_SPACE)
        elif ix.program in TOKEN_PROGRAMS and role.get("destination") in vault:
            amount = fields.get("amount", "")
            given = role.get("mint")
            if given is not None and given != mint:
                into.reasons.append(
                    f"{where} moves {given} into the vault; the plan's mint is {mint}"
                )
            elif given is None and role.get("source") not in ours_source:
                into.reasons.append(
                    f"{where} moves tokens whose mint cannot be told into the vault"
                )
            if not amount.isdigit():
                into.reasons.append(f"{where} moves an amount that cannot be read")
            else:
                into.tokens += int(amount)
    return into


def _deposit(summary: TxSummary, expect: Expectation, wallet: str, rent: int) -> list[str]:
    reasons: list[str] = []
    vault, mint, amount = expect.vault or "", expect.input_mint or "", expect.amount or 0
    receiver, said_mint, said_amount = expect.deposit or ("", "", "")
    if receiver != vault:
        reasons.append(
            f"the deposit's receiverAddress {receiver} is not our vault {vault} (GET /vault)"
        )
    if said_mint != mint or said_amount != str(amount):
        reasons.append(
            f"the deposit is for {said_amount} of {said_mint}; the plan: {amount} of {mint}"
        )
    found, _ = vault_accounts(summary, expect)
    into = _into_vault(summary, found, wallet, mint)
    tokens, lamports, problems = into.tokens, into.lamports, into.reasons
    reasons += problems
    if into.rent > rent:
        reasons.append(
            f"the deposit has our wallet pay {into.rent} lamports of rent for the vault's "
            f"accounts, more than guard.order_rent_allowance_lamports ({rent})"
        )
    native = mint == WRAPPED_SOL
    # every form of the asset together: native SOL goes in as lamports and as wrapped
    # SOL alike, so the two are one total, held to the plan's amount
    total = tokens + (lamports if native else 0)
    if total <= 0 and not problems:
        reasons.append("the deposit moves nothing into the vault")
    if total > amount:
        forms = " (lamports and wrapped SOL together)" if native else ""
        reasons.append(
            f"the deposit moves {total} of {mint} into the vault{forms}; the plan: {amount}"
        )
    if not native and lamports > 0:
        reasons.append(
            f"the deposit moves {lamports} lamports into the vault's accounts beyond their "
            f"rent, for a plan that deposits {mint}, not SOL"
        )
    return reasons


# the System instructions that only pay lamports out of their `from` account
_PAYS = frozenset({"transfer", "create_account", "create_account_with_seed",
                   "create_account_allow_prefund"})  # fmt: skip


def _vault_pays(summary: TxSummary, expect: Expectation, wallet: str) -> list[str]:
    """The vault's own account, held as ours: the vault may co-sign, so what it pays
    or becomes our signature authorises too. A System instruction may use the vault
    only to pay lamports to its own proven accounts or to our wallet (never to change
    its owner or size, nor pay anyone else); the ATA program may charge it only for
    its own token account or ours. Payments *to* the vault are the value rules'."""
    vault = expect.vault or ""
    own = {wallet}
    if expect.kind in DEPOSIT_KINDS and expect.input_mint:
        own |= vault_accounts(summary, expect)[0]
    reasons = []
    for ix in summary.instructions:
        where = f"instruction #{ix.index}: {ix.title}"
        if ix.program == SYSTEM:
            used = {name for name, account in ix.roles if account == vault} - {"to"}
            if vault in ix.accounts and not ix.roles:
                used = {"?"}  # malformed: what it does with the vault cannot be told
            if not used:
                continue
            pays_own = ix.name in _PAYS and used == {"from"} and ix.role.get("to") in own
            if not pays_own:
                reasons.append(
                    f"{where} uses the vault {vault} (as {', '.join(sorted(used))}): the "
                    "vault's own lamports and account are ours in custody, and this moves "
                    "them to, or changes them for, someone else"
                )
        elif ix.program == ASSOCIATED_TOKEN and ix.role.get("funder") == vault:
            owner = ix.role.get("wallet", "?")
            if owner not in (vault, wallet):
                reasons.append(
                    f"{where} has the vault {vault} pay the rent of a token account for "
                    f"{owner}, which is not ours"
                )
    return reasons


def trigger_v2(summary: TxSummary, expect: Expectation | None, wallet: str, rent: int) -> list[str]:
    """The Trigger V2 rules for a plan of a Trigger V2 kind (nothing for other kinds)."""
    if expect is None or expect.kind not in KINDS:
        return []
    if not expect.vault:
        return ["the vault is not known (GET /vault), so nothing may go to or come from it"]
    allowed = DEPOSIT_PROGRAMS if expect.kind in DEPOSIT_KINDS else WITHDRAW_PROGRAMS
    flow = "deposit" if expect.kind in DEPOSIT_KINDS else "withdrawal"
    reasons = [
        f"instruction #{ix.index} calls {ix.program_name or ix.program}, which a Trigger V2 "
        f"{flow} does not use"
        for ix in summary.instructions
        if ix.program not in allowed
    ]
    reasons += _vault_pays(summary, expect, wallet)
    if expect.kind in DEPOSIT_KINDS:
        reasons += _deposit(summary, expect, wallet, rent)
    return reasons
