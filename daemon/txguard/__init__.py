"""txguard: decode a transaction and refuse to sign what was not asked for.

See DESIGN §4. `inspect` gives a `Verdict`; `check` raises
`GuardRejectedError` with the reasons; `check_and_sign` signs only what passes.
"""

from __future__ import annotations

from jupcron.txguard.decode import NotATransactionError, TxSummary
from jupcron.txguard.guard import check, check_and_sign, inspect
from jupcron.txguard.policy import GuardPolicy, Verdict

__all__ = [
    "GuardPolicy",
    "NotATransactionError",
    "TxSummary",
    "Verdict",
    "check",
    "check_and_sign",
    "inspect",
]
