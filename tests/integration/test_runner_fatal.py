"""A refused API key is a FatalError: it leaves the runner (the daemon stops on it)
instead of ending as one failed run; the run row keeps its last stored state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jupcron.emulator import Emulator
from jupcron.errors import ApiAuthError, FatalError
from jupcron.store.types import RunStatus
from tests.fixtures.runner import RigFactory

SLOT = (datetime.now(UTC) + timedelta(days=1)).replace(hour=8, minute=0, second=0, microsecond=0)


@pytest.mark.parametrize("balance_check", [False, True])
def test_a_refused_key_is_raised_not_recorded_as_a_failed_run(
    make_rig: RigFactory, balance_check: bool
) -> None:
    rig = make_rig(
        emulator=Emulator(seed=3, api_key="the-right-key"),
        safety={"balance_check": balance_check},
    )
    plan = rig.plan("swap")
    with pytest.raises(ApiAuthError) as refused:
        rig.runner().fire(plan, SLOT)
    assert isinstance(refused.value, FatalError)
    assert refused.value.http_status == 401
    (run_id,) = rig.run_ids()
    run = rig.run(run_id)
    assert run.status is RunStatus.PENDING  # nothing ordered: recovery carries it on
    assert rig.steps(run_id) == ["claimed", "attempt"]  # the refused attempt is booked
    assert rig.issued() == 0
