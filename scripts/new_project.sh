#!/usr/bin/env bash
# Starts a new dbt project from this template without the TPC-H example: `make new-project DEST=../my_lakehouse`.
# It copies the repository's files except the example (its TPC-H sources, models, seed, snapshot and data tests),
# the tests that build it or this script, and the benchmarks, then starts a git repository there. Kept: the macros, the
# plugin, profiles, the changelog example (models/staging/cdc, a datagen source: no data needed), CI, sqlfluff
# and pre-commit settings, the unit and integration tests of every feature, and integration_tests/.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-}
fail() { printf 'lakeplan new-project: %s\n' "$*" >&2; exit 1; }
[ -n "$dest" ] || fail "name the new project's directory: make new-project DEST=../my_lakehouse"
[ ! -e "$dest" ] || fail "$dest already exists; name a new directory."

EXAMPLE='^(models/staging/tpch/|models/intermediate/|models/marts/|seeds/|snapshots/customer_segments_snapshot\.sql|tests/singular/customer_360_|tests/integration/(test_example_pipeline|test_bench_smoke|test_cluster|test_new_project)\.py|bench/|scripts/tpch_data\.sh|scripts/new_project\.sh)'

mkdir -p "$dest"
# The files git tracks, as they are in the working tree: an untracked file stays behind (a dbt run's artifacts under
# a --target-path of its own were copied too, in a new user's trial); `git add` a new file to bring it.
(cd "$repo" && git ls-files --cached | grep -Ev "$EXAMPLE" |
  while read -r file; do [ -f "$file" ] && printf '%s\n' "$file"; done | tar -cf - -T -) | tar -xf - -C "$dest"
mkdir -p "$dest/seeds" "$dest/snapshots"
# dbt warns on every command about a config path that applies to nothing: the example's `marts` folder, and seeds and
# snapshots while there are none. Their Iceberg setting is kept as a comment to restore with the first of them.
sed -i -e '/^    marts:$/,/^      +materialized: table$/d' -e '/^seeds:$/,$d' "$dest/dbt_project.yml"
cat >> "$dest/dbt_project.yml" <<'SEEDS'
# With your first seed or snapshot, add its Iceberg setting (without it a seed becomes a Hive serde table and the
# second `dbt seed` fails; dbt-spark refuses a snapshot that is not Iceberg). Not set before: dbt would warn, on
# every command, that the path applies to nothing.
# seeds:
#   lakeplan:
#     +file_format: iceberg
# snapshots:
#   lakeplan:
#     +file_format: iceberg
SEEDS
# The template's README stays (features, settings, docs), under a note on what this project does not have.
readme=$(cat "$dest/README.md")
cat > "$dest/README.md" <<'NOTE'
> **Started from the lakeplan template (`make new-project`), without its TPC-H example.** `make run` builds the
> models in `models/` (at first only the changelog example in `models/staging/cdc/`), `make check` runs the tests
> and the linter. Where this README names TPC-H, `customer_360`, `make bench` or `bench/`, it describes the
> template's example, which is not here. Add your own models to `models/`; `docs/` explains each feature.

NOTE
printf '%s\n' "$readme" >> "$dest/README.md"
git -C "$dest" init -q
printf 'lakeplan new-project: %s is ready (no TPC-H example); cd there and run `make run` or `make test`.\n' "$dest"
