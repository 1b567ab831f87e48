# jupcron: `make demo`, `make test`, `make bench`, `make lint`, `make chaos`.
# Everything runs from .venv, made with the machine's own python3.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint chaos postgres-tools chromium systemd-tools systemd-test clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/jupcron demo

# the PostgreSQL server programs (initdb, pg_ctl) for the test cluster
postgres-tools:
	@bash tests/ensure-postgres.sh

# Debian's chromium for the status page's browser tests (tests/browser)
chromium:
	@bash tests/ensure-chromium.sh

# systemd for tests/system (Debian's package when missing); without it that suite skips
systemd-tools:
	@bash tests/ensure-systemd.sh --optional

# two workers for all but tests/system, which then runs alone: it boots one machine and
# runs its checks in order (and its watchdog and journal checks want a quiet machine).
# Order matters on 2 cores: e2e tests run a daemon, an emulator and CLI processes each, so
# two of them at once compete for the CPU; in this order they meet unit tests instead
# (e2e first measured 807 s against 592 s). --durations: CI's log names the slowest tests.
# --dist worksteal: a worker done early takes tests queued for the other (the long e2e
# tests no longer leave one worker idle at the end).
test: $(STAMP) postgres-tools chromium systemd-tools
	$(BIN)/python -m pytest -q -n 2 --dist worksteal --durations=25 tests/unit tests/integration tests/e2e tests/browser
	$(BIN)/python -m pytest -q --durations=10 tests/system

# jupcron.service under a real systemd booted in namespaces of its own, one line per check;
# here a machine that cannot boot it fails instead of skipping
systemd-test: $(STAMP)
	@bash tests/ensure-systemd.sh
	JUPCRON_SYSTEMD_TEST=required $(BIN)/python -m pytest -v -p no:cacheprovider tests/system

lint: $(STAMP)
	$(BIN)/ruff check daemon tests migrations setup.py
	$(BIN)/ruff format --check daemon tests migrations setup.py
	$(BIN)/mypy

bench: $(STAMP) postgres-tools
	$(BIN)/python -m pytest -q -s tests/bench -p no:cacheprovider

# bounded: CHAOS_SECONDS (default 280) in all, SQLite then PostgreSQL; CHAOS_SEED=N replays a run
chaos: $(STAMP) postgres-tools
	$(BIN)/python -m tests.chaos.run
	$(BIN)/python -m tests.chaos.shards

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
