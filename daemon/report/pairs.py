"""A plan's report rows, one per (input mint, output mint) pair it traded: amounts
are only ever added within one pair. A plan edited to trade another pair (buy JUP
instead of SOL), or a batch cancel of orders in different pairs, gets a row for each
pair; a plan that traded one pair keeps exactly one row, as does a plan that has not
traded yet (its current pair, from its request).

Each row carries the plan's facts (kind, wallet, price quote) and the plan's ``runs``
by status — all of them, on every row of the plan: a run's pair is not always one
pair (a batch cancel closes orders in several), so runs are counted per plan, and a
plan's rows show the same counts. Everything else on a row is the pair's own: fills,
spent, received, refunded, Jupiter's fees, the network fees of its runs (a run that
recorded no pair pays into the row of the plan's current pair) and every price built
on them."""

from __future__ import annotations

from dataclasses import replace

from jupcron.report.plan import PlanReport

Pair = tuple[str | None, str | None]


class PairRows:
    """The rows being built: each plan's template (its facts and runs) and its rows by pair."""

    def __init__(self, plans: dict[str, PlanReport]) -> None:
        self.plans = plans
        self._rows: dict[str, dict[Pair, PlanReport]] = {name: {} for name in plans}

    def of(self, name: str, input_mint: str | None, output_mint: str | None) -> PlanReport:
        """The row of this plan (one in the report) and pair, made on first use; no
        pair known: the plan's current pair."""
        plan = self.plans[name]
        pair = (input_mint, output_mint)
        if input_mint is None and output_mint is None:
            pair = (plan.input_mint, plan.output_mint)
        rows = self._rows[name]
        row = rows.get(pair)
        if row is None:
            row = rows[pair] = replace(
                plan, input_mint=pair[0], output_mint=pair[1], fills=[], fees={}
            )
        return row

    def known(
        self, name: str, input_mint: str | None, output_mint: str | None
    ) -> PlanReport | None:
        """The row of this pair if the plan has one, else its main row (`main`)."""
        rows = self._rows.get(name)
        if rows is None:
            return None
        found = rows.get((input_mint, output_mint))
        return found if found is not None else self.main(name)

    def main(self, name: str) -> PlanReport | None:
        """The row of the plan's current pair, else its first row, else a new row of
        its current pair."""
        plan, rows = self.plans.get(name), self._rows.get(name)
        if plan is None or rows is None:
            return None
        current = rows.get((plan.input_mint, plan.output_mint))
        if current is not None:
            return current
        return next(iter(rows.values()), None) or self.of(name, None, None)

    def rows(self) -> list[PlanReport]:
        """By plan name; a plan's current pair first, then the others in the order
        they first traded; a plan without any row as its template (no figures)."""
        out: list[PlanReport] = []
        for name, plan in self.plans.items():
            rows = self._rows[name]
            if not rows:
                out.append(plan)
                continue
            current = (plan.input_mint, plan.output_mint)
            ordered = sorted(rows.items(), key=lambda item: item[0] != current)  # stable
            for _, row in ordered:
                row.pairs = len(rows)
                out.append(row)
        return out
