"""The status page's card of a plan moved to another wallet that has not run it yet:
its figures are the wallet's own (none yet), never the earlier wallet's figures shown
under the new wallet's name. The earlier wallet's row is listed among the others, led
by its name, as for a plan that has run with both. Real runs over loopback to the
emulator, signed by two real keypairs, on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime

from jupcron.domain import RunStatus
from jupcron.web.views import ReportCache, plans_view
from tests.fixtures.runner import RigFactory, outcome_of
from tests.integration.test_report_wallet_of_each_run import SLOT, move
from tests.integration.test_wallets_runs import two_wallets


def test_the_card_of_a_plan_moved_to_a_wallet_that_has_not_run_it(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(loopback=True)
    _, _, wallets = two_wallets(rig)
    first = outcome_of(rig.runner(wallets=wallets).fire(rig.plan("swap", name="weekly"), SLOT))
    assert first.status is RunStatus.SUCCEEDED
    move(rig, "weekly", "savings")
    with rig.factory() as session:
        (card,) = plans_view(session, ReportCache(), datetime.now(UTC))["plans"]
    money, text = card["money"], card["text"]
    assert text["wallet"] == "savings"
    assert (money["wallet"], money["fills"], money["spent"]) == ("savings", 0, "0"), (
        f"the card under wallet savings shows wallet {money['wallet']}'s figures: "
        f"spent {text['spent']}, {money['fills']} fill(s)"
    )
    (other,) = money["other_pairs"]
    assert (other["wallet"], other["fills"]) == ("default", 1)
    assert other["spent"] == str(rig.run(first.run_id).in_amount)
    assert text["other_pairs"].startswith("[default] ")
    assert card["chart"] is None  # the chart is the card's own figures' (none yet)
