# lakeplan: `make run` runs the example pipeline, `make test` runs every test and the linter.
# Both set everything up on first use (scripts/setup.sh); later runs skip what is installed.
SHELL := /bin/bash
SF ?= 0.01

VENV := $(CURDIR)/.venv
export LAKEPLAN_HOME := $(CURDIR)/.lakeplan
export SPARK_CONF_DIR := $(LAKEPLAN_HOME)/spark-conf
export LAKEPLAN_TPCH_DIR := $(LAKEPLAN_HOME)/data/tpch/sf$(SF)
export DBT_PROFILES_DIR := $(CURDIR)/profiles
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
export DO_NOT_TRACK := 1
export PATH := $(VENV)/bin:$(PATH)

.PHONY: setup data run dbt test lint bench clean cluster-up cluster-down

setup:
	@scripts/setup.sh

data: setup
	@scripts/tpch_data.sh "$(SF)" "$(LAKEPLAN_TPCH_DIR)"

run: data
	dbt build

# Any dbt command in lakeplan's environment: make dbt ARGS='run --select dim_customer'
dbt: data
	dbt $(ARGS)

test: data
	pytest $(PYTEST_ARGS)
	dbt build
	sqlfluff lint models macros tests/singular

lint: setup
	sqlfluff lint models macros tests/singular

# Benchmarks (about three hours on 2 cores at the default sizes and 3 repeats): figures, summaries and
# charts into bench/results/. README names the exact command behind each recorded table.
# One of them, with its own sizes: make bench BENCH=prekeyed BENCH_ARGS='--rows 2000000 --repeats 1'
BENCH ?= sink_reuse changelog_distribution prekeyed plugin_overhead tpch_e2e
bench: data
	@for name in $(BENCH); do echo "== bench/$$name.py"; python bench/$$name.py $(BENCH_ARGS) || exit 1; done

# A Spark standalone master, two workers and the Thrift Server on 127.0.0.1 (target `cluster`).
cluster-up: data
	@scripts/cluster.sh up

cluster-down:
	@scripts/cluster.sh down

# Removes the warehouse, metastore and generated data; keeps .venv.
clean:
	rm -rf .lakeplan target logs
