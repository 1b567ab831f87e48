"""What a rule knows besides the transaction: whose wallet, which accounts are
ours, the policy, and what the plan asked for."""

from __future__ import annotations

from dataclasses import dataclass

from jupcron.txguard import vault
from jupcron.txguard.decode import Instruction
from jupcron.txguard.expect import Expectation
from jupcron.txguard.ours import Ours
from jupcron.txguard.policy import GuardPolicy


@dataclass(frozen=True)
class Context:
    wallet: str
    ours: Ours
    policy: GuardPolicy
    gasless: bool  # the API marked this swap gasless/RFQ
    expect: Expectation | None = None  # what the plan asked for, when there is a plan

    @property
    def relaxed(self) -> bool:
        """Fee payer and extra signers may be Jupiter's: a gasless swap, if allowed."""
        return self.gasless and self.policy.allow_gasless

    def is_ours(self, address: str) -> bool:
        return self.ours.has(address)

    def acts_for_us(self, ix: Instruction) -> bool:
        """Our signature authorises this token instruction: the wallet is its
        authority, or one of the signers of a multisig authority."""
        if ix.role.get("authority") == self.wallet or self.wallet in ix.cosigners:
            return True
        return vault.acts_for_vault(ix, self.expect)  # Trigger V2: our funds in custody
