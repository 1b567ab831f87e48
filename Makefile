# jupcron: `make demo`, `make test`, `make bench`, `make lint`, `make chaos`.
# Everything runs from .venv, made with the machine's own python3.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint chaos postgres-tools chromium systemd-tools systemd-test clean

# Python's bytecode cache (__pycache__/, git-ignored) even where the environment turns it
# off: every daemon a test, the demo or a benchmark starts would compile the package again
# (~0.3 s of CPU each), and every test worker would rewrite the asserts of all 400 test
# modules again (~15 s of CPU each)
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $(STAMP)

# the demo's folder (its keypair, database, logs and chart) stays in the clone, a new
# one each time: .venv/ is git-ignored and `make clean` removes it (`jupcron demo`
# alone makes a temp folder)
DEMO_DIR = $(VENV)/demo/$(shell date -u +%Y%m%dT%H%M%SZ)

demo: $(STAMP)
	$(BIN)/jupcron demo --dir $(DEMO_DIR)

# the PostgreSQL server programs (initdb, pg_ctl) for the test cluster
postgres-tools:
	@bash tests/ensure-postgres.sh

# Debian's chromium for the status page's browser tests (tests/browser)
chromium:
	@bash tests/ensure-chromium.sh

# systemd for tests/system (Debian's package when missing); without it that suite skips
systemd-tools:
	@bash tests/ensure-systemd.sh --optional

# Two suites side by side (measured on a 2-core machine: 558 s + 193 s one after the
# other with two workers; side by side, 465 s with three, 397 s with four, where the
# machine was saturated and timing-bound tests began to fail):
# - all but tests/system on four pytest-xdist workers. Most tests wait (on a daemon, a
#   PostgreSQL cluster, the real clock): with three, the suite used 1.1 cores of 2.
#   --dist loadscope: a worker takes a whole module (its fixtures set up once), the
#   longest first (tests/support/order.py, tests/durations.json): 493 s where the order
#   as written took 595 s, its slowest modules left to one worker at the end. On a
#   slower hour of the same machine: 563 s with three workers, 510 s with four. With the
#   bytecode cache on and the suite collected once first: 438-444 s where it was 516 s,
#   and a clean clone's whole `.ci/run` 8 min 47 s where it was 9 min 5 s to 10 min 10 s.
# - tests/system alone in its process: it boots one machine and runs its checks in order,
#   mostly waiting on systemd and pip.
# -O keeps each suite's output whole; --durations: CI's log names the slowest tests.
test: $(STAMP) postgres-tools chromium systemd-tools
	@$(MAKE) --no-print-directory -k -j2 -O suite-main suite-system

.PHONY: suite-main suite-system
DURATIONS ?= 25  # `make test DURATIONS=0`: every test's, to measure tests/durations.json again
MAIN_SUITE := -m "not chaos" tests/unit tests/integration tests/e2e tests/browser
# collected once first, which writes the test modules as pytest rewrites them to
# __pycache__ for the four workers to read: on a clean clone, 20 s for all four where each
# rewriting them itself took 20 s of CPU
suite-main:
	@$(BIN)/python -m pytest -q --collect-only -p no:cacheprovider $(MAIN_SUITE) > /dev/null || true
	$(BIN)/python -m pytest -q -n 4 --dist loadscope --no-loadscope-reorder --durations=$(DURATIONS) $(MAIN_SUITE)

suite-system:
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
# then the tests marked `chaos` (daemons killed, frozen or cut off), left out of make test
chaos: $(STAMP) postgres-tools
	$(BIN)/python -m tests.chaos.run
	$(BIN)/python -m tests.chaos.shards
	$(BIN)/python -m pytest -q -p no:cacheprovider -m chaos tests/e2e

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
	find daemon migrations tests -name __pycache__ -type d -prune -exec rm -rf {} +
