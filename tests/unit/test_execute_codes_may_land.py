"""Which swap execute codes leave the transaction's fate open (docs: ultra/response.mdx,
swap/order-and-execute.mdx; the RFQ maker sends its own fills)."""

from __future__ import annotations

import pytest

from jupcron.api.models import ExecuteResult


@pytest.mark.parametrize("operation", ["execute_ultra", "execute_swap"])
@pytest.mark.parametrize(("code", "open_"), [(-2003, True), (-1006, True), (-2005, True),
                                             (-2004, False), (-1005, False), (-1002, False)])  # fmt: skip
def test_codes_after_which_the_transaction_may_still_land(
    operation: str, code: int, open_: bool
) -> None:
    result = ExecuteResult.model_validate(
        {"operation": operation, "status": "Failed", "code": code, "error": "x"}
    )
    assert result.may_have_landed is open_
    assert result.retry_with_fresh_order is (not open_ and code in (-2004,))
