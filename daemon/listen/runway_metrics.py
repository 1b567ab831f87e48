"""The runway gauges of /metrics, per wallet and input mint (labels ``wallet``,
``mint``, ``symbol``; a series is replaced when the symbol becomes known):

* ``jupcron_wallet_balance`` — the balance in token units (the UI amount: base units
  scaled by the mint's decimals), absent while unknown, and absent for a mint whose
  decimals are not known (its base units are no token units: never a number in the
  wrong unit; ``jupcron status`` gives the base units);
* ``jupcron_runway_runs`` — upcoming runs the balance covers, absent while unknown;
* ``jupcron_runway_upcoming_runs`` — runs in the horizon;
* ``jupcron_runway_low`` — 1 while under ``runway.alert_below``;
* ``jupcron_balance_known`` — 1 when the last read answered, 0 when it did not.

An unknown balance is never shown as 0: its balance and runs series go, and
``balance_known`` says 0.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Gauge

from jupcron.scheduling.runway import ui

NAMESPACE = "jupcron"
LABELS = ("wallet", "mint", "symbol")


class RunwayGauges:
    def __init__(self, registry: CollectorRegistry) -> None:
        def gauge(name: str, text: str) -> Gauge:
            return Gauge(name, text, LABELS, namespace=NAMESPACE, registry=registry)

        self.balance = gauge(
            "wallet_balance",
            "Wallet balance of an input mint its plans "
            "spend, in token units (UI amount); absent while unknown, or while the "
            "mint's decimals are unknown.",
        )
        self.runs = gauge(
            "runway_runs",
            "Upcoming runs the wallet's balance of the mint covers; absent while unknown.",
        )
        self.upcoming = gauge("runway_upcoming_runs", "Runs of the mint in the runway horizon.")
        self.low = gauge("runway_low", "1 while the runway is under runway.alert_below.")
        self.known = gauge("balance_known", "1 when the last balance read answered, else 0.")
        self._lock = threading.Lock()
        self._labels: dict[tuple[str, str], tuple[str, str, str]] = {}

    def _all(self) -> tuple[Gauge, ...]:
        return (self.balance, self.runs, self.upcoming, self.low, self.known)

    def set(self, wallet: str, mint: str, symbol: str | None, *, balance: int | None,
            decimals: int | None, runs: int | None, upcoming: int, low: bool) -> None:  # fmt: skip
        labels = (wallet, mint, symbol or "")
        with self._lock:
            old = self._labels.get((wallet, mint))
            if old is not None and old != labels:
                self._remove(old)
            self._labels[(wallet, mint)] = labels
            self.upcoming.labels(*labels).set(upcoming)
            self.low.labels(*labels).set(1 if low else 0)
            known = balance is not None and runs is not None
            self.known.labels(*labels).set(1 if known else 0)
            if balance is not None and runs is not None:
                self.runs.labels(*labels).set(runs)
            else:
                with contextlib.suppress(KeyError):
                    self.runs.remove(*labels)
            if balance is not None and runs is not None and decimals is not None:
                self.balance.labels(*labels).set(float(ui(balance, decimals)))
            else:  # unknown, or in base units only: no token units to give
                with contextlib.suppress(KeyError):
                    self.balance.remove(*labels)

    def keep_only(self, keys: Iterable[tuple[str, str]]) -> None:
        """Drop the series of every (wallet, mint) not in `keys`."""
        wanted = set(keys)
        with self._lock:
            for key in [k for k in self._labels if k not in wanted]:
                self._remove(self._labels.pop(key))

    def _remove(self, labels: tuple[str, str, str]) -> None:
        for gauge in self._all():
            with contextlib.suppress(KeyError):
                gauge.remove(*labels)
