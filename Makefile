# lakeplan: `make run` runs the example pipeline; `make check` runs every test and the linter: `make test` (the
# everyday suite and the linter) and `make test-team` (the shared catalog's multi-process tests).
# They set everything up on first use (scripts/setup.sh); later runs skip what is installed.
SHELL := /bin/bash
SF ?= 0.01

# Every recipe runs in the activated venv, the same environment as `source .venv/bin/activate` gives a shell
# (scripts/setup.sh writes it); only the TPC-H scale factor is chosen here.
ACTIVATE := source $(CURDIR)/.venv/bin/activate &&
export LAKEPLAN_TPCH_DIR := $(CURDIR)/.lakeplan/data/tpch/sf$(SF)

.PHONY: setup data run dbt check test test-team lint bench clean catalog-up catalog-down cluster-up cluster-down \
  new-project explain-png

# The TPC-H example's data; a project started with `make new-project` has no example and needs none.
TPCH_DATA := $(if $(wildcard models/staging/tpch),scripts/tpch_data.sh,true)

# Installs everything and generates the example's data at SF 0.01 (what an activated shell reads).
setup:
	@scripts/setup.sh
	@$(ACTIVATE) $(TPCH_DATA) 0.01 "$$LAKEPLAN_HOME/data/tpch/sf0.01"

data: setup
	@$(ACTIVATE) $(TPCH_DATA) "$(SF)" "$(LAKEPLAN_TPCH_DIR)"

run: data
	$(ACTIVATE) dbt build

# Any dbt command in lakeplan's environment: make dbt ARGS='run --select dim_customer'
dbt: data
	$(ACTIVATE) dbt $(ARGS)

# Every test, in two stages: the everyday suite, then the shared catalog's multi-process tests (docs/testing.md).
check:
	$(MAKE) test
	$(MAKE) test-team

# The everyday suite: pytest but the `team_catalog` tests (`make test-team`'s, minutes a module), then what a user
# types in a fresh shell with nothing but PATH and HOME set (the README's promise), then the durations record's
# summary (target/test_durations.json: the total and the slowest tests). It runs on two pytest-xdist workers (both
# cores); a selection (PYTEST_ARGS, any tests, team_catalog's too) runs in this process, without the workers' start
# and without the fresh-shell tail, so one test runs alone in seconds.
PYTEST_WORKERS ?= $(if $(PYTEST_ARGS),0,2)
test: data
	@mkdir -p target && date +%s > target/.test_started
	$(ACTIVATE) pytest -n $(PYTEST_WORKERS) $(or $(PYTEST_ARGS),-m "not team_catalog")
	$(if $(PYTEST_ARGS),,env -i PATH="$(PATH)" HOME="$(HOME)" bash -c 'source .venv/bin/activate && \
	  dbt build && dbt show --inline "select count(*) as snapshots from lakeplan.customer_order_status.snapshots" && \
	  sqlfluff lint models macros tests/singular')
	@$(ACTIVATE) python -m tests.durations --since $$(cat target/.test_started)

# The shared catalog's multi-process tests (`-m team_catalog`: each starts several JVMs of its own and mostly waits on
# them, so two modules at once on two workers), on the shared catalog started first; their record is
# target/test_durations_team.json. The catalog stays up afterwards (`make catalog-down`; .ci/run stops it).
test-team: catalog-up
	@mkdir -p target && date +%s > target/.test_team_started
	$(ACTIVATE) pytest -n 2 -m team_catalog
	@$(ACTIVATE) python -m tests.durations --since $$(cat target/.test_team_started)

# docs/explain.png: the page of lakeplan explain of the example (after `make run`), in Debian's chromium
explain-png: setup
	$(ACTIVATE) lakeplan explain --no-progress >/dev/null && \
	  python scripts/explain_screenshot.py target/lakeplan_explain.html docs/explain.png

lint: setup
	$(ACTIVATE) sqlfluff lint models macros tests/singular

# Benchmarks (about five hours on 2 cores at the default sizes; small_updates alone about two): figures, summaries and
# charts into bench/results/. docs/benchmarks.md names the exact command behind each recorded table.
# One of them, with its own sizes: make bench BENCH=prekeyed BENCH_ARGS='--rows 2000000 --repeats 1'
BENCH ?= sink_reuse changelog_distribution prekeyed plugin_overhead tpch_e2e explain small_updates
bench: data
	@$(ACTIVATE) for name in $(BENCH); do echo "== bench/$$name.py"; python bench/$$name.py $(BENCH_ARGS) || exit 1; done

# The shared catalog (targets `team` and `cluster`): a Hive metastore in PostgreSQL that many processes use at once,
# data in .lakeplan/catalog/ (docs/team.md). Idempotent; catalog-down stops PostgreSQL and keeps the data.
catalog-up: setup
	@scripts/catalog.sh up

catalog-down:
	@scripts/catalog.sh down

# A Spark standalone master, two workers and the Thrift Server on 127.0.0.1 (target `cluster`, on the shared catalog).
cluster-up: data catalog-up
	@$(ACTIVATE) scripts/cluster.sh up

cluster-down:
	@$(ACTIVATE) scripts/cluster.sh down

# A new project from this template without the TPC-H example: make new-project DEST=../my_lakehouse
new-project:
	@scripts/new_project.sh "$(DEST)"

# Removes the warehouse, metastores (the shared catalog's too, after stopping it) and generated data; keeps .venv.
clean: catalog-down
	rm -rf .lakeplan target logs
