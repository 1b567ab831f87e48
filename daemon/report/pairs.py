"""A plan's report rows, one per wallet and (input mint, output mint) pair it traded:
amounts are only ever added within one wallet and one pair. A plan edited to trade
another pair (buy JUP instead of SOL), or a batch cancel of orders in different pairs,
gets a row for each pair; a plan moved to another wallet gets a row for each wallet
(a fill is the money of the wallet its run was signed by, `runs.wallet`, never of
the wallet the plan names now); a plan that traded one pair with one wallet keeps
exactly one row, as does a plan that has not traded yet (its current wallet and pair,
from the stored plan).

Each row carries the plan's facts (kind, price quote), its wallet, and the plan's
``runs`` of that wallet by status — all of them, on every row of the plan and wallet:
a run's pair is not always one pair (a batch cancel closes orders in several), so
runs are counted per plan and wallet, and those rows show the same counts. Everything
else on a row is its own: fills, spent, received, refunded, Jupiter's fees, the
network fees of its runs (a run that recorded no pair pays into the row of the plan's
current pair, of the run's wallet) and every price built on them.

``wallet`` (`jupcron report --wallet NAME`): only the rows of that wallet."""

from __future__ import annotations

from dataclasses import replace

from jupcron.report.plan import PlanReport

Pair = tuple[str | None, str | None]
Key = tuple[str, str | None, str | None]  # (wallet, input mint, output mint)


class PairRows:
    """The rows being built: each plan's template (its facts, its current wallet and
    pair), the runs per plan and wallet, and the rows by wallet and pair."""

    def __init__(self, plans: dict[str, PlanReport], wallet: str | None = None) -> None:
        self.plans = plans
        self.wallet = wallet
        self._rows: dict[str, dict[Key, PlanReport]] = {name: {} for name in plans}
        self._runs: dict[str, dict[str, dict[str, int]]] = {name: {} for name in plans}

    def count_run(self, name: str, wallet: str | None, status: str) -> None:
        """One run of plan `name` for `wallet` (None: the plan's current wallet)."""
        runs = self._runs[name].setdefault(self._wallet(name, wallet), {})
        runs[status] = runs.get(status, 0) + 1

    def _wallet(self, name: str, wallet: str | None) -> str:
        return self.plans[name].wallet if wallet is None else wallet

    def of(
        self, name: str, input_mint: str | None, output_mint: str | None,
        wallet: str | None = None,
    ) -> PlanReport:  # fmt: skip
        """The row of this plan (one in the report), wallet (None: the plan's current
        one) and pair, made on first use; no pair known: the plan's current pair."""
        plan = self.plans[name]
        pair = (input_mint, output_mint)
        if input_mint is None and output_mint is None:
            pair = (plan.input_mint, plan.output_mint)
        key = (self._wallet(name, wallet), *pair)
        rows = self._rows[name]
        row = rows.get(key)
        if row is None:
            row = rows[key] = replace(
                plan, wallet=key[0], input_mint=pair[0], output_mint=pair[1], fills=[],
                fees={}, runs={},
            )  # fmt: skip
        return row

    def known(
        self, name: str, input_mint: str | None, output_mint: str | None,
        wallet: str | None = None,
    ) -> PlanReport | None:  # fmt: skip
        """The row of this wallet and pair if the plan has one, else the wallet's main
        row (`main`)."""
        rows = self._rows.get(name)
        if rows is None:
            return None
        found = rows.get((self._wallet(name, wallet), input_mint, output_mint))
        return found if found is not None else self.main(name, wallet)

    def main(self, name: str, wallet: str | None = None) -> PlanReport | None:
        """The row of the wallet (None: the plan's current one) and the plan's current
        pair, else the wallet's first row, else a new row of its current pair."""
        plan, rows = self.plans.get(name), self._rows.get(name)
        if plan is None or rows is None:
            return None
        own = self._wallet(name, wallet)
        current = rows.get((own, plan.input_mint, plan.output_mint))
        if current is not None:
            return current
        first = next((row for key, row in rows.items() if key[0] == own), None)
        return first or self.of(name, None, None, own)

    def rows(self) -> list[PlanReport]:
        """By plan name; a plan's current wallet first, and in each wallet its current
        pair first, then the others in the order they first traded; a wallet that ran
        but traded nothing: a row of the plan's current pair (its runs); a plan without
        any: its template (no figures). With `wallet`, that wallet's rows only (a plan
        naming it now that has none of them: its template)."""
        out: list[PlanReport] = []
        for name, plan in self.plans.items():
            for wallet in self._runs[name]:
                self.main(name, wallet)  # its runs are shown on a row of that wallet
            rows = self._rows[name]
            if not rows:
                if self.wallet in (None, plan.wallet):
                    out.append(plan)
                continue
            seen = {wallet: index for index, wallet in enumerate(dict.fromkeys(k[0] for k in rows))}
            current = (plan.input_mint, plan.output_mint)
            ordered = sorted(rows.items(), key=lambda item: (
                item[0][0] != plan.wallet, seen[item[0][0]], item[0][1:] != current))  # fmt: skip
            wallets = len(seen)
            shown = [(key, row) for key, row in ordered if self.wallet in (None, key[0])]
            for key, row in shown:
                row.pairs = sum(1 for other in rows if other[0] == key[0])
                row.wallets = wallets
                row.runs = dict(self._runs[name].get(key[0], {}))
                out.append(row)
            if not shown and self.wallet == plan.wallet:  # moved here, not run here yet
                out.append(plan)
        return out
